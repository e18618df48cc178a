"""Header values over HTTP: spaces and tabs around a value are no part of it (RFC 9110
§5.5), repeated Idempotency-Key lines are refused however the server joins them, and the
415 detail says plainly what is missing. Through the test client, and on real sockets
through Werkzeug's development server and waitress, which join repeated lines differently."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import waitress
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.serving import make_server

CHARGE = {"order_id": "42", "amount": 100000}


def pay(client: FlaskClient, lab: str, key: Any, body: dict[str, Any] = CHARGE) -> Any:
    headers = key if isinstance(key, list) else [("Idempotency-Key", key)]
    return client.post(f"/lab/{lab}/api/charges", json=body, headers=headers)


def charged(client: FlaskClient, lab: str) -> int:
    summary: int = client.get(f"/lab/{lab}/api/state").get_json()["summary"]["charged"]
    return summary


@pytest.mark.parametrize("retry_key", ["pay-1   ", "pay-1\t", '"pay-1" ', ' \t"pay-1"\t '])
def test_a_retry_whose_key_has_spaces_or_tabs_around_it_replays(
    client: FlaskClient, retry_key: str
) -> None:
    first = pay(client, "ws", "pay-1")
    assert first.status_code == 201
    retry = pay(client, "ws", retry_key)
    assert retry.status_code == 201
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.data == first.data
    assert charged(client, "ws") == 1


def test_inside_quotes_spaces_count(client: FlaskClient) -> None:
    assert pay(client, "wq", "pay-1").status_code == 201
    other = pay(client, "wq", '" pay-1"', {"order_id": "43", "amount": 1})
    assert other.status_code == 201 and "Idempotent-Replayed" not in other.headers
    assert charged(client, "wq") == 2


@pytest.mark.parametrize(
    "lines",
    [
        [("Idempotency-Key", '"a'), ("Idempotency-Key", 'b"')],  # joins into '"a, b"'
        [("Idempotency-Key", "k1"), ("Idempotency-Key", "k1")],
        [("Idempotency-Key", "k1"), ("Idempotency-Key", "")],
    ],
)
def test_repeated_key_lines_are_400_and_charge_nothing(
    client: FlaskClient, lines: list[tuple[str, str]]
) -> None:
    response = pay(client, "wr", lines)
    assert response.status_code == 400
    assert response.get_json()["type"] == "/problems/bad-idempotency-key"
    assert "comma" in response.get_json()["detail"]
    assert charged(client, "wr") == 0


def test_a_join_without_a_space_is_refused_too(client: FlaskClient) -> None:
    # Werkzeug's development server joins repeated lines with a bare ",".
    response = client.post(
        "/lab/wj/api/charges", json=CHARGE, environ_overrides={"HTTP_IDEMPOTENCY_KEY": '"a,b"'}
    )
    assert response.status_code == 400
    assert charged(client, "wj") == 0


def test_other_headers_are_read_without_the_spaces_around(client: FlaskClient) -> None:
    response = client.post(
        "/lab/wo/api/charges",
        data=json.dumps(CHARGE),
        headers={"Content-Type": "application/json \t", "X-Lab-Action": "Pay  "},
    )
    assert response.status_code == 201
    assert client.get("/lab/wo/api/state").get_json()["requests"][-1]["action"] == "Pay"
    htmx = client.post("/lab/wo/api/reset", headers={"HX-Request": "true "})
    assert htmx.mimetype == "text/html"


def test_415_without_a_content_type_says_so_plainly(client: FlaskClient) -> None:
    response = client.post("/lab/wc/api/charges", data=b"{}")
    assert response.status_code == 415
    detail = response.get_json()["detail"]
    assert detail == "The request has no Content-Type header: send the body as application/json."
    assert "not no" not in detail
    vi = client.post("/lab/wc/api/charges", data=b"{}", headers={"Accept-Language": "vi"})
    assert vi.get_json()["detail"] == (
        "Yêu cầu không có header Content-Type: hãy gửi body dạng application/json."
    )
    typed = client.post("/lab/wc/api/charges", data=b"{}", content_type="text/plain")
    assert typed.get_json()["detail"] == "Send the body as application/json, not text/plain."


# -- on real sockets ------------------------------------------------------------------


def _werkzeug(app: Flask) -> tuple[int, Callable[[], None]]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        thread.join()

    return server.server_port, stop


def _waitress(app: Flask) -> tuple[int, Callable[[], None]]:
    server: Any = waitress.create_server(app, host="127.0.0.1", port=0, threads=2)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()

    def stop() -> None:
        server.close()
        server.task_dispatcher.shutdown()
        thread.join()

    return server.effective_port, stop


@pytest.fixture(params=[_werkzeug, _waitress], ids=["werkzeug", "waitress"])
def live(app: Flask, request: pytest.FixtureRequest) -> Iterator[int]:
    port, stop = request.param(app)
    yield port
    stop()


def raw_post(port: int, lab: str, key_lines: list[bytes]) -> tuple[int, bytes]:
    """POST a charge with these exact ``Idempotency-Key`` lines; the status and body."""
    body = json.dumps(CHARGE).encode()
    head = [
        f"POST /lab/{lab}/api/charges HTTP/1.1".encode(),
        b"Host: 127.0.0.1",
        b"Content-Type: application/json",
        b"Content-Length: " + str(len(body)).encode(),
        b"Connection: close",
        *(b"Idempotency-Key:" + line for line in key_lines),
    ]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"\r\n".join(head) + b"\r\n\r\n" + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def test_live_whitespace_around_the_key_replays(live: int, app: Flask) -> None:
    assert raw_post(live, "live1", [b" pay-1"])[0] == 201
    status, body = raw_post(live, "live1", [b" pay-1   "])
    assert status == 201
    assert raw_post(live, "live1", [b'\t"pay-1" \t'])[0] == 201
    assert raw_post(live, "live1", [b" pay-1\t"])[0] == 201
    assert charged(app.test_client(), "live1") == 1
    assert json.loads(body)["id"] == "ch_0001"


@pytest.mark.parametrize(
    "lines", [[b' "a', b' b"'], [b" k1", b" k1"], [b' "a', b'b"'], [b" k1", b""]]
)
def test_live_repeated_key_lines_are_refused(live: int, app: Flask, lines: list[bytes]) -> None:
    status, body = raw_post(live, "live2", lines)
    assert status == 400, body
    assert json.loads(body)["type"] == "/problems/bad-idempotency-key"
    assert charged(app.test_client(), "live2") == 0
