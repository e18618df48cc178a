"""``python -m demo``: binding, the network warning, and logs without lab ids."""

from __future__ import annotations

import io
import logging
import re
import sys
import threading
import time
import urllib.request
from typing import Any

import pytest

from demo import __main__ as main_module


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("192.0.2.1", False),
        ("example", False),
    ],
)
def test_loopback(host: str, loopback: bool) -> None:
    assert main_module._is_loopback(host) is loopback


def test_default_binds_loopback_and_prints_the_url(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = []
    real = main_module.make_server

    def spy(*args: object, **kwargs: object) -> object:
        server = real(*args, **kwargs)  # type: ignore[arg-type]
        servers.append(server)
        return server

    monkeypatch.setattr(main_module, "make_server", spy)
    thread = threading.Thread(target=main_module.main, args=(["--port", "0"],), daemon=True)
    thread.start()
    for _ in range(100):
        if servers:
            break
        time.sleep(0.05)
    server = servers[0]
    try:
        assert server.host == "127.0.0.1"
        with urllib.request.urlopen(
            f"http://127.0.0.1:{server.port}/lab/secret-lab-id/api/state"
        ) as r:
            assert r.status == 200
    finally:
        server.shutdown()
        thread.join(5)
    out, err = capsys.readouterr()
    assert f"http://127.0.0.1:{server.port}/" in out
    assert "Warning" not in err
    link = re.search(r"(http://127\.0\.0\.1:\d+/instructor\?token=[\w-]{20,})", out)
    assert link is not None, out


def test_the_instructor_link_printed_at_start_up_opens_the_view(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    apps = []
    real = main_module.create_app

    def spy(*args: object, **kwargs: object) -> object:
        app = real(*args, **kwargs)  # type: ignore[arg-type]
        apps.append(app)
        return app

    class FakeServer:
        port = 5000
        connection_limit = 2000

        def serve_forever(self) -> None:
            raise KeyboardInterrupt

        def server_close(self) -> None:
            pass

    monkeypatch.setattr(main_module, "create_app", spy)
    monkeypatch.setattr(main_module, "make_server", lambda *a, **k: FakeServer())
    assert main_module.main([]) == 0
    out = capsys.readouterr().out
    path = out.split("http://127.0.0.1:5000", 2)[2].split()[0]
    client = apps[0].test_client()
    assert client.get(path).status_code == 200
    assert client.get("/instructor?token=guess").status_code == 403


def test_a_non_loopback_host_prints_a_warning(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:

    class FakeServer:
        port = 5000
        connection_limit = 2000

        def serve_forever(self) -> None:
            raise KeyboardInterrupt

        def server_close(self) -> None:
            pass

    monkeypatch.setattr(main_module, "make_server", lambda *a, **k: FakeServer())
    assert main_module.main(["--host", "0.0.0.0"]) == 0
    assert "reachable from the network" in capsys.readouterr().err


def test_request_logs_mask_lab_ids_and_the_token(caplog: pytest.LogCaptureFixture) -> None:
    from demo.server import AccessLog

    def app(environ: dict[str, object], start_response: Any) -> list[bytes]:
        start_response("201 CREATED", [])
        return [b""]

    logged = AccessLog(app)
    with caplog.at_level(logging.INFO, logger="demo.access"):
        for path, query in (("/lab/s3cr3t-id/api/charges", ""), ("/instructor", "token=t0ps3cret")):
            environ = {"REQUEST_METHOD": "POST", "PATH_INFO": path, "QUERY_STRING": query}
            logged(environ, lambda *a: None)
    assert "s3cr3t-id" not in caplog.text and "t0ps3cret" not in caplog.text
    assert '"POST /lab/…/api/charges -" 201' in caplog.text
    assert "/instructor?token=…" in caplog.text


def test_the_servers_own_messages_are_masked_too() -> None:
    # waitress names the request's path in some messages ("Client disconnected while
    # serving /lab/<id>/api/charges"): the handler python -m demo installs masks them.
    from demo.server import RedactingFilter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("waitress.test-redaction")
    logger.addHandler(handler)
    try:
        logger.warning("Client disconnected while serving %s", "/lab/s3cr3t-id/api/charges")
        logger.warning("Exception while serving /instructor?token=t0ps3cret&x=1")
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue().splitlines() == [
        "Client disconnected while serving /lab/…/api/charges",
        "Exception while serving /instructor?token=…&x=1",
    ]


def test_python_m_demo_logs_each_request_masked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = []
    real = main_module.make_server

    def spy(*args: Any, **kwargs: Any) -> Any:
        server = real(*args, **kwargs)
        servers.append(server)
        return server

    monkeypatch.setattr(main_module, "make_server", spy)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # where the access log goes
    logged = sys.stderr
    thread = threading.Thread(target=main_module.main, args=(["--port", "0"],), daemon=True)
    thread.start()
    try:
        while not servers:  # it serves (and logs) once main() has set the log up
            time.sleep(0.01)
        with urllib.request.urlopen(f"http://127.0.0.1:{servers[0].port}/lab/my-s3cr3t/api/state"):
            pass
    finally:
        if servers:
            servers[0].shutdown()
        thread.join(15)
    assert '"GET /lab/…/api/state HTTP/1.1" 200' in logged.getvalue()
    assert "my-s3cr3t" not in logged.getvalue()


@pytest.mark.parametrize("port", ["99999", "-1", "x"])
def test_a_bad_port_is_refused(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main_module.main(["--port", port])
    assert stopped.value.code == 2
    assert "--port" in capsys.readouterr().err
