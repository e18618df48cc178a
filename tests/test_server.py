"""Against the real server (:mod:`demo.server`, what ``python -m demo`` runs) over a
socket: what only a socket shows (chunked bodies, a connection closed with no response,
stalled clients, two requests at once)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator

import pytest

from demo import create_app
from demo.server import make_server


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    httpd = make_server(app, "127.0.0.1", 0, threads=8, timeout_s=2)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield "127.0.0.1", httpd.port
    httpd.shutdown()
    thread.join(15)


def send(
    server: tuple[str, int], method: str, path: str, body: bytes | None = None, **headers: str
) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection(*server, timeout=10)
    # One request per connection: the response closes it, and nothing is left open.
    names = {"Connection": "close", **{k.replace("_", "-"): v for k, v in headers.items()}}
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


@pytest.mark.parametrize("encoding", ["identity", "gzip, deflate, br, zstd"])
def test_a_lost_response_closes_the_connection_with_nothing(
    server: tuple[str, int], encoding: str
) -> None:
    lab = f"/lab/s3-{encoding[:4]}/api"
    send(
        server, "PATCH", f"{lab}/settings", b'{"fault": "lose_response"}',
        Content_Type="application/json",
    ).read()  # fmt: skip
    body = b'{"order_id": "42", "amount": 5}'
    with pytest.raises(http.client.RemoteDisconnected):
        send(
            server, "POST", f"{lab}/charges", body,
            Content_Type="application/json", Idempotency_Key="k", Accept_Encoding=encoding,
        )  # fmt: skip
    retry = send(
        server, "POST", f"{lab}/charges", body,
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


def _stalled(server: tuple[str, int], n: int, data: bytes) -> list[socket.socket]:
    """``n`` connections that send ``data`` and then nothing more."""
    socks = []
    for _ in range(n):
        sock = socket.create_connection(server, timeout=30)
        sock.sendall(data)
        socks.append(sock)
    return socks


@pytest.mark.parametrize(
    "stall",
    [
        b"GET /lab/x/api/state HTTP/1.1\r\nHost: x\r\n",  # headers never finished
        b"POST /lab/x/api/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n{}",  # a body shorter than its Content-Length
    ],
    ids=["headers", "body"],
)
def test_stalled_clients_hold_no_thread_and_are_closed_after_the_timeout(
    server: tuple[str, int], stall: bytes
) -> None:
    socks = _stalled(server, 12, stall)  # more than the server's 8 threads
    try:
        answer = send(server, "GET", "/lab/stall/api/state")
        assert answer.status == 200  # every thread is still free for others
        for sock in socks:
            assert sock.recv(1024) == b""  # closed by the server: idle past its 2 s timeout
    finally:
        for sock in socks:
            sock.close()


def test_two_requests_with_one_key_run_on_two_threads_at_once(server: tuple[str, int]) -> None:
    # Step mode parks each request after its lookup: both parked at once means two
    # threads serve them at the same time, and with the lock off both then charge.
    settings = b'{"lock": false, "step_mode": true}'
    send(server, "PATCH", "/lab/race/api/settings", settings, Content_Type="application/json")
    body = b'{"order_id": "7", "amount": 5}'
    answers: list[int] = []

    def pay() -> None:
        answers.append(
            send(
                server, "POST", "/lab/race/api/charges", body,
                Content_Type="application/json", Idempotency_Key="same",
            ).status
        )  # fmt: skip

    threads = [threading.Thread(target=pay) for _ in range(2)]
    for t in threads:
        t.start()
    paused: list[dict[str, object]] = []
    while len([p for p in paused if p["step"] == "lookup"]) < 2:
        paused = json.loads(send(server, "GET", "/lab/race/api/state").read())["paused"]
    # Both have looked the key up and missed; let them go on.
    send(
        server, "POST", "/lab/race/api/step", b'{"release_all": true}',
        Content_Type="application/json",
    ).read()  # fmt: skip
    for t in threads:
        t.join(30)
    assert answers == [201, 201]
    state = json.loads(send(server, "GET", "/lab/race/api/state").read())
    assert state["summary"] == {"charged": 2, "intended": 1, "emails": 0}


def test_every_connection_closes_after_its_response(server: tuple[str, int]) -> None:
    # A browser resends a request on its own when a reused keep-alive connection closes
    # with no response; one request per connection keeps the lab's lost response lost.
    conn = http.client.HTTPConnection(*server, timeout=10)
    try:
        conn.request("GET", "/lab/ka/api/state")  # no Connection header: keep-alive asked
        response = conn.getresponse()
        response.read()
        assert response.status == 200
        assert response.getheader("Connection") == "close"
    finally:
        conn.close()


def test_the_connection_limit_fits_in_the_open_file_limit() -> None:
    resource = pytest.importorskip("resource")  # POSIX only
    from demo.server import FD_RESERVE, usable_connection_limit

    assert usable_connection_limit(100) == 100
    huge = usable_connection_limit(10**9)  # more than any process may open
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert huge == soft - FD_RESERVE
