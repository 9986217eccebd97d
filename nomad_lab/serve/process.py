"""Run a model server as a subprocess that is answering on enter and gone on exit (tests, notebooks).

Why apart from the app: the tests and benchmarks start servers (this shim, llama.cpp's server) without
importing FastAPI or the model; :func:`shim_command` is the argv that runs ``serve.ollama_server``.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from typing import Self

import httpx

from nomad_lab.backends.llama_models import DEFAULT_N_CTX

__all__ = ["ServerProcess", "free_port", "shim_command", "stop_process"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """A model server subprocess that is answering on enter and gone (waited for) on exit.

    Used by the tests and usable from notebooks. llama.cpp servers take seconds to exit after SIGTERM,
    so exit waits for the process instead of assuming it is gone; the port is not reused at once.
    """

    def __init__(
        self, argv: list[str], *, host: str, port: int, ready_path: str = "/", ready_timeout: float = 90.0
    ) -> None:
        self.argv, self.host, self.port = argv, host, port
        self.ready_path, self.ready_timeout = ready_path, ready_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives until __exit__

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def log_tail(self, limit: int = 4000) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-limit:]

    def __enter__(self) -> Self:
        self.process = subprocess.Popen(self.argv, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(self.base_url + self.ready_path, timeout=2).status_code < 500:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"server not ready after {self.ready_timeout}s:\n{self.log_tail()}")

    def stop(self, grace: float = 20.0) -> None:
        if self.process is not None:
            stop_process(self.process, grace)

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._log.close()


def stop_process(process: subprocess.Popen, grace: float = 20.0) -> None:
    """Ask ``process`` to stop, wait up to ``grace`` seconds, then kill it; nothing if it has exited."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=grace)


def shim_command(
    model: str, port: int, *, host: str = "127.0.0.1", num_ctx: int = DEFAULT_N_CTX, name: str | None = None
) -> list[str]:
    """argv that runs this server with the current interpreter."""
    argv = [
        sys.executable,
        "-m",
        "nomad_lab.serve.ollama_server",
        "--model",
        model,
        "--host",
        host,
        "--port",
        str(port),
        "--num-ctx",
        str(num_ctx),
        "--preload",
    ]
    return argv + (["--name", name] if name else [])
