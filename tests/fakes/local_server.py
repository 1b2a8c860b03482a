"""The part every fake server shares: a threaded HTTP server on 127.0.0.1, in the background."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout) makes our late write fail: expected here


class LocalServer:
    """Serves ``handler`` on a free port until ``close`` (or the end of a ``with`` block)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        """Stop serving; delayed answers still pending are abandoned at once."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _wait(self, seconds: float) -> None:
        """Sleep for a delayed answer, but wake at once when the server closes."""
        self._stopping.wait(seconds)
