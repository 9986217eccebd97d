"""Token log-probabilities from llama.cpp's raw logits, for the embedded backend and the Ollama shim.

Why raw logits: llama-cpp-python returns ``logprobs`` only from a model loaded with ``logits_all`` (which
computes logits for every prompt position and makes a judge call 2-3x slower). The judge needs the
distribution at a handful of generated positions, which the sampler sees anyway: a logits processor
that only records them costs one vocabulary-sized copy per generated token.
"""

from __future__ import annotations

from typing import Any

from nomad_lab.core.verdict_confidence import TokenChoice, word_of

ON_TOPIC_PREFIX = '{"on_topic":'
"""What the judge grammar forces before the verdict (a space may also follow ``{``)."""

_WORD_IDS: dict[str, dict[str, list[int]]] = {}


def word_ids(llama: Any) -> dict[str, list[int]]:
    """Token ids of every variant of "true" and "false" in this model's vocabulary (memoized per file)."""
    key = str(llama.model_path)
    if key not in _WORD_IDS:
        found: dict[str, list[int]] = {"true": [], "false": []}
        for token_id in range(llama.n_vocab()):
            word = word_of(llama.detokenize([token_id]).decode("utf-8", "replace"))
            if word is not None:
                found[word].append(token_id)
        _WORD_IDS[key] = found
    return _WORD_IDS[key]


def word_masses(llama: Any, logits: Any) -> dict[str, float]:
    """Probability of each word, summed over its token variants, under the softmax of ``logits``."""
    import numpy as np  # heavy

    shifted = logits - logits.max()
    log_z = float(np.log(np.exp(shifted).sum()))
    return {word: float(np.exp(shifted[ids] - log_z).sum()) for word, ids in word_ids(llama).items()}


class LogitsRecorder:
    """A llama.cpp logits processor that keeps the raw logits of every sampling step (it changes none).

    Raw means before the repeat penalty and the grammar, which is the model's own preference; the
    grammar only decides which token is then taken. A step's logits are copied (one vocabulary of
    float32 per generated token, at most ``num_predict`` of them).
    """

    def __init__(self) -> None:
        self.steps: list[Any] = []

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import numpy as np  # heavy

        self.steps.append(np.array(scores, dtype=np.float64))
        return scores

    def choices(self, llama: Any, prompt_len: int, top: int) -> tuple[TokenChoice, ...]:
        """Each evaluated generated token with its log-probability and ``top`` alternatives."""
        import numpy as np  # heavy

        generated = llama.input_ids[prompt_len : llama.n_tokens].tolist()
        out = []
        for token_id, logits in zip(generated, self.steps, strict=False):
            shifted = logits - logits.max()
            logprobs = shifted - np.log(np.exp(shifted).sum())
            best = np.argpartition(-logprobs, top)[:top] if 0 < top < logprobs.size else np.arange(0)
            best = best[np.argsort(-logprobs[best])]
            piece = llama.detokenize([token_id]).decode("utf-8", "replace")
            alternatives = tuple(
                (llama.detokenize([int(i)]).decode("utf-8", "replace"), float(logprobs[i])) for i in best
            )
            out.append(TokenChoice(piece, float(logprobs[token_id]), alternatives))
        return tuple(out)
