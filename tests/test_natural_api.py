"""The operations lab's HTTP API (issue 13): every operation retried with and without a
dedup record, the delayed duplicate with and without If-Match, the tracking pixel with
the window 0 and 1800 s, and bad input answered with problem+json, changing nothing."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo.registry import LabRegistry

L = "/lab/nat1/natural"

# operation → (final state members after 3 attempts without dedup, with dedup, natural)
ISSUE = {
    "set_balance": ({"balance": 100}, {"balance": 100}, True),
    "add_balance": ({"balance": 300}, {"balance": 100}, False),
    "put_profile": (
        {"profile": {"name": "Lan", "plan": "pro"}},
        {"profile": {"name": "Lan", "plan": "pro"}},
        True,
    ),
    "patch_append_tag": ({"tags": ["vip"] * 3}, {"tags": ["vip"]}, False),
    "delete_item": ({"items": [8]}, {"items": [8]}, True),
    "set_flag": ({"flag": True}, {"flag": True}, True),
    "send_email": ({"emails": ["em_0001", "em_0002", "em_0003"]}, {"emails": ["em_0001"]}, False),
    "create_invoice": (
        {"invoices": ["INV-0001", "INV-0002", "INV-0003"]},
        {"invoices": ["INV-0001"]},
        False,
    ),
    "transfer": ({"balance": 300, "savings": 700}, {"balance": 100, "savings": 900}, False),
}


def _apply(client: FlaskClient, **body: Any) -> dict[str, Any]:
    response = client.post(f"{L}/api/apply", json=body)
    assert response.status_code == 200, response.data
    data: dict[str, Any] = response.get_json()
    return data


@pytest.mark.parametrize("operation", list(ISSUE))
@pytest.mark.parametrize("dedup", [False, True])
def test_every_operation_retried(client: FlaskClient, operation: str, dedup: bool) -> None:
    without, with_dedup, natural = ISSUE[operation]
    data = _apply(client, operation=operation, times=3, dedup=dedup)
    expected = with_dedup if dedup else without
    assert {k: data["final_state"][k] for k in expected} == expected
    assert data["natural"] is natural
    assert [a["n"] for a in data["attempts"]] == [1, 2, 3]
    assert all(set(a) >= {"n", "status", "state"} for a in data["attempts"])
    assert isinstance(data["final_state"]["balance"], int)
    assert isinstance(data["final_state"]["invoices"], list)
    assert data["attempts"][-1]["state"] == data["final_state"]


def test_the_issue_values(client: FlaskClient) -> None:
    assert _apply(client, operation="add_balance", times=3)["final_state"]["balance"] == 300
    assert (
        _apply(client, operation="add_balance", times=3, dedup=True)["final_state"]["balance"]
        == 100
    )
    invoices = _apply(client, operation="create_invoice", times=3)["final_state"]["invoices"]
    assert len(invoices) == 3
    once = _apply(client, operation="create_invoice", times=3, dedup=True)
    assert len(once["final_state"]["invoices"]) == 1
    for dedup in (False, True):
        run = _apply(client, operation="set_balance", times=3, dedup=dedup)
        assert run["final_state"]["balance"] == 100 and run["natural"] is True


def test_every_run_starts_from_the_same_state(client: FlaskClient) -> None:
    first = _apply(client, operation="add_balance", times=2)
    second = _apply(client, operation="add_balance", times=2)
    assert first["final_state"] == second["final_state"]


def test_a_retried_delete_answers_404_on_the_same_state(client: FlaskClient) -> None:
    data = _apply(client, operation="delete_item", times=2)
    assert [a["status"] for a in data["attempts"]] == [204, 404]
    assert data["attempts"][0]["state"] == data["attempts"][1]["state"]
    assert data["natural"] and data["same_state"] and not data["same_response"]
    replayed = _apply(client, operation="delete_item", times=2, dedup=True, key="del-7")
    assert [a["status"] for a in replayed["attempts"]] == [204, 204]
    assert replayed["dedup_table"] == [{"key": "del-7", "applied": True, "status": 204}]


def test_the_delayed_duplicate(client: FlaskClient) -> None:
    plain = client.post(f"{L}/api/delayed-duplicate", json={"conditional": False}).get_json()
    assert [(w["client"], w["balance"], w["status"]) for w in plain["writes"]] == [
        ("A", 100, 200),
        ("B", 50, 200),
        ("A", 100, 200),
    ]
    assert plain["final_balance"] == 100
    guarded = client.post(f"{L}/api/delayed-duplicate", json={"conditional": True}).get_json()
    assert [w["status"] for w in guarded["writes"]] == [200, 200, 412]
    assert guarded["final_balance"] == 50
    assert client.post(f"{L}/api/delayed-duplicate", json={}).get_json()["final_balance"] == 100


def _views(client: FlaskClient) -> Any:
    return client.get(f"{L}/api/state").get_json()["views"]


def test_the_pixel_with_window_zero_counts_every_get(client: FlaskClient) -> None:
    for _ in range(3):
        response = client.get(f"{L}/pixel.gif?post=42")
        assert response.status_code == 200
        assert response.mimetype == "image/gif" and response.data.startswith(b"GIF89a")
        assert response.headers["Cache-Control"] == "no-store"
    state = client.get(f"{L}/api/state").get_json()
    assert state["views"] == {"42": 3}
    assert state["settings"] == {"pixel_dedup_window_s": 0}


def test_the_pixel_with_a_window_counts_one_viewer_once(client: FlaskClient) -> None:
    response = client.patch(f"{L}/api/settings", json={"pixel_dedup_window_s": 1800})
    assert response.get_json() == {"pixel_dedup_window_s": 1800}
    for _ in range(3):
        client.get(f"{L}/pixel.gif?post=42")
    assert _views(client) == {"42": 1}
    client.get(f"{L}/pixel.gif?post=7")
    assert _views(client) == {"42": 1, "7": 1}


def test_a_request_without_the_cookie_is_another_viewer(app: Flask) -> None:
    reader, chat_app = app.test_client(), app.test_client(use_cookies=False)
    reader.patch(f"{L}/api/settings", json={"pixel_dedup_window_s": 1800})
    reader.get(f"{L}/pixel.gif?post=42")
    for _ in range(2):
        chat_app.get(f"{L}/pixel.gif?post=42")
    assert _views(reader) == {"42": 3}


def test_the_window_runs_on_the_labs_clock(client: FlaskClient) -> None:
    client.patch(f"{L}/api/settings", json={"pixel_dedup_window_s": 1800})
    client.get(f"{L}/pixel.gif?post=42")
    client.post("/lab/nat1/api/clock", json={"advance_s": 1799})
    client.get(f"{L}/pixel.gif?post=42")  # a real second visit, within the window
    assert _views(client) == {"42": 1}
    client.post("/lab/nat1/api/clock", json={"advance_s": 1})
    client.get(f"{L}/pixel.gif?post=42")
    assert _views(client) == {"42": 2}


def test_the_viewer_cookie(client: FlaskClient) -> None:
    response = client.get(f"{L}/pixel.gif?post=42")
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith("natural_viewer=")
    for attribute in ("HttpOnly", "SameSite=Lax", "Path=/lab/nat1/natural"):
        assert attribute in cookie
    again = client.get(f"{L}/pixel.gif?post=42")
    assert "Set-Cookie" not in again.headers  # the browser sent it back: a known viewer


def test_a_prefetch_is_logged_and_counted(client: FlaskClient) -> None:
    client.get(f"{L}/pixel.gif?post=42", headers={"Sec-Purpose": "prefetch"})
    client.get(f"{L}/pixel.gif?post=42", headers={"Purpose": "prefetch"})
    client.get(f"{L}/pixel.gif?post=42")
    requests = client.get(f"{L}/api/state").get_json()["requests"]
    assert [r["result"]["prefetch"] for r in requests] == [True, True, False]
    assert _views(client) == {"42": 3}


def test_gets_other_than_the_pixel_change_nothing(app: Flask, client: FlaskClient) -> None:
    registry: LabRegistry = app.extensions["labs"]
    for path in ("", "/api/state", "/_partials/operations", "/_partials/pixel"):
        assert client.get(f"{L}{path}").status_code == 200
    assert registry.peek("nat1") is None
    client.post(f"{L}/api/apply", json={"operation": "add_balance"})
    lab = registry.peek("nat1")
    assert lab is not None
    before = lab.natural.state()
    for path in ("", "/api/state", "/_partials/operations", "/_partials/lesson"):
        client.get(f"{L}{path}")
    assert lab.natural.state() == before


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.data
    assert response.mimetype == "application/problem+json"
    data: dict[str, Any] = response.get_json()
    return data


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"operation": "nope"}, "operation"),
        ({"operation": "add_balance", "times": 0}, "times"),
        ({"operation": "add_balance", "times": 11}, "times"),
        ({"operation": "add_balance", "times": 2.0}, "times"),
        ({"operation": "add_balance", "dedup": 1}, "dedup"),
        ({"operation": "add_balance", "key": "é"}, "key"),
        ({"operation": "add_balance", "extra": True}, "extra"),
    ],
)
def test_a_bad_apply_is_422(app: Flask, client: FlaskClient, body: Any, field: str) -> None:
    problem = _problem(client.post(f"{L}/api/apply", json=body), 422)
    assert field in problem["errors"]
    assert app.extensions["labs"].peek("nat1") is None or not len(
        app.extensions["labs"].peek("nat1").natural.timeline
    )


def test_unreadable_bodies(client: FlaskClient) -> None:
    _problem(client.post(f"{L}/api/apply", data="{", content_type="application/json"), 400)
    _problem(client.post(f"{L}/api/apply", data="x", content_type="text/plain"), 415)
    _problem(client.post(f"{L}/api/delayed-duplicate", json={"conditional": "yes"}), 422)
    _problem(client.post(f"{L}/api/delayed-duplicate", json=[]), 422)
    _problem(client.get(f"{L}/_partials/nope"), 404)
    _problem(client.get(f"{L}/api/apply"), 405)


@pytest.mark.parametrize("value", [-1, 86401, 1.5, True, "60", None])
def test_a_bad_window_is_422_and_keeps_the_setting(client: FlaskClient, value: Any) -> None:
    client.patch(f"{L}/api/settings", json={"pixel_dedup_window_s": 60})
    problem = _problem(client.patch(f"{L}/api/settings", json={"pixel_dedup_window_s": value}), 422)
    assert "pixel_dedup_window_s" in problem["errors"]
    _problem(client.patch(f"{L}/api/settings", json={"other": 1}), 422)
    assert client.get(f"{L}/api/state").get_json()["settings"] == {"pixel_dedup_window_s": 60}


@pytest.mark.parametrize("post", ["", "abc", "4 2", "1234567890", "42\n"])
def test_a_bad_post_id_is_422(client: FlaskClient, post: str) -> None:
    _problem(client.get(f"{L}/pixel.gif", query_string={"post": post}), 422)
    _problem(client.get(f"{L}/pixel.gif"), 422)
    assert _views(client) == {}


def test_htmx_gets_the_fragment_with_the_card_and_timeline(client: FlaskClient) -> None:
    response = client.post(
        f"{L}/api/apply", json={"operation": "add_balance"}, headers={"HX-Request": "true"}
    )
    html = response.get_data(as_text=True)
    assert response.mimetype == "text/html" and 'id="natural-operations"' in html
    assert 'id="natural-timeline" class="card natural-timeline"' in html
    assert html.count('hx-swap-oob="true"') == 4  # the card, the path, the timeline, the poll
    assert "needs a dedup record" in html


def test_the_payment_page_shows_while_an_operations_lesson_is_open(client: FlaskClient) -> None:
    assert client.post("/lab/nat1?lesson=set-vs-add").headers["Location"] == L
    for path in ("/lab/nat1", "/lab/nat1/panels", "/lab/nat1?scenario=tracking-pixel&lab=natural"):
        response = client.get(path)
        assert response.status_code == 200, path


def test_lesson_1_of_the_payment_lab_links_here_once_achieved(app: Flask) -> None:
    from demo.lessons.engine import Progress

    client = app.test_client()
    client.post("/lab/nat1?lesson=double-click")
    assert "which operations survive" not in client.get("/lab/nat1").get_data(as_text=True)
    lab = app.extensions["labs"].peek("nat1")
    lab.progress["double-click"] = Progress(met_at={"keyless-double": 1.0, "keyed-once": 2.0})
    html = client.get("/lab/nat1").get_data(as_text=True)
    assert "A detour before lesson 2, in the Operations lab: which operations" in html
    assert 'action="/lab/nat1?lesson=set-vs-add"' in html
    response = client.post("/lab/nat1?lesson=set-vs-add")
    assert response.status_code == 303 and response.headers["Location"] == L


def test_the_pixel_of_a_read_only_replay_is_409(app: Flask, client: FlaskClient) -> None:
    client.get(f"{L}/pixel.gif?post=42")
    app.extensions["labs"].peek("nat1").read_only = True
    _problem(client.get(f"{L}/pixel.gif?post=42"), 409)
    _problem(client.post(f"{L}/api/apply", json={"operation": "set_flag"}), 409)
    app.extensions["labs"].peek("nat1").read_only = False
    assert _views(client) == {"42": 1}


@pytest.mark.parametrize(
    "scenario", ["set-vs-add", "which-are-natural", "lost-update", "tracking-pixel"]
)
def test_every_state_of_the_page_renders_in_vietnamese(scenario: str) -> None:
    from demo import create_app
    from demo.web.i18n import MISSING

    app = create_app({"TESTING": True, "I18N_MARK_MISSING": True})
    client = app.test_client()
    vi = {"Accept-Language": "vi"}
    client.post(f"/lab/nat1?lesson={scenario}")
    client.post(f"{L}/api/apply", json={"operation": "delete_item", "times": 2, "dedup": True})
    client.post(f"{L}/api/apply", json={"operation": "add_balance", "times": 1})
    for operation in ISSUE:
        client.post(f"{L}/api/apply", json={"operation": operation, "times": 3})
    client.post(f"{L}/api/delayed-duplicate", json={"conditional": True})
    client.get(f"{L}/pixel.gif?post=42")
    client.patch(f"{L}/api/settings", json={"pixel_dedup_window_s": 1800})
    client.get(f"{L}/pixel.gif?post=42")
    client.patch(f"{L}/api/settings", json={"pixel_dedup_window_s": 7})
    client.post(f"{L}/lessons/{scenario}/hint")
    client.post(f"{L}/lessons/{scenario}/hint")
    for path in ("", "/_partials/lesson", "/_partials/pixel", "/_partials/timeline"):
        html = client.get(f"{L}{path}", headers=vi).get_data(as_text=True)
        assert MISSING not in html, path
    assert "Phòng lab thao tác" in client.get(L, headers=vi).get_data(as_text=True)
    problem = client.get(f"{L}/pixel.gif?post=x", headers=vi).get_json()
    assert MISSING not in problem["title"] + problem["detail"]
    problem = client.post(f"{L}/api/apply", json={"operation": "x"}, headers=vi).get_json()
    assert MISSING not in problem["title"] + problem["detail"]


def test_the_page_poll_answers_204_until_the_lab_changes(app: Flask, client: FlaskClient) -> None:
    client.post(f"{L}/api/apply", json={"operation": "set_flag"})
    version = app.extensions["labs"].peek("nat1").version
    html = client.get(L).get_data(as_text=True)
    assert f"/_partials/pixel?since={version}" in html
    assert client.get(f"{L}/_partials/pixel?since={version}").status_code == 204
    client.get(f"{L}/pixel.gif?post=42")  # a change: the next poll redraws
    redraw = client.get(f"{L}/_partials/pixel?since={version}")
    assert redraw.status_code == 200
    new = app.extensions["labs"].peek("nat1").version
    assert f"since={new}" in redraw.get_data(as_text=True)  # the poll itself moves on


def test_a_single_attempt_is_named_in_the_singular(client: FlaskClient) -> None:
    _apply(client, operation="add_balance", times=1)
    page = client.get(L).get_data(as_text=True)
    assert "from 1 attempt, dedup" in page
    assert "1 attempts" not in page


def test_the_set_vs_add_steps_hold_for_any_attempts(client: FlaskClient, app: Flask) -> None:
    """Run K: after Attempts was set to 5, the card still said "it runs Attempts (3) times"
    and "3 attempts, and the balance ends at 100", which the lab no longer did."""
    registry: LabRegistry = app.extensions["labs"]
    registry.get("nat1").open_lesson("set-vs-add")
    _apply(client, operation="add_balance", times=5)
    page = client.get(L).get_data(as_text=True)
    assert "Attempts (3)" not in page and "3 attempts, and" not in page
    assert "as many times as Attempts says" in page
