"""A tiny scripted HTTP server on 127.0.0.1 that speaks just enough Ollama (and /v1) to fault a client.

Why not the real shim: fault tests need replies no model gives (HTTP 500, non-JSON, a verdict of the
wrong type, a reply that never comes, absurd ``/api/show`` numbers) and must count exactly how many
requests arrived. ``reply(path)`` decides each answer and may block (a hang); ``release`` unblocks
every waiting handler so the server always shuts down.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Reply = Callable[..., tuple[int, str, str]]  # (path[, request body]) -> (status, content type, body)
CHAT_PATHS = ("/api/chat", "/v1/chat/completions")


_ABSENT = object()


def ollama_reply(content: str, logprobs: object = _ABSENT, refuse_logprobs: bool = False) -> Reply:
    """Every chat answered with ``content`` as the assistant message, in the shape of the path asked.

    ``logprobs``, when given, is sent as is (Ollama: top-level ``logprobs``; /v1: the choice's
    ``logprobs.content``), so a test can send any shape, malformed ones included. ``refuse_logprobs``
    answers HTTP 400 to a request carrying ``logprobs``, as a server that does not know the field may.
    """

    def reply(path: str, request_body: bytes = b"") -> tuple[int, str, str]:
        if refuse_logprobs and b'"logprobs"' in request_body:
            return 400, "application/json", json.dumps({"error": "unknown field logprobs"})
        if path.startswith("/v1/"):
            body = {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
            }
            if logprobs is not _ABSENT:
                body["choices"][0]["logprobs"] = {"content": logprobs}
        else:
            body = {
                "model": "m",
                "created_at": "2026-01-01T00:00:00Z",
                "done": True,
                "done_reason": "stop",
                "message": {"role": "assistant", "content": content},
                "prompt_eval_count": 50,
                "eval_count": 5,
            }
            if logprobs is not _ABSENT:
                body["logprobs"] = logprobs
        return 200, "application/json", json.dumps(body)

    return reply


class FakeServer:
    """A local HTTP server whose every request gets ``reply(path)``; counts the requests."""

    def __init__(self, reply: Reply) -> None:
        outer = self
        accepts_body = len(inspect.signature(reply).parameters) >= 2
        self.requests: list[str] = []
        self.release = threading.Event()
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                sent = self.rfile.read(int(self.headers.get("content-length") or 0))
                with outer._lock:
                    outer.requests.append(self.path)
                status, ctype, body = reply(self.path, sent) if accepts_body else reply(self.path)
                data = body.encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", ctype)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test): nothing to answer
                    pass

            do_GET = do_POST

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def chat_requests(self) -> list[str]:
        with self._lock:
            return [p for p in self.requests if p in CHAT_PATHS]

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
