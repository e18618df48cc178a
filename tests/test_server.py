"""Against the real threaded server over a socket: what only a socket shows (chunked
bodies, a connection closed with no response)."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator

import pytest
from werkzeug.serving import make_server

from demo import create_app


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield "127.0.0.1", httpd.port
    httpd.shutdown()
    thread.join(5)


def send(
    server: tuple[str, int], method: str, path: str, body: bytes | None = None, **headers: str
) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection(*server, timeout=10)
    names = {k.replace("_", "-"): v for k, v in headers.items()}
    if body is not None and "Transfer-Encoding" in names:
        conn.putrequest(method, path)
        for name, value in names.items():
            conn.putheader(name, value)
        conn.endheaders()
        for start in range(0, len(body), 4096):
            piece = body[start : start + 4096]
            conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        conn.send(b"0\r\n\r\n")
    else:
        conn.request(method, path, body=body, headers=names)
    return conn.getresponse()


def test_a_chunked_body_over_the_limit_is_413_not_cut_short(server: tuple[str, int]) -> None:
    valid = b'{"order_id": "42", "amount": 5}'
    padded = valid + b" " * (16 * 1024 - len(valid)) + b"xxxx"  # valid JSON only if cut at 16 KiB
    response = send(
        server, "POST", "/lab/s1/api/charges", padded,
        Content_Type="application/json", Transfer_Encoding="chunked", Idempotency_Key="k",
    )  # fmt: skip
    assert response.status == 413
    assert response.getheader("Content-Type") == "application/problem+json"
    state = json.loads(send(server, "GET", "/lab/s1/api/state").read())
    assert state["charges"] == []


def test_a_chunked_history_over_one_mebibyte_is_413_not_cut_short(
    server: tuple[str, int],
) -> None:
    valid = b'{"format": "x"}'
    padded = valid + b" " * (1024 * 1024 - len(valid)) + b"xxxx"  # valid only if cut at 1 MiB
    response = send(
        server, "POST", "/replay", padded,
        Content_Type="application/json", Transfer_Encoding="chunked",
    )  # fmt: skip
    assert response.status == 413
    assert response.getheader("Content-Type") == "application/problem+json"


def test_a_small_chunked_body_is_fine(server: tuple[str, int]) -> None:
    response = send(
        server, "POST", "/lab/s2/api/charges", b'{"order_id": "42", "amount": 5}',
        Content_Type="application/json", Transfer_Encoding="chunked", Idempotency_Key="k",
    )  # fmt: skip
    assert response.status == 201


def test_a_lost_response_closes_the_connection_with_nothing(server: tuple[str, int]) -> None:
    send(
        server, "PATCH", "/lab/s3/api/settings", b'{"fault": "lose_response"}',
        Content_Type="application/json",
    ).read()  # fmt: skip
    body = b'{"order_id": "42", "amount": 5}'
    with pytest.raises(http.client.RemoteDisconnected):
        send(
            server, "POST", "/lab/s3/api/charges", body,
            Content_Type="application/json", Idempotency_Key="k",
        )  # fmt: skip
    retry = send(
        server, "POST", "/lab/s3/api/charges", body,
        Content_Type="application/json", Idempotency_Key="k",
    )  # fmt: skip
    assert retry.status == 201 and retry.getheader("Idempotent-Replayed") == "true"


@pytest.mark.parametrize(("size", "status"), [(16 * 1024, 201), (16 * 1024 + 1, 413)])
def test_the_limit_is_the_same_for_chunked_and_sized_bodies(
    server: tuple[str, int], size: int, status: int
) -> None:
    valid = b'{"order_id": "42", "amount": 5}'
    body = valid + b" " * (size - len(valid))
    for n, chunked in enumerate((False, True)):
        headers = {"Content_Type": "application/json", "Idempotency_Key": f"k{size}-{n}"}
        if chunked:
            headers["Transfer_Encoding"] = "chunked"
        response = send(server, "POST", f"/lab/lim{n}/api/charges", body, **headers)
        assert response.status == status, (chunked, size)
