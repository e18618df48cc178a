"""The server ``python -m demo`` and the browser tests run the lab on: waitress, bounded.

waitress is a production WSGI server in pure Python (it runs on Linux, macOS and
Windows laptops alike). One thread reads every connection without blocking and hands a
request to the pool of ``threads`` only once it has arrived whole, so a slow or stalled
client costs a socket, never a thread; a connection idle for ``timeout_s`` is closed,
and past ``connection_limit`` open connections the server accepts no more until some
close. Two requests on two connections still run on two threads at once: the race the
lab shows is real.

No Flask here: this module serves any WSGI app.
"""

from __future__ import annotations

import logging
import re
import select
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import WSGITask

DEFAULT_THREADS = 48
"""Requests served at once (a room of attendees and their double-submits)."""

DEFAULT_CONNECTION_LIMIT = 2000
"""Open connections at once: well above a room's browsers (a few keep-alive connections
each), so a flood of stalled connections does not lock attendees out."""

DEFAULT_TIMEOUT_S = 30
"""A connection with nothing received or sent for this long is closed, in seconds: a
request that never finishes its headers or its body, or a client that stops reading."""

FD_RESERVE = 64
"""File descriptors kept for everything but client sockets (listening socket, pipes,
log files, spilled request bodies)."""

MAX_HEADER_BYTES = 32 * 1024
"""A request's header block at most (waitress answers 431 past it)."""

MAX_BODY_BYTES = 2 * 1024 * 1024
"""A request body at most, in bytes: the largest the lab reads is an imported history of
1 MiB plus its multipart wrapping; waitress answers 413 past it, before the app."""

_LAB_PATH = re.compile(r"/lab/[^/ ?]+")
_TOKEN = re.compile(r"token=[^& ]+")

access_log = logging.getLogger("demo.access")


def redact(line: str) -> str:
    """``line`` with lab ids (``/lab/…``) and the instructor token (``token=…``) masked:
    each is a key to someone's data."""
    return _TOKEN.sub("token=…", _LAB_PATH.sub("/lab/…", line))


class RedactingFilter(logging.Filter):
    """A logging filter that masks lab ids and the instructor token in every record
    (waitress logs request paths in some of its messages)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        return True


def raise_fd_limit(wanted: int) -> int:
    """Raise this process's soft open-file limit towards ``wanted`` (never above the hard
    limit); returns the soft limit now in force. Where the platform has no such limit
    (Windows), returns ``wanted``."""
    try:
        import resource
    except ImportError:  # Windows
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return wanted if soft == resource.RLIM_INFINITY else int(soft)


def usable_connection_limit(wanted: int) -> int:
    """``wanted``, or less when the process cannot hold that many sockets: its open-file
    limit (raised if it may be) less :data:`FD_RESERVE`, and 500 where ``select()`` is
    the only poller (Windows: 512 sockets at most)."""
    if not hasattr(select, "poll"):
        return max(1, min(wanted, 500))
    return max(1, min(wanted, raise_fd_limit(wanted + FD_RESERVE) - FD_RESERVE))


def client_socket(environ: Mapping[str, Any]) -> socket.socket | None:
    """The client's socket behind a WSGI request, for closing it with no response; ``None``
    where the server gives none (Flask's test client).

    waitress passes no socket, but ``waitress.client_disconnected`` is a method of the
    request's channel, whose ``socket`` it is; werkzeug's development server (kept in
    ``bench/`` for comparison) passes ``werkzeug.socket``.
    """
    sock = environ.get("werkzeug.socket")
    if sock is None:
        channel = getattr(environ.get("waitress.client_disconnected"), "__self__", None)
        sock = getattr(channel, "socket", None)
    return sock if isinstance(sock, socket.socket) else None


StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class AccessLog:
    """WSGI middleware: one line per request on the ``demo.access`` logger, with lab ids
    and the instructor token masked (``127.0.0.1 "GET /lab/…/panels HTTP/1.1" 200``).
    Never bodies, keys or headers."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        def logged(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            if access_log.isEnabledFor(logging.INFO):
                query = environ.get("QUERY_STRING")
                target = environ.get("PATH_INFO", "") + (f"?{query}" if query else "")
                access_log.info(
                    '%s "%s %s %s" %s',
                    environ.get("REMOTE_ADDR", "-"),
                    environ.get("REQUEST_METHOD", "-"),
                    redact(target),
                    environ.get("SERVER_PROTOCOL", "-"),
                    status.split(" ", 1)[0],
                )
            return start_response(status, headers, *exc)

        return self.app(environ, logged)


class _OneRequestTask(WSGITask):
    """Serves a request as if the client had sent ``Connection: close``: the connection
    closes after its response, so every request arrives on a fresh connection.

    Why: a browser silently resends a request (a POST too) when a *reused* keep-alive
    connection closes before any response (Chromium's ``ShouldResendRequest``), taking
    it for a stale idle connection. The lab's lost response and crash close the
    connection with no response on purpose; on a reused connection the browser would
    charge again behind the attendee's back and never show the failure. (werkzeug's
    development server, which the lab used before, closed every connection too.)
    """

    def __init__(self, channel: HTTPChannel, request: Any) -> None:
        super().__init__(channel, request)
        request.headers["CONNECTION"] = "close"


class _Channel(HTTPChannel):
    task_class = _OneRequestTask


class _TcpServer(TcpWSGIServer):
    channel_class = _Channel


class Server:
    """The lab's WSGI app served by waitress on ``host``:``port`` (0 picks a free port).

    :param threads: requests served at once; more wait in a queue.
    :param connection_limit: open connections at most (lowered to what the process's
        open-file limit allows, see :func:`usable_connection_limit`).
    :param timeout_s: a connection idle this long is closed, in seconds.
    :raises OSError: when the address cannot be bound.
    """

    def __init__(
        self,
        app: WSGIApp,
        host: str = "127.0.0.1",
        port: int = 5000,
        *,
        threads: int = DEFAULT_THREADS,
        connection_limit: int = DEFAULT_CONNECTION_LIMIT,
        timeout_s: int = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.threads = threads
        self.connection_limit = usable_connection_limit(connection_limit)
        self.timeout_s = timeout_s
        self._map: dict[int, Any] = {}
        adj = Adjustments(
            host=host,
            port=port,
            threads=threads,
            # waitress counts its listening socket and wake-up pipe as connections too.
            connection_limit=self.connection_limit + 2,
            channel_timeout=timeout_s,
            cleanup_interval=max(1, min(10, timeout_s // 3)),
            asyncore_use_poll=True,  # select() stops at 1,024 descriptors
            max_request_header_size=MAX_HEADER_BYTES,
            max_request_body_size=MAX_BODY_BYTES,
            inbuf_overflow=128 * 1024,  # bodies past this wait on disk, not in memory
            backlog=1024,
            expose_tracebacks=False,
            log_socket_errors=False,  # a client that went away is no news
            clear_untrusted_proxy_headers=True,
        )
        # The first address ``host`` resolves to ("localhost" may give two).
        first: Any = adj.listen[0]  # (family, type, proto, address); the stubs say str
        self._server = _TcpServer(AccessLog(app), map=self._map, adj=adj, sockinfo=first)
        host_seen, port_seen = self._server.getsockname()
        self.host: str = host_seen
        self.port: int = int(port_seen)
        self._stop = threading.Event()
        self._stopped = threading.Event()

    def serve_forever(self) -> None:
        """Serve until :meth:`shutdown` (from another thread) or Ctrl-C."""
        try:
            while not self._stop.is_set():
                wasyncore.loop(timeout=1.0, use_poll=True, map=self._map, count=1)
        finally:
            self._server.task_dispatcher.shutdown(timeout=5)
            wasyncore.close_all(self._map, ignore_all=True)
            self._stopped.set()

    def shutdown(self, timeout_s: float = 10) -> None:
        """Stop :meth:`serve_forever` and wait (at most ``timeout_s``) until it has."""
        self._stop.set()
        self._server.pull_trigger()
        self._stopped.wait(timeout_s)

    def server_close(self) -> None:
        """Close the listening socket and every connection, if :meth:`serve_forever`
        has not already."""
        if not self._stopped.is_set():
            wasyncore.close_all(self._map, ignore_all=True)


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time of each record."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def log_to_stderr() -> None:
    """Send the access log and waitress's own messages to stderr, redacted (once per
    process, however often it is called)."""
    if any(isinstance(f, RedactingFilter) for h in access_log.handlers for f in h.filters):
        return
    handler = _Stderr()
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    for name in ("demo.access", "waitress"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def make_server(
    app: WSGIApp,
    host: str = "127.0.0.1",
    port: int = 5000,
    *,
    threads: int = DEFAULT_THREADS,
    connection_limit: int = DEFAULT_CONNECTION_LIMIT,
    timeout_s: int = DEFAULT_TIMEOUT_S,
) -> Server:
    """A :class:`Server` for ``app``, bound and ready for :meth:`Server.serve_forever`.

    :raises OSError: when ``host``:``port`` cannot be bound.
    """
    return Server(
        app,
        host,
        port,
        threads=threads,
        connection_limit=connection_limit,
        timeout_s=timeout_s,
    )
