"""Gating, the array half: rerank, keyword scoring, candidate pools, gates, sweeps and statistics.

numpy and scipy only, no I/O beyond reading a candidate dump: the gates run as array transforms over
stored pools, so a floor or a judge is swept without re-running retrieval.
"""
