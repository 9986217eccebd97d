"""Files in, records out: the eval corpus, the golden questions and the candidate-dump format."""
