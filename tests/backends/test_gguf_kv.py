"""KV accounting from real GGUF files (written with the ``gguf`` package) and the ``verbose`` re-query.

Three metadata-only files (a dense, a per-layer-array and an interval model) go through the GGUF
reader into ``kv_account``; a copy of SmolLM2 whose ``head_count_kv`` is a per-layer array is served
by the Ollama shim, which withholds long arrays unless ``verbose`` like Ollama, and ``OllamaBackend``
must ask again to see them.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from nomad_lab.backends.gguf_meta import GGUFFormatError, read_metadata
from nomad_lab.backends.models import smollm2_path
from nomad_lab.backends.ollama_native import OllamaBackend
from nomad_lab.core.context_window import kv_account, seed_kv_bytes_per_token
from nomad_lab.serve.process import ServerProcess, free_port, shim_command
from tests.support.gguf_files import with_per_layer_kv_heads, write_metadata_gguf

COMMON = {"block_count": 12, "context_length": 8192, "embedding_length": 1024, "attention.head_count": 16}


def test_dense_gguf_keeps_the_seed_formula(tmp_path: Path) -> None:
    path = write_metadata_gguf(tmp_path / "d.gguf", "llama", {**COMMON, "attention.head_count_kv": 4})
    info = read_metadata(path)
    assert info["llama.attention.head_count_kv"] == 4
    assert kv_account(info).bytes_per_token == seed_kv_bytes_per_token(info) == 2 * 12 * 4 * 64 * 2


def test_per_layer_array_gguf_charges_attention_layers_only(tmp_path: Path) -> None:
    heads = [0, 0, 4] * 4
    path = write_metadata_gguf(tmp_path / "h.gguf", "lfm2", {**COMMON, "attention.head_count_kv": heads})
    info = read_metadata(path)
    assert info["lfm2.attention.head_count_kv"] == heads
    account = kv_account(info)
    assert (account.method, account.kv_layers) == ("per-layer", 4)
    assert account.bytes_per_token == 4 * 4 * (64 + 64) * 2
    assert seed_kv_bytes_per_token(info) == 2 * 12 * 16 * 64 * 2  # every layer at head_count


def test_interval_gguf_charges_every_nth_layer(tmp_path: Path) -> None:
    values = {
        **COMMON,
        "attention.head_count_kv": 2,
        "attention.key_length": 256,
        "full_attention_interval": 4,
    }
    account = kv_account(read_metadata(write_metadata_gguf(tmp_path / "i.gguf", "qwen3next", values)))
    assert account.kv_layers == 3
    assert account.bytes_per_token == 3 * 2 * 512 * 2


def test_absurd_gguf_metadata_is_bounded_with_a_reason(tmp_path: Path) -> None:
    longer = write_metadata_gguf(tmp_path / "l.gguf", "x", {**COMMON, "attention.head_count_kv": [1] * 20})
    negative = write_metadata_gguf(tmp_path / "n.gguf", "x", {**COMMON, "attention.head_count_kv": [-1] * 12})
    assert kv_account(read_metadata(longer)).bytes_per_token == 12 * 1 * 128 * 2
    refused = kv_account(read_metadata(negative))
    assert refused.bytes_per_token == 12 * 16 * 128 * 2
    assert any("negative entry; refused" in note for note in refused.notes)


def test_a_truncated_or_foreign_file_is_one_clear_error(tmp_path: Path) -> None:
    good = write_metadata_gguf(tmp_path / "g.gguf", "llama", COMMON).read_bytes()
    (tmp_path / "cut.gguf").write_bytes(good[:40])
    (tmp_path / "txt.gguf").write_text("hello")
    with pytest.raises(GGUFFormatError, match=r"cut\.gguf: malformed GGUF metadata"):
        read_metadata(tmp_path / "cut.gguf")
    with pytest.raises(GGUFFormatError, match="not a GGUF file"):
        read_metadata(tmp_path / "txt.gguf")


@pytest.mark.slow
def test_shim_withholds_arrays_unless_verbose_and_the_backend_asks_again(tmp_path: Path) -> None:
    # SmolLM2-135M: 30 layers, 3 KV heads, here as an array (llama.cpp's llama graph aborts on a 0 entry,
    # so every layer keeps its heads: the point is the array's round trip, not the zeros).
    heads = [3] * 30
    model = with_per_layer_kv_heads(smollm2_path(), tmp_path / "smol-per-layer.gguf", heads)
    port = free_port()
    with ServerProcess(shim_command(str(model), port, num_ctx=512), host="127.0.0.1", port=port) as server:
        name = model.stem.lower()
        terse = httpx.post(f"{server.base_url}/api/show", json={"model": name}, timeout=60).json()
        verbose = httpx.post(f"{server.base_url}/api/show", json={"model": name, "verbose": True}).json()
        assert terse["model_info"]["llama.attention.head_count_kv"] == []
        assert verbose["model_info"]["llama.attention.head_count_kv"] == heads
        info = OllamaBackend(server.base_url, name, timeout=60).show().model_info
        shows = [
            r for r in httpx.get(f"{server.base_url}/_nomad/requests").json() if r["path"] == "/api/show"
        ]
    assert info["llama.attention.head_count_kv"] == heads
    assert [r["body"].get("verbose") for r in shows][-2:] == [None, True]
    account = kv_account(info)
    assert (account.method, account.kv_layers) == ("per-layer", 30)
    assert account.bytes_per_token == seed_kv_bytes_per_token({**info, "llama.attention.head_count_kv": 3})
