"""Two processes and one store: the second waits for the lock or gets a clear error, never a torn file.

DuckDB lets one process at a time open a file for writing. These tests run real processes against a
real file: a writer that holds the store while a CLI command tries to import into it (a clear error
naming the file and the holder's PID, the file unchanged), and a second writer started while the
first holds the file (it is refused at once, waits for the release, then both rows land and the file opens).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nomad_lab.store import Store, StoreLockedError
from tests.support.dumps import GOOD_DUMP

HOLD = """
import sys
from nomad_lab.store import Store
with Store(sys.argv[1]):
    print("holding", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""

WRITE = """
import sys
from nomad_lab.store import Store, StoreLockedError, Verdict
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    Store(path, lock_wait=0).close()
    print("free", flush=True)
except StoreLockedError:
    print("held", flush=True)  # the other writer has it: the open below must wait for its release
with Store(path, lock_wait=60) as store:
    for i in range(count):
        store.put_verdict(name, f"input-{i}", Verdict(i % 2 == 0, True, None, 1.0, 10))
    if sys.argv[4:] == ["hold"]:
        print("holding", flush=True)
        sys.stdin.read()  # keep the lock until the test closes our stdin
"""


def python(code: str, *args: str, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *args], text=True, **kwargs)  # type: ignore[call-overload]


def test_a_held_store_gives_a_clear_error_naming_the_file_and_the_holder(tmp_path: Path) -> None:
    store, dump = tmp_path / "ws.duckdb", tmp_path / "dump.json"
    Store(store).close()
    dump.write_text(json.dumps(GOOD_DUMP))
    holder = python(HOLD, str(store), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == "holding"
        before = hashlib.sha256(store.read_bytes()).hexdigest()
        env = {**os.environ, "NOMAD_LAB_STORE_WAIT": "0.5"}
        command = [sys.executable, "-m", "nomad_lab.cli", "store", "import", str(dump), "--store", str(store)]
        refused = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        assert refused.stderr.startswith(f"nomad-lab: error: {store}: another nomad-lab process ")
        assert f"(PID {holder.pid}) holds this store" in refused.stderr
        assert "within 0.5 s" in refused.stderr
        with pytest.raises(StoreLockedError, match=f"PID {holder.pid}"):
            Store(store, read_only=True, lock_wait=0)  # readers are refused too, with the same error
        assert hashlib.sha256(store.read_bytes()).hexdigest() == before
    finally:
        holder.communicate("", timeout=30)  # release: the holder closes the store and exits
    assert holder.returncode == 0
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    with Store(store, read_only=True) as opened:
        assert opened.latest_run_id() is not None


def test_a_second_writer_waits_for_the_first_and_both_land(tmp_path: Path) -> None:
    """The second writer is refused while the first holds the store, waits, then writes: no row lost.

    The order is forced by the test (the first holds until told), not by timing, so a loaded machine
    cannot make it pass or fail by chance.
    """
    store = tmp_path / "ws.duckdb"
    Store(store).close()
    first = python(WRITE, str(store), "a", "150", "hold", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert first.stdout.readline().strip() == "free"
        assert first.stdout.readline().strip() == "holding"
        second = python(WRITE, str(store), "b", "150", stdout=subprocess.PIPE)
        assert second.stdout.readline().strip() == "held"  # really contended while the first held it
        assert second.poll() is None  # and cannot finish before the first lets go
    finally:
        first.communicate("", timeout=60)
    assert first.returncode == 0
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0 and out == ""
    with Store(store, read_only=True) as opened:
        rows = opened.con.execute("SELECT model, count(*) FROM judge_verdicts GROUP BY model ORDER BY model")
        assert rows.fetchall() == [("a", 150), ("b", 150)]
