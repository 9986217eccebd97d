"""Rerank formula, floor and diversity (SPEC §2.3–2.5), with worked examples computed by hand."""

from __future__ import annotations

import math

import pytest

from nomad_lab.gate.keywords import (
    QUERY_EXPANSION_DICTIONARY,
    extract_keywords,
    ingest_keywords,
    preprocess_query,
    sanitize_text,
    truncate_to_tokens,
)
from nomad_lab.gate.reference_ranking import (
    Candidate,
    apply_relevance_floor,
    apply_source_diversity,
    rank_candidates,
    rerank,
    rerank_score,
)
from tests.support.paths import ROOT

TEXT = "Bring the water to a rolling boil for one minute, three at altitude."


def cand(s: float, text: str = TEXT, keywords: str = "", source: str = "a.md", **kw: object) -> Candidate:
    return Candidate(text=text, semantic_score=s, keywords=keywords, source=source, **kw)


def test_worked_example_keyword_and_direct_boosts() -> None:
    # query keywords: boil (in stored keywords), water (in text), long (nowhere) -> 2 of 3 match.
    # query terms longer than 3 chars, punctuation kept: "long", "boil", "water?" -> only "boil" is in text.
    s = 0.8
    got = rerank_score(cand(s, keywords="boil rolling"), ["boil", "water", "long"], "How long to boil water?")
    keyword = math.sqrt(2 / 3) * 0.10 * s  # 0.0653197...
    direct = math.sqrt(1 / 3) * 0.075 * s  # 0.0346410...
    assert got == pytest.approx(s + direct + keyword, abs=1e-12)
    assert got == pytest.approx(0.8999607, abs=1e-7)


def test_below_the_semantic_threshold_nothing_is_boosted() -> None:
    assert rerank_score(cand(0.3499), ["water", "boil"], "boil water") == 0.3499
    assert rerank_score(cand(0.35), ["water"], "x") > 0.35  # the gate is s < 0.35


def test_cap_at_one_is_applied_once_to_the_sum() -> None:
    # every boost fires fully: s * (1 + 0.075 + 0.10 + 0.10) = 1.275 * s
    c = cand(0.7, text="water boil", keywords="water boil", full_title="Water boil")
    assert rerank_score(c, ["water", "boil"], "water boil") == pytest.approx(0.7 * 1.275)  # 0.8925
    c8 = cand(0.8, text="water boil", keywords="water boil", full_title="Water boil")
    assert rerank_score(c8, ["water", "boil"], "water boil") == 1.0  # 1.02 capped


def test_heading_boost_uses_titles_and_keyword_count() -> None:
    s = 0.6
    c = cand(s, text="nothing relevant", section_title="Radio Repeaters", article_title="Offsets")
    # keyword hits: none in text/keywords; heading "radio repeaters offsets" holds "radio" -> 1 of 2 keywords.
    expected = s + math.sqrt(1 / 2) * 0.10 * s
    assert rerank_score(c, ["radio", "licence"], "licence") == pytest.approx(expected)


def test_direct_terms_come_from_the_unexpanded_query_without_punctuation_stripping() -> None:
    s = 0.5
    text = "boil water for one minute"
    # "water?" is not a substring of the text; "boil" is: 1 of 2 terms ("how" is too short).
    got = rerank_score(cand(s, text=text), [], "how boil water?")
    assert got == pytest.approx(s + math.sqrt(1 / 2) * 0.075 * s)
    # no query keywords: the overlap denominator is max(0, 1) and the keyword boost is 0.
    assert rerank_score(cand(s, text=text), [], "zzz") == s


def test_rerank_sorts_descending_and_is_stable() -> None:
    a, b, c = (
        cand(0.5, text="x", source="a"),
        cand(0.7, text="x", source="b"),
        cand(0.5, text="x", source="c"),
    )
    assert [r.source for r in rerank([a, b, c], [], "q")] == ["b", "a", "c"]


def test_floor() -> None:
    pool = [cand(0.2, score=s) for s in (0.8, 0.62, 0.6199)]
    assert [c.final for c in apply_relevance_floor(pool, 0.62).kept] == [0.8, 0.62]
    result = apply_relevance_floor(pool, 0.62)
    assert (result.candidates, result.below_floor) == (3, 1)
    for off in (0, -1, float("nan")):
        assert apply_relevance_floor(pool, off).kept == pool
        assert apply_relevance_floor(pool, off).below_floor == 0


def test_source_diversity_penalizes_repeats_then_resorts() -> None:
    chunks = [
        cand(0, source="A", score=0.9),
        cand(0, source="A", score=0.8),
        cand(0, source="B", score=0.75),
        cand(0, source="A", score=0.7),
    ]
    out = apply_source_diversity(chunks)
    assert [(c.source, round(c.final, 6)) for c in out] == [
        ("A", 0.9),
        ("B", 0.75),
        ("A", 0.68),
        ("A", round(0.7 * 0.85**2, 6)),
    ]
    # document_id wins over source, empty strings fall through (JS ||)
    keyed = [
        cand(0, source="x", document_id="D", score=0.9),
        cand(0, source="y", document_id="D", score=0.8),
        cand(0, source="", document_id="", score=0.7),
        cand(0, source=None, score=0.6),
    ]
    assert [round(c.final, 4) for c in apply_source_diversity(keyed)] == [0.9, 0.7, 0.68, 0.51]


def test_rank_candidates_floor_before_diversity_and_stages() -> None:
    dense = [
        cand(0.9, text="t", source="A"),
        cand(0.8, text="t", source="A"),
        cand(0.7, text="t", source="B"),
        cand(0.4, text="t", source="C"),
    ]
    result = rank_candidates(dense, [], "q", limit=2, min_final_score=0.7)
    # floor keeps 0.9, 0.8, 0.7; diversity makes A's second chunk 0.68, below the floor: not re-checked
    assert [round(c.final, 4) for c in result.chunks] == [0.9, 0.7]
    assert [round(c.final, 4) for c in result.stages.diversified] == [0.9, 0.7]
    assert [c.final for c in result.stages.dense] == [0.9, 0.8]
    assert [c.final for c in result.stages.reranked] == [0.9, 0.8]
    assert [c.final for c in result.stages.candidates] == [0.9, 0.8, 0.7, 0.4]  # whole pool, pre-floor
    assert (result.floor.candidates, result.floor.below_floor) == (4, 1)
    assert len(rank_candidates(dense, [], "q", limit=5, min_final_score=0.0).chunks) == 4


# ------------------------------------------------------------------------------------------ keywords


def test_expansion_dictionary_has_27_entries_and_expands_per_word() -> None:
    assert len(QUERY_EXPANSION_DICTIONARY) == 27
    assert preprocess_query("  What goes in a BOB? and an ifak, bob!  ") == (
        "What goes in a BOB? and an ifak, bob! bug out bag individual first aid kit bug out bag"
    )
    assert preprocess_query("plain question") == "plain question"


def test_extract_keywords_keeps_the_raw_token_stopword_quirk() -> None:
    # "what?" is not the stop word "what" (punctuation attached), so it survives as "what";
    # "What" alone is a stop word (tokens are lower-cased before the look-up).
    assert extract_keywords("What is boiling? what? Water water") == ["boiling", "what", "water"]
    # single-space split: a newline glues words together, as in the reference
    assert extract_keywords("boil\nwater for one minute") == ["boilwater", "one", "minute"]
    # JS \w is ASCII: accents are stripped, short words dropped
    assert extract_keywords("café au lait") == ["caf", "lait"]


def test_ingest_keywords_titles_first_then_text_deduped() -> None:
    assert ingest_keywords("water boiling water", ["Boiling Guide", None]) == "boiling guide water"


def test_sanitize_and_truncate() -> None:
    assert sanitize_text("\ufeff a\x00b\x07c\td\ne\rf\x7f\ud800 \n") == "abc\td\ne\rf"
    text = "word " * 10  # 50 chars = 25 estimated tokens
    assert truncate_to_tokens(text, 25) == text
    assert truncate_to_tokens(text, 10) == "word word word word"  # cut at 20, back to the space at 19
    assert truncate_to_tokens("x" * 30, 10) == "x" * 20  # no space in the final 20%: hard cut


def test_pure_modules_import_with_the_standard_library_alone() -> None:
    """Stored pools can be re-gated and re-scored where no numpy, torch or DuckDB is installed."""
    import subprocess
    import sys

    root = ROOT
    probe = (
        f"import sys; sys.path.insert(0, {str(root)!r}); before = set(sys.modules)\n"
        "for m in ('gate.reference_ranking', 'gate.keywords', 'eval.retrieval_metrics', 'core.jsfmt',\n"
        "          'data.golden_suites', 'data.corpus', 'eval.reports'):\n"
        "    __import__('nomad_lab.' + m)\n"
        "from nomad_lab.gate.reference_ranking import rank_candidates, Candidate\n"
        "rank_candidates([Candidate('water', 0.5)], ['water'], 'water')\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(m for m in new if m not in sys.stdlib_module_names and m != 'nomad_lab'))"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-I", "-c", probe], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
