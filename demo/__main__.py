"""``python -m demo`` (or ``idempotency-demo``): serve the lab on waitress, bounded.

A pool of threads serves the requests, so two requests really run at once: that is
what lets the double charge happen with the lock off. See :mod:`demo.server`.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from collections.abc import Callable, Sequence

from . import create_app
from .server import (
    DEFAULT_CONNECTION_LIMIT,
    DEFAULT_THREADS,
    DEFAULT_TIMEOUT_S,
    log_to_stderr,
    make_server,
)


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0-65535)")
    return port


def _within(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high``."""

    def parse(text: str) -> int:
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not from {low} to {high}")
        return value

    return parse


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="idempotency-demo", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=_port, default=5000, help="port to listen on, 0-65535 (default 5000)"
    )
    parser.add_argument(
        "--lab-idle-s",
        type=float,
        default=2 * 3600,
        help="seconds after which an unused lab expires (default 7200)",
    )
    parser.add_argument(
        "--threads",
        type=_within(2, 1000),
        default=DEFAULT_THREADS,
        help=f"requests served at once, 2-1000 (default {DEFAULT_THREADS}); at most half "
        "of them may be paused in step mode",
    )
    parser.add_argument(
        "--connection-limit",
        type=_within(10, 100_000),
        default=DEFAULT_CONNECTION_LIMIT,
        help=f"open connections at most (default {DEFAULT_CONNECTION_LIMIT}; lowered to "
        "what the open-file limit allows)",
    )
    parser.add_argument(
        "--timeout",
        type=_within(1, 3600),
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds after which an idle or stalled connection is closed "
        f"(default {DEFAULT_TIMEOUT_S})",
    )
    parser.add_argument(
        "--redis",
        metavar="URL",
        default=None,
        help="run every workspace's queue lab on Redis Streams at URL, e.g. "
        "redis://127.0.0.1:6379/0 (default: an in-memory broker)",
    )
    return parser


def _redis_answers(url: str) -> bool:
    """Whether the Redis at ``url`` answers a PING (said on stderr when it does not)."""
    from .queue.redis_streams import connect

    try:
        connect(url).ping()
    except Exception as exc:  # a bad URL (ValueError) or a server that does not answer
        print(f"Cannot use Redis at {url}: {exc}", file=sys.stderr)
        return False
    return True


def _warnings(server_limit: int, args: argparse.Namespace) -> None:
    """What the operator should know before the URL: a lowered limit, an open address."""
    if server_limit < args.connection_limit:
        print(
            f"Note: the open-file limit (ulimit -n) allows {server_limit} "
            f"connections, not {args.connection_limit}.",
            file=sys.stderr,
        )
    if not _is_loopback(args.host):
        print(
            f"Warning: bound to {args.host}, so the lab is reachable from the network, "
            "by anyone who can reach this machine.",
            file=sys.stderr,
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, print the URL, and serve until Ctrl-C; returns the exit status
    (1 when the address cannot be bound or the ``--redis`` server does not answer, 2 for
    a bad option)."""
    args = _parser().parse_args(argv)
    if args.redis is not None and not _redis_answers(args.redis):
        return 1

    app = create_app(
        {
            "LAB_IDLE_S": args.lab_idle_s,
            "STEP_MAX_PAUSED": args.threads // 2,
            "REDIS_URL": args.redis,
        }
    )
    try:
        server = make_server(
            app,
            args.host,
            args.port,
            threads=args.threads,
            connection_limit=args.connection_limit,
            timeout_s=args.timeout,
        )
    except OSError as exc:
        print(f"Cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    log_to_stderr()
    _warnings(server.connection_limit, args)
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    if ":" in shown:
        shown = f"[{shown}]"
    base = f"http://{shown}:{server.port}"
    print(f"Idempotency lab running on {base}/  (Ctrl-C to stop)")
    token = app.config["INSTRUCTOR_TOKEN"]
    print(f"Instructor view (keep it to yourself): {base}/instructor?token={token}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
