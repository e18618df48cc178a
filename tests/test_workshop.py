"""The workshop around the lab over HTTP: lessons, presenter mode, the instructor's view,
and export / read-only replay of a lab's history."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo.workspace import Workspace

KEY = {"Idempotency-Key": "t1:u7:pay:order-42:v1"}
BODY = {"order_id": "42", "amount": 100000}
JSON = {"Accept": "application/json"}


def pay(client: FlaskClient, lab_id: str, **headers: str) -> Any:
    return client.post(f"/lab/{lab_id}/api/charges", json=BODY, headers={**KEY, **headers})


# -- lessons ---------------------------------------------------------------------------


def test_opening_a_lesson_applies_its_scenario_and_lists_the_path(
    client: FlaskClient, lab_of: Any
) -> None:
    answer = client.post("/lab/w-lesson?lesson=decline")
    assert answer.status_code == 303
    assert answer.headers["Location"].endswith("/lab/w-lesson")
    lab: Workspace = lab_of("w-lesson")
    assert lab.lesson is not None and lab.lesson.name == "decline"
    assert lab.payments.settings.gateway_decline
    html = client.get("/lab/w-lesson").text
    assert 'data-lesson="decline"' in html
    assert "0 of 10 achieved" in html
    assert "Lesson achieved" not in html


def test_a_lesson_is_achieved_over_http_and_the_page_says_so(
    client: FlaskClient, lab_of: Any
) -> None:
    client.post("/lab/w-done?lesson=decline")
    assert pay(client, "w-done").status_code == 402
    assert pay(client, "w-done").headers["Idempotent-Replayed"] == "true"
    client.post("/lab/w-done?scenario=decline&fixed=1")
    assert pay(client, "w-done").status_code == 502
    assert pay(client, "w-done").status_code == 201
    state = client.get("/lab/w-done/api/state").get_json()
    assert state["lessons"]["decline"]["achieved"] is True
    html = client.get("/lab/w-done").text
    assert "Lesson achieved" in html
    assert "1 of 10 achieved" in html


def test_hints_and_lesson_reset_over_http(client: FlaskClient, lab_of: Any) -> None:
    client.post("/lab/w-hint?lesson=race")
    answer = client.post("/lab/w-hint/lessons/race/hint", headers={"HX-Request": "true"})
    assert answer.status_code == 200
    assert "Both requests look the key up" in answer.text
    assert "Apply the fix switches" not in answer.text
    assert client.post("/lab/w-hint/lessons/race/hint").status_code == 303
    assert lab_of("w-hint").progress["race"].hints == 2
    assert client.post("/lab/w-hint/lessons/race/reset").status_code == 303
    assert lab_of("w-hint").progress["race"].hints == 0


@pytest.mark.parametrize(
    "url", ["/lab/w-404?lesson=nope", "/lab/w-404/lessons/nope/hint", "/lab/w-404/lessons/x/reset"]
)
def test_an_unknown_lesson_is_a_404_problem(client: FlaskClient, url: str) -> None:
    call = client.get if "?" in url else client.post
    answer = call(url, headers=JSON)
    assert answer.status_code == 404
    assert answer.mimetype == "application/problem+json"


# -- presenter mode --------------------------------------------------------------------


def test_presenter_mode_is_a_switch_kept_in_the_lab(client: FlaskClient, lab_of: Any) -> None:
    assert client.post("/lab/w-present?present=1").status_code == 303
    assert lab_of("w-present").present
    html = client.get("/lab/w-present").text
    assert 'id="page" class="present"' in html
    assert 'aria-checked="true"' in html
    client.post("/lab/w-present?present=0")
    assert 'id="page" class="present"' not in client.get("/lab/w-present").text


def test_present_and_a_lesson_in_one_link(client: FlaskClient, lab_of: Any) -> None:
    client.post("/lab/w-both?present=1&lesson=race")
    lab = lab_of("w-both")
    assert lab.present and lab.lesson.name == "race"


# -- the instructor's view -------------------------------------------------------------


def token(app: Flask) -> str:
    return str(app.config["INSTRUCTOR_TOKEN"])


@pytest.mark.parametrize("query", ["", "?token=", "?token=wrong", "?token[]=x"])
def test_the_instructor_view_needs_the_token(client: FlaskClient, query: str) -> None:
    for path in ("/instructor", "/instructor/stats"):
        answer = client.get(path + query, headers=JSON)
        assert answer.status_code == 403
        assert answer.get_json()["title"] == "Instructors only"


def test_the_instructor_view_counts_the_room_and_names_no_lab(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A person's lab is proven once used again a moment after its creation; here, at once.
    monkeypatch.setattr("demo.registry.PROVEN_AFTER_S", 0.0)
    client.post("/lab/room-a-secret?lesson=decline")
    pay(client, "room-a-secret")
    pay(client, "room-a-secret")
    client.post("/lab/room-a-secret?scenario=decline&fixed=1")
    pay(client, "room-a-secret")
    pay(client, "room-a-secret")
    client.post("/lab/room-b-secret?lesson=race")
    client.post("/lab/room-b-secret/api/charges", json=BODY)  # keyless: charges
    client.post("/lab/room-b-secret/api/charges", json=BODY)  # and again: a double charge
    html = client.get(f"/instructor?token={token(app)}").text
    assert "room-a-secret" not in html and "room-b-secret" not in html
    assert '<span class="big active-labs">2</span>' in html
    assert '<span class="room-charged">3</span> / <span class="room-intended">2</span>' in html
    row = html.split('data-lesson="decline"')[1].split("</tr>")[0]
    assert '<td class="achieved-count">1</td>' in row
    row = html.split('data-lesson="race"')[1].split("</tr>")[0]
    assert '<td class="achieved-count">0</td>' in row
    stats = client.get(f"/instructor/stats?token={token(app)}").text
    assert 'class="big active-labs">2<' in stats


def test_the_instructor_view_counts_only_labs_in_use_not_a_flood(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 10 (L10): a flood writes once to each of many ids (unproven labs), or leaves
    them blank; "active labs" counts only the labs people use."""
    monkeypatch.setattr("demo.registry.PROVEN_AFTER_S", 0.0)
    client.post("/lab/room-person?lesson=race")
    pay(client, "room-person")
    monkeypatch.setattr("demo.registry.PROVEN_AFTER_S", 3600.0)  # the flood's labs stay unproven
    for n in range(5):
        pay(client, f"room-flood-{n}")
    monkeypatch.setattr("demo.registry.PROVEN_AFTER_S", 0.0)
    client.post("/lab/room-blank/api/reset")  # proven, but blank: nothing in it
    client.post("/lab/room-blank/api/reset")
    html = client.get(f"/instructor?token={token(app)}").text
    assert '<span class="big active-labs">1</span>' in html
    assert '<span class="room-charged">1</span> / <span class="room-intended">1</span>' in html


# -- export and replay -----------------------------------------------------------------


def played(client: FlaskClient, lab_id: str) -> None:
    client.post(f"/lab/{lab_id}?scenario=lost-response")
    pay(client, lab_id, **{"X-Lab-Action": "Pay"})
    pay(client, lab_id, **{"X-Lab-Action": "Retry"})
    client.post(f"/lab/{lab_id}/api/charges", json={**BODY, "amount": 5}, headers=KEY)


def test_export_then_replay_gives_the_same_history(client: FlaskClient, lab_of: Any) -> None:
    played(client, "w-export")
    exported = client.get("/lab/w-export/history.json")
    assert exported.status_code == 200
    assert "attachment" in exported.headers["Content-Disposition"]
    data = exported.get_json()
    assert [r["outcome"] for r in data["requests"]] == ["charged", "replayed", "conflict"]
    answer = client.post(
        "/replay",
        data={"history": (io.BytesIO(exported.data), "idempotency-lab.json")},
        content_type="multipart/form-data",
    )
    assert answer.status_code == 303
    replay_id = answer.headers["Location"].rsplit("/", 1)[1]
    assert replay_id != "w-export"
    original = client.get("/lab/w-export/api/state").get_json()
    replayed = client.get(f"/lab/{replay_id}/api/state").get_json()
    for part in ("settings", "charges", "emails", "summary"):
        assert replayed[part] == original[part], part
    strip = ("duration_ms",)
    assert [{k: v for k, v in r.items() if k not in strip} for r in replayed["requests"]] == [
        {k: v for k, v in r.items() if k not in strip} for r in original["requests"]
    ]
    assert client.get(f"/lab/{replay_id}/history.json").get_json()["requests"] == data["requests"]
    html = client.get(f"/lab/{replay_id}").text
    assert "Read-only replay" in html
    assert html.count('class="lane') == client.get("/lab/w-export").text.count('class="lane')


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/api/charges", BODY),
        ("patch", "/api/settings", {"lock": False}),
        ("post", "/api/reset", None),
        ("post", "/api/clock", {"advance_s": 60}),
        ("post", "/new-order", None),
    ],
)
def test_a_replay_lab_runs_nothing(
    client: FlaskClient, lab_of: Any, method: str, path: str, body: Any
) -> None:
    played(client, "w-ro")
    data = client.get("/lab/w-ro/history.json").data
    replay_id = (
        client.post("/replay", data=data, content_type="application/json")
        .headers["Location"]
        .rsplit("/", 1)[1]
    )

    def state() -> dict[str, Any]:
        now = client.get(f"/lab/{replay_id}/api/state").get_json()
        return {k: v for k, v in now.items() if k not in ("clock", "records")}

    before = state()
    answer = getattr(client, method)(f"/lab/{replay_id}{path}", json=body, headers=JSON)
    assert answer.status_code == 409
    assert answer.get_json()["type"] == "/problems/read-only-replay"
    assert state() == before
    assert client.get(f"/lab/{replay_id}?scenario=race", headers=JSON).status_code == 409


@pytest.mark.parametrize(
    ("body", "status", "where"),
    [
        (b"", 400, None),
        (b"{nope", 400, None),
        (b"[]", 422, "format"),
        (b'{"format": "idempotency-demo/history", "version": 9}', 422, "version"),
        (b'{"format": "idempotency-demo/history", "version": 1, "settings": {"lock": 3}}', 422,
         "settings"),
        (b'{"format": "idempotency-demo/history", "version": 1, "settings": {}, "requests": 5}',
         422, "requests"),
        (b'{"format": "idempotency-demo/history", "version": 1, "settings": {}, "requests": [{}]}',
         422, "requests[0].started_ms"),
    ],
)  # fmt: skip
def test_a_bad_history_is_a_clear_problem(
    client: FlaskClient, app: Flask, body: bytes, status: int, where: str | None
) -> None:
    labs = len(app.extensions["labs"])
    answer = client.post("/replay", data=body, content_type="application/json", headers=JSON)
    assert answer.status_code == status
    assert answer.mimetype == "application/problem+json"
    if where:
        assert where in answer.get_json()["errors"]
    assert len(app.extensions["labs"]) == labs  # a bad file takes no lab slot


def test_a_history_with_a_bad_step_or_charge_is_refused(client: FlaskClient) -> None:
    played(client, "w-bad")
    data = client.get("/lab/w-bad/history.json").get_json()
    for breakage in (
        lambda d: d["requests"][0].update(idempotency_key="k\u0007ey"),
        lambda d: d["requests"][0].update(action="line\nbreak"),
        lambda d: d["requests"][0]["steps"].append({"step": "lookup", "at_ms": 1.7e308}),
        lambda d: d["requests"][0]["steps"].append({"step": "lookup", "at_ms": -1}),
        lambda d: d.update(version=True),
        lambda d: d.update(version=1.0),
        lambda d: d["requests"].append(dict(d["requests"][0])),  # the same id twice
        lambda d: d["charges"].append(dict(d["charges"][0])),  # a charge listed twice
        lambda d: d["requests"][0].update(outcome="in_flight"),
        lambda d: d["charges"][0].update(amount=-5),
        lambda d: d["charges"][0].update(amount=10**300),
        lambda d: d["charges"][0].update(currency="dollars"),
        lambda d: d["requests"][0]["steps"].append({"step": "rm -rf", "at_ms": 1}),
        lambda d: d["charges"].append({"id": "x", "amount": "lots"}),
        lambda d: d["requests"][0].update(status=9000),
        lambda d: d["requests"][0].update(body={"order_id": "42", "amount": True}),
    ):
        broken = json.loads(json.dumps(data))
        breakage(broken)
        body = json.dumps(broken).encode()
        answer = client.post("/replay", data=body, content_type="application/json", headers=JSON)
        assert answer.status_code == 422, broken["requests"][0]
        assert answer.mimetype == "application/problem+json"


def test_a_history_past_one_mebibyte_is_413(client: FlaskClient) -> None:
    answer = client.post(
        "/replay", data=b" " * (1024 * 1024 + 10), content_type="application/json", headers=JSON
    )
    assert answer.status_code == 413
    assert answer.mimetype == "application/problem+json"


def test_a_history_larger_than_a_charge_body_opens(client: FlaskClient) -> None:
    """The 16 KiB body limit is for charges; a history of a busy lab is far larger."""
    for n in range(60):
        client.post(
            "/lab/w-big/api/charges",
            json={"order_id": str(n), "amount": 100},
            headers={"Idempotency-Key": f"k-{n}"},
        )
    data = client.get("/lab/w-big/history.json").data
    assert len(data) > 16 * 1024
    answer = client.post("/replay", data=data, content_type="application/json")
    assert answer.status_code == 303
    replay = client.get(answer.headers["Location"] + "/api/state").get_json()
    assert len(replay["requests"]) == 60
    assert replay["summary"]["charged"] == 60


def test_a_history_with_repeated_members_is_refused_like_a_charge(client: FlaskClient) -> None:
    body = b'{"format": "idempotency-demo/history", "format": "x", "version": 1}'
    answer = client.post("/replay", data=body, content_type="application/json", headers=JSON)
    assert answer.status_code == 400
    assert answer.get_json()["type"] == "/problems/malformed-json"


def test_a_bad_upload_from_the_page_gets_an_html_page_not_raw_json(client: FlaskClient) -> None:
    answer = client.post(
        "/replay",
        data={"history": (io.BytesIO(b"[1, 2]"), "not-a-history.json")},
        content_type="multipart/form-data",
        headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"},
    )
    assert answer.status_code == 422
    assert answer.mimetype == "text/html"
    assert "Not a lab history" in answer.text and "Open a fresh lab" in answer.text


def test_a_replay_refuses_lessons_and_hints_but_takes_its_language_and_presenter_mode(
    client: FlaskClient, lab_of: Any
) -> None:
    played(client, "w-ro2")
    data = client.get("/lab/w-ro2/history.json").data
    location = client.post("/replay", data=data, content_type="application/json").headers[
        "Location"
    ]
    for call in (
        lambda: client.get(location + "?lesson=race", headers=JSON),
        lambda: client.post(location + "?lesson=race", headers=JSON),
        lambda: client.post(location + "?present=1&scenario=race", headers=JSON),
        lambda: client.post(location + "/lessons/race/reset", headers=JSON),
        lambda: client.post(location + "/lessons/race/hint", headers=JSON),
    ):
        assert call().status_code == 409
    assert lab_of(location.rsplit("/", 1)[1]).progress == {}  # no hint was shown
    assert client.post(location + "/language", data={"language": "vi"}).status_code == 303
    assert client.post(location + "?present=1").status_code == 303


def test_the_instructor_view_has_a_table_per_lab_chapter(
    app: Flask, client: FlaskClient, lab_of: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The room's progress on every lab's lessons, not the payment lab's only: an achieved
    operations lesson counts in the Operations table, under its own title."""
    from demo.lessons import CHAPTERS, LESSONS
    from demo.lessons.engine import Progress

    monkeypatch.setattr("demo.registry.PROVEN_AFTER_S", 0.0)
    client.post("/lab/room-ops-secret?lesson=set-vs-add")
    pay(client, "room-ops-secret")  # used again: a lab in use
    lab: Workspace = lab_of("room-ops-secret")
    checks = [check.id for check in LESSONS["set-vs-add"].checks]
    lab.progress["set-vs-add"] = Progress(met_at=dict.fromkeys(checks, 0.0))
    html = client.get(f"/instructor?token={token(app)}").text
    for lab_name, title in (("payments", "Payments"), ("natural", "Operations"),
                            ("retries", "Retries"), ("queue", "Queue")):  # fmt: skip
        assert f'id="room-{lab_name}">Lessons achieved: {title}</h2>' in html
        for lesson in CHAPTERS[lab_name]:
            assert f'data-lesson="{lesson.name}"' in html
    row = html.split('data-lesson="set-vs-add"')[1].split("</tr>")[0]
    assert '<td class="achieved-count">1</td>' in row and "SET survives a retry" in row
