"""Faults during a real ``eval retrieval --judge-model`` run: the judge fails open, counted, and the run
goes on; a run killed with SIGKILL resumes without recomputing a stored verdict, its DuckDB file intact.

The judge talks to a scripted Ollama on 127.0.0.1 (``tests.fake_ollama``) that answers HTTP 500,
garbage, nothing at all, or a verdict, and counts every chat request, so "not recomputed" is counted
on the server, not inferred. The kill test runs the CLI as a real subprocess and kills it while the
server holds its third judge call: the loop is sequential and commits each verdict before the next
call, so exactly two verdicts must have survived; the rerun is the same CLI called in the test's process
(a process loads the embedder once, and the test's process may hold it already).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.serve.process import free_port
from nomad_lab.store import Store
from tests.support.fake_ollama import CHAT_PATHS, FakeServer, ollama_reply
from tests.support.paths import RETRIEVAL_FIXTURES as FIXTURES

pytestmark = pytest.mark.slow  # the real MiniLM embedder retrieves the fixture suites

CORPUS, GOLDENS = FIXTURES / "corpus", FIXTURES / "goldens"
VERDICT = ollama_reply('{"on_topic": false}')
ABSURD_SHOW = json.dumps(
    {"model_info": {"general.architecture": "llama", "llama.context_length": -1}, "capabilities": 7}
)


def argv(spec: str, store: Path, report: Path) -> list[str]:
    return [
        "eval", "retrieval", "--corpus", str(CORPUS), "--goldens", str(GOLDENS),
        "--suite", "core,off_topic", "--floor", "0", "--judge-model", spec,
        "--store", str(store), "--report", str(report), "--no-progress",
    ]  # fmt: skip


def judge_stats(report_dir: Path) -> dict:
    (report,) = report_dir.glob("retrieval-*.json")
    return json.loads(report.read_text())["judge"]


class Script:
    """Chat replies by request number (1-based); ``hang_at`` blocks that request until released."""

    def __init__(self) -> None:
        self.chats = 0
        self.plan: dict[int, str] = {}
        self.hang_at: int | None = None
        self.hanging = threading.Event()
        self.release: threading.Event | None = None  # the server's: set when it shuts down
        self.lock = threading.Lock()

    def __call__(self, path: str) -> tuple[int, str, str]:
        if path == "/api/show":
            return 200, "application/json", ABSURD_SHOW
        if path not in CHAT_PATHS:
            return 200, "application/json", json.dumps({"models": []})
        with self.lock:
            self.chats += 1
            number = self.chats
        if number == self.hang_at or self.plan.get(number) == "hang":
            self.hanging.set()
            assert self.release is not None
            self.release.wait(30)
            return 200, "application/json", "{}"
        fault = self.plan.get(number)
        if fault == "500":
            return 500, "application/json", '{"error": "model runner crashed"}'
        if fault == "garbage":
            return 200, "text/html", "<html>502 Bad Gateway</html>"
        return VERDICT(path)


def test_a_faulty_judge_fails_open_counted_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = Script()
    script.plan = {1: "500", 2: "garbage", 3: "hang"}
    with FakeServer(script) as server:
        script.release = server.release
        spec = f"ollama://127.0.0.1:{server.port}/m?timeout=0.5"
        assert main(argv(spec, tmp_path / "ws.duckdb", tmp_path / "faulty")) == 0
    stats = judge_stats(tmp_path / "faulty")
    assert stats["calls"] == script.chats >= 5  # every non-empty case was judged, none skipped
    assert stats["failures"] == 3
    assert stats["reasons"] == {"http-500": 1, "bad-response": 1, "timeout": 1}
    assert stats["rejected"] > 0  # the healthy calls after the faults still decided
    assert "3 failed open" in capsys.readouterr().out

    refused = f"ollama://127.0.0.1:{free_port()}/m?timeout=2"  # nothing listens there
    assert main(argv(refused, tmp_path / "ws.duckdb", tmp_path / "refused")) == 0
    stats = judge_stats(tmp_path / "refused")
    assert stats["failures"] == stats["calls"] > 0
    assert stats["reasons"] == {"connection-refused": stats["calls"]}
    with Store(tmp_path / "ws.duckdb", read_only=True) as store:
        assert store.con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2  # both runs stored


def _count(store: Path, table: str) -> int:
    with Store(store, read_only=True) as opened:
        return opened.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_a_run_killed_midway_resumes_without_recomputing_stored_verdicts(tmp_path: Path) -> None:
    store, env = tmp_path / "ws.duckdb", {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    script = Script()
    script.hang_at = 3
    with FakeServer(script) as server:
        script.release = server.release
        spec = f"ollama://127.0.0.1:{server.port}/m?timeout=60"
        command = [sys.executable, "-m", "nomad_lab.cli", *argv(spec, store, tmp_path / "first")]
        log = (tmp_path / "first.log").open("w")
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            assert script.hanging.wait(180), (tmp_path / "first.log").read_text()
            os.kill(proc.pid, signal.SIGKILL)  # mid-run: two verdicts stored, the third in flight
            assert proc.wait(30) == -signal.SIGKILL
        finally:
            if proc.poll() is None:
                proc.kill()
            log.close()
        assert _count(store, "judge_verdicts") == 2 and _count(store, "runs") == 0

        script.hang_at = None
        before = script.chats
        assert main(argv(spec, store, tmp_path / "rerun")) == 0  # here: only the killed run needs a process
        recomputed = script.chats - before
    stats = judge_stats(tmp_path / "rerun")
    assert stats["cacheHits"] == 2 and stats["failures"] == 0
    assert recomputed == stats["calls"] - 2  # the two stored verdicts were not asked again
    assert _count(store, "judge_verdicts") == stats["calls"] and _count(store, "runs") == 1
