"""Lab slots and safe links over HTTP: a GET changes nothing and takes no slot, a flood
cannot take an attendee's lab, replays have their own quota, and cross-site writes are
refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo import create_app
from demo.registry import LabRegistry

BODY = {"order_id": "42", "amount": 100000}
JSON = {"Accept": "application/json"}
HTML = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


def registry(app: Flask) -> LabRegistry:
    labs: LabRegistry = app.extensions["labs"]
    return labs


def state(client: FlaskClient, lab_id: str) -> dict[str, Any]:
    answer = client.get(f"/lab/{lab_id}/api/state")
    assert answer.status_code == 200
    data: dict[str, Any] = answer.get_json()
    data.pop("clock")  # the real clock moves on, and with it each record's time left
    for record in data["records"]:
        record.pop("expires_in_s")
    return data


# -- a GET changes nothing -------------------------------------------------------------

LINKS = [
    "?scenario=race",
    "?scenario=race&fixed=1&run=1",
    "?scenario=none",
    "?lesson=decline",
    "?lesson=race&run=1",
    "?present=1",
    "?present=0",
    "?present=1&lesson=race",
    "?run=1",
]


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("method", ["get", "head"])
def test_a_get_of_a_link_changes_nothing(
    client: FlaskClient, app: Flask, link: str, method: str
) -> None:
    client.post("/lab/used/api/charges", json=BODY, headers={"Idempotency-Key": "k"})
    client.post("/lab/used?present=1")
    before = state(client, "used")
    answer = getattr(client, method)(f"/lab/used{link}")
    assert answer.status_code == 200
    assert state(client, "used") == before
    # A lab nobody wrote to stays unmade, whatever its link asks for.
    count = len(registry(app))
    assert getattr(client, method)(f"/lab/never{link}").status_code == 200
    assert len(registry(app)) == count and registry(app).peek("never") is None


@pytest.mark.parametrize(
    ("link", "button"),
    [
        ("?lesson=race", "Open lesson 4"),
        ("?scenario=key-reuse&run=1", "Start the scenario"),
        ("?present=1", "Start presenter mode"),
        ("?present=0", "Leave presenter mode"),
        ("?scenario=none", "Leave the scenario"),
    ],
)
def test_a_link_offers_its_change_as_one_post(client: FlaskClient, link: str, button: str) -> None:
    html = client.get(f"/lab/offer{link}").text
    assert (
        f'<form id="offer" class="offer" method="post" action="/lab/offer{link}"'
        in html.replace("&amp;", "&")
    )
    assert f'<button type="submit" class="primary">{button}</button>' in html
    assert 'data-autorun="true"' not in html  # nothing runs before the change is made


def test_the_post_of_a_link_applies_it(client: FlaskClient, lab_of: Any) -> None:
    answer = client.post("/lab/posted?present=1&lesson=race&run=1")
    assert answer.status_code == 303 and answer.location == "/lab/posted?run=1"
    lab = lab_of("posted")
    assert lab.present and lab.lesson is not None and lab.lesson.name == "race"
    html = client.get(answer.location).text
    assert 'data-autorun="true"' in html and 'id="offer"' not in html
    # The header's scenario menu sends a form field rather than a query.
    assert client.post("/lab/posted", data={"scenario": "decline"}).status_code == 303
    assert lab_of("posted").payments.scenario.name == "decline"


def test_a_post_with_nothing_to_apply_makes_no_lab(client: FlaskClient, app: Flask) -> None:
    for query in ("", "?run=1"):
        answer = client.post(f"/lab/idle{query}")
        assert answer.status_code == 303 and answer.location == "/lab/idle"
    assert registry(app).peek("idle") is None


@pytest.mark.parametrize("link", ["?scenario=nope", "?lesson=nope"])
@pytest.mark.parametrize("method", ["get", "post"])
def test_an_unknown_name_in_a_link_is_404(
    client: FlaskClient, app: Flask, link: str, method: str
) -> None:
    answer = getattr(client, method)(f"/lab/x{link}&present=1", headers=JSON)
    assert answer.status_code == 404
    assert answer.mimetype == "application/problem+json"
    assert registry(app).peek("x") is None  # nothing made, nothing half applied


@pytest.mark.parametrize(
    "path", ["", "/api/state", "/panels", "/history.json", "/sequence.svg", "/panels?since=1"]
)
def test_reading_a_lab_that_does_not_exist_shows_it_blank_and_takes_no_slot(
    client: FlaskClient, app: Flask, path: str
) -> None:
    answer = client.get(f"/lab/ghost{path}")
    assert answer.status_code == 200
    assert len(registry(app)) == 0
    if path == "/api/state":
        assert answer.get_json()["requests"] == [] and answer.get_json()["charges"] == []
    if path == "/history.json":
        assert answer.get_json()["requests"] == []


def test_a_write_makes_the_lab(client: FlaskClient, app: Flask) -> None:
    assert client.post("/lab/made/api/reset").status_code == 200
    assert registry(app).peek("made") is not None


# -- slots -------------------------------------------------------------------------------


def small_app(**config: Any) -> Flask:
    return create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0, **config})


def test_no_free_slot_is_503_with_retry_after_as_json_and_as_html() -> None:
    app = small_app(LAB_MAX=1)
    client = app.test_client()
    pay = {"Idempotency-Key": "k"}
    client.post("/lab/first/api/charges", json=BODY, headers=pay)
    for accept in (JSON, HTML):
        answer = client.post("/lab/second/api/charges", json=BODY, headers={**pay, **accept})
        assert answer.status_code == 503
        assert int(answer.headers["Retry-After"]) >= 1
        assert answer.mimetype == ("text/html" if accept is HTML else "application/problem+json")
    html = client.post("/lab/second?lesson=race", headers=HTML)
    assert html.status_code == 503 and "Retry-After" in html.headers
    assert "Too many labs" in html.text


def test_a_classroom_behind_one_address_all_get_labs_then_a_flood_takes_none() -> None:
    app = small_app(LAB_MAX=150)
    room = app.test_client()
    room.environ_base["REMOTE_ADDR"] = "203.0.113.7"  # one NAT for the whole room
    pay = {"Idempotency-Key": "t1:u7:pay:order-42:v1"}
    for seat in range(60):
        answer = room.post(f"/lab/seat-{seat}/api/charges", json=BODY, headers=pay)
        assert answer.status_code == 201, seat
    flood = app.test_client()
    flood.environ_base["REMOTE_ADDR"] = "198.51.100.9"
    statuses = set()
    for n in range(300):
        answer = flood.post(f"/lab/flood-{n}/api/charges", json=BODY, headers=pay)
        statuses.add(answer.status_code)
        if answer.status_code == 503:
            assert 1 <= int(answer.headers["Retry-After"]) <= 5  # its own labs age out
    assert statuses == {201, 503}
    for seat in range(60):
        replay = room.post(f"/lab/seat-{seat}/api/charges", json=BODY, headers=pay)
        assert replay.headers.get("Idempotent-Replayed") == "true", seat
    newcomer = app.test_client()
    newcomer.environ_base["REMOTE_ADDR"] = "192.0.2.1"
    assert newcomer.post("/lab/late/api/charges", json=BODY, headers=pay).status_code == 201


@pytest.mark.parametrize(
    ("address", "source"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
    ],
)
def test_a_source_is_an_ipv4_address_or_an_ipv6_64(address: str, source: str) -> None:
    from demo.web import client_source

    app = small_app()
    with app.test_request_context(environ_base={"REMOTE_ADDR": address}):
        assert client_source() == source


def test_replays_have_their_own_quota_and_never_take_an_attendees_slot(
    client: FlaskClient,
) -> None:
    app = small_app(LAB_MAX=1, LAB_MAX_REPLAYS=2)
    client = app.test_client()
    client.post("/lab/mine/api/charges", json=BODY, headers={"Idempotency-Key": "k"})
    history = client.get("/lab/mine/history.json").data
    replays = []
    for _ in range(3):
        answer = client.post("/replay", data=history, content_type="application/json")
        assert answer.status_code == 303
        replays.append(answer.location)
    assert client.get(replays[0] + "/api/state").get_json()["requests"] == []  # dropped
    assert len(client.get(replays[2] + "/api/state").get_json()["requests"]) == 1
    assert len(client.get("/lab/mine/api/state").get_json()["requests"]) == 1


# -- cross-site writes -----------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": "https://evil.example"},
        {"Origin": "http://localhost:5000"},  # another port is another origin
        {"Origin": "null", "Sec-Fetch-Site": "cross-site"},  # a sandboxed frame elsewhere
        {"Sec-Fetch-Site": "same-origin", "Origin": "https://evil.example"},
        {"Sec-Fetch-Site": "same-origin, cross-site"},  # two header lines, joined
        {"Sec-Fetch-Site": "cross-site,same-origin"},
    ],
)
def test_a_cross_site_write_is_refused_and_changes_nothing(
    client: FlaskClient, app: Flask, headers: dict[str, str]
) -> None:
    client.post("/lab/target/api/charges", json=BODY, headers={"Idempotency-Key": "k"})
    before = state(client, "target")
    writes = [
        ("post", "/lab/target/api/reset", None),
        ("patch", "/lab/target/api/settings", {"lock": False}),
        ("post", "/lab/target?lesson=race", None),
        ("post", "/lab/other/api/charges", BODY),
    ]
    for method, path, body in writes:
        answer = getattr(client, method)(path, json=body, headers={**headers, **JSON})
        assert answer.status_code == 403, path
        assert answer.mimetype == "application/problem+json"
        assert json.loads(answer.data)["type"] == "/problems/cross-site-request"
    assert state(client, "target") == before
    assert registry(app).peek("other") is None


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl
        {"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost"},
        {"Sec-Fetch-Site": "same-site"},
        {"Sec-Fetch-Site": "none"},
        {"Origin": "HTTP://LOCALHOST"},
        # The page's own form under Referrer-Policy: no-referrer sends Origin: null.
        {"Origin": "null", "Sec-Fetch-Site": "same-origin"},
    ],
)
def test_a_same_site_write_or_one_without_a_browser_passes(
    client: FlaskClient, headers: dict[str, str]
) -> None:
    answer = client.post("/lab/ok/api/reset", headers=headers)
    assert answer.status_code == 200


def test_a_cross_site_get_still_reads(client: FlaskClient) -> None:
    answer = client.get("/lab/ok/api/state", headers={"Sec-Fetch-Site": "cross-site"})
    assert answer.status_code == 200


# -- instructor pages ------------------------------------------------------------------


def test_the_instructor_pages_are_never_cached(client: FlaskClient, app: Flask) -> None:
    token = app.config["INSTRUCTOR_TOKEN"]
    for path in ("/instructor", "/instructor/stats"):
        answer = client.get(f"{path}?token={token}")
        assert answer.status_code == 200
        assert answer.headers["Cache-Control"] == "no-store"
