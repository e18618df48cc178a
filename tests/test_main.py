"""``python -m demo``: binding, the network warning, and logs without lab ids."""

from __future__ import annotations

import logging
import re
import threading
import time
import urllib.request

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

        def serve_forever(self) -> None:
            raise KeyboardInterrupt

        def server_close(self) -> None:
            pass

    monkeypatch.setattr(main_module, "make_server", lambda *a, **k: FakeServer())
    assert main_module.main(["--host", "0.0.0.0"]) == 0
    assert "reachable from the network" in capsys.readouterr().err


def test_request_logs_mask_lab_ids(caplog: pytest.LogCaptureFixture) -> None:
    handler = main_module._RedactingHandler.__new__(main_module._RedactingHandler)
    handler.client_address = ("127.0.0.1", 1)  # type: ignore[assignment]
    handler.address_string = lambda: "127.0.0.1"  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        handler.log("info", '"%s" %s %s', "POST /lab/s3cr3t-id/api/charges HTTP/1.1", "201", "-")
    assert "s3cr3t-id" not in caplog.text
    assert "/lab/…/api/charges" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        handler.log("info", '"%s" %s %s', "GET /instructor?token=t0ps3cret HTTP/1.1", "200", "-")
    assert "t0ps3cret" not in caplog.text
    assert "/instructor?token=…" in caplog.text


@pytest.mark.parametrize("port", ["99999", "-1", "x"])
def test_a_bad_port_is_refused(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main_module.main(["--port", port])
    assert stopped.value.code == 2
    assert "--port" in capsys.readouterr().err
