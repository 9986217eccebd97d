"""Split ``<think>…</think>`` reasoning out of model output, streamed or not (SPEC §6).

Models that reason inline emit their thinking between literal tags; both transports must route it to
the thinking channel. Streams cut tags anywhere (``<thi`` + ``nk>``), so the splitter holds back any
suffix that could be the start of a tag. ``flush()`` returns what is still held to the current channel
at end of stream: the seed's earlier version dropped a dangling partial tag there, and an unclosed
``<think>`` sends the remainder to thinking.
"""

from __future__ import annotations

from dataclasses import dataclass

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"


@dataclass(frozen=True)
class Split:
    """Text resolved into the answer (``content``) and the reasoning (``thinking``) channels."""

    content: str = ""
    thinking: str = ""


def partial_tag_suffix(tag: str, text: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag`` (0 if none)."""
    for length in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:length]):
            return length
    return 0


class ThinkTagSplitter:
    """Incremental splitter: ``push`` each streamed piece, ``flush`` once at the end.

    Tags are exactly ``<think>`` and ``</think>`` (case-sensitive, no attributes); several think
    blocks per stream are supported and a stray ``</think>`` outside one is plain content.
    """

    def __init__(self) -> None:
        self.buffer = ""
        self.in_think = False

    def push(self, raw: str) -> Split:
        """Consume ``raw``; return the content and thinking that are now certain."""
        self.buffer += raw
        content: list[str] = []
        thinking: list[str] = []
        while self.buffer:
            tag = CLOSE_TAG if self.in_think else OPEN_TAG
            out = thinking if self.in_think else content
            at = self.buffer.find(tag)
            if at != -1:
                out.append(self.buffer[:at])
                self.buffer = self.buffer[at + len(tag) :]
                self.in_think = not self.in_think
                continue
            hold = partial_tag_suffix(tag, self.buffer)
            out.append(self.buffer[: len(self.buffer) - hold])
            self.buffer = self.buffer[len(self.buffer) - hold :]
            break
        return Split("".join(content), "".join(thinking))

    def flush(self) -> Split:
        """Release the held buffer to the current channel; the think state is kept."""
        held, self.buffer = self.buffer, ""
        return Split("", held) if self.in_think else Split(held, "")


def split_think_tags(raw: str) -> Split:
    """Split a complete text: ``push`` then ``flush``, concatenated."""
    splitter = ThinkTagSplitter()
    first, last = splitter.push(raw), splitter.flush()
    return Split(first.content + last.content, first.thinking + last.thinking)


def normalize_non_streamed(raw: str, native_thinking: str | None = None) -> Split:
    """A whole reply: inline tags split out, appended after any thinking the backend reported natively."""
    split = split_think_tags(raw or "")
    return Split(split.content, (native_thinking or "") + split.thinking)
