"""``python -m demo`` (or ``idempotency-demo``): serve the lab on a threaded server.

Each request gets its own thread, so two requests really run at once: that is what
lets the double charge happen with the lock off.
"""

from __future__ import annotations

import argparse
import ipaddress
import re
import sys
from collections.abc import Sequence

from werkzeug.serving import WSGIRequestHandler, make_server

from . import create_app

_LAB_PATH = re.compile(r"/lab/[^/ ?]+")
_TOKEN = re.compile(r"token=[^& ]+")


class _RedactingHandler(WSGIRequestHandler):
    """Logs request lines with lab ids and the instructor token masked: each is a key."""

    def log(self, type: str, message: str, *args: object) -> None:
        line = message % args if args else message
        super().log(type, "%s", _TOKEN.sub("token=…", _LAB_PATH.sub("/lab/…", line)))


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0-65535)")
    return port


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``--host`` and ``--port``, print the URL, and serve until Ctrl-C."""
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
    args = parser.parse_args(argv)

    app = create_app({"LAB_IDLE_S": args.lab_idle_s})
    try:
        server = make_server(
            args.host, args.port, app, threaded=True, request_handler=_RedactingHandler
        )
    except OSError as exc:
        print(f"Cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if not _is_loopback(args.host):
        print(
            f"Warning: bound to {args.host}, so the lab is reachable from the network, "
            "by anyone who can reach this machine.",
            file=sys.stderr,
        )
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
