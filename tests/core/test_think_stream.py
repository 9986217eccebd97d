"""The think-tag splitter of SPEC §6: examples, flush, and invariance under any chunking."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nomad_lab.core.think_stream import (
    Split,
    ThinkTagSplitter,
    normalize_non_streamed,
    partial_tag_suffix,
    split_think_tags,
)


def test_partial_tag_suffix() -> None:
    assert partial_tag_suffix("<think>", "abc<thi") == 4
    assert partial_tag_suffix("<think>", "abc<think") == 6
    assert partial_tag_suffix("<think>", "abc") == 0
    assert partial_tag_suffix("</think>", "x</") == 2


def test_split_whole_text() -> None:
    assert split_think_tags("<think>plan</think>Answer") == Split("Answer", "plan")
    assert split_think_tags("a</think>b") == Split("a</think>b", "")
    assert split_think_tags("<think>one</think>A<think>two</think>B") == Split("AB", "onetwo")
    assert split_think_tags("<THINK>x</THINK>") == Split("<THINK>x</THINK>", "")


def test_partial_tag_is_held_then_released() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.push("Hello <thi") == Split("Hello ", "")
    assert splitter.push("nk>deep") == Split("", "deep")
    assert splitter.push("</th") == Split("", "")
    assert splitter.push("ink> done") == Split(" done", "")


def test_flush_returns_a_dangling_partial_tag_to_the_current_channel() -> None:
    splitter = ThinkTagSplitter()
    splitter.push("end <thi")
    assert splitter.flush() == Split("end <thi"[4:], "")
    splitter = ThinkTagSplitter()
    splitter.push("<think>unclosed </thin")
    assert splitter.flush() == Split("", "</thin")
    assert splitter.in_think  # flush keeps the state


def test_unclosed_think_sends_the_rest_to_thinking() -> None:
    assert split_think_tags("<think>still going") == Split("", "still going")


def test_native_thinking_comes_first() -> None:
    assert normalize_non_streamed("<think>b</think>c", "a") == Split("c", "ab")
    assert normalize_non_streamed("plain", None) == Split("plain", "")


PIECES = st.lists(
    st.sampled_from(["<think>", "</think>", "<", "</", "think", ">", "a", "b ", "\n", "<th", "ink>"])
)


@given(PIECES, st.data())
def test_any_chunking_gives_the_same_content_and_thinking(pieces: list[str], data: st.DataObject) -> None:
    raw = "".join(pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=12)))
    chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    splitter = ThinkTagSplitter()
    outs = [splitter.push(chunk) for chunk in chunks] + [splitter.flush()]
    streamed = Split("".join(o.content for o in outs), "".join(o.thinking for o in outs))
    assert streamed == split_think_tags(raw)
    assert len(streamed.content) + len(streamed.thinking) <= len(raw)
