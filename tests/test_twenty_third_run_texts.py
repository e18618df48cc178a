"""The twenty-third run: what the lab says, checked in its words (both languages)."""

from __future__ import annotations

import gettext
import html as html_lib
import io
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_header_values import _waitress, raw_post
from test_step_mode import quiet, requests

from demo.engine.stepping import PAUSED_MS
from demo.engine.text import translate
from demo.engine.timeline import Step
from demo.payments.explain import explain
from demo.payments.explain.charged import RETRY
from demo.payments.gateway import summarise
from demo.payments.requests import RequestEntry
from demo.payments.scenarios import SCENARIOS
from demo.payments.settings import Settings
from demo.web.i18n import TRANSLATIONS
from demo.web.payments.timeline import timeline
from demo.workspace import Workspace

EN = {"Accept-Language": "en"}
BODY = {"order_id": "42", "amount": 100000}
VI = gettext.GNUTranslations(io.BytesIO((TRANSLATIONS / "vi/LC_MESSAGES/messages.mo").read_bytes()))


def test_a_pause_at_a_step_with_no_line_of_its_own_names_that_step() -> None:
    """Step mode, lesson 5: after "record save: completed" a lane read "paused by you: 0.9 s"
    then "paused by you: 4.6 s", two pauses with no step between (the second stood at
    ``respond``, which the timeline draws as the final "→ 201")."""
    entry = RequestEntry(1, "Double-submit A", started=10.0, key="k")
    entry.steps += [
        Step("lookup", 1.0, {"hit": False, PAUSED_MS: 900.0}),
        Step("record save", 2_000.0, {PAUSED_MS: 900.0}),
        Step("respond", 2_900.0, {"status": 201, PAUSED_MS: 4_600.0}),
    ]
    entry.finished = 17.5
    [cluster] = timeline([entry])
    pauses = [m.text for m in cluster.lanes[0].marks if m.name == "paused"]
    assert [translate(p) for p in pauses] == [
        "paused by you: 0.9 s",
        "paused by you: 0.9 s",
        "paused by you at respond: 4.6 s",
    ]
    assert translate(pauses[-1], VI.gettext) == "bạn tạm dừng ở respond (trả phản hồi): 4.6 s"


def test_the_advice_under_a_charge_never_promises_a_replay_another_instance_cannot_give(
    client: FlaskClient,
) -> None:
    """Lesson 8, several instances with their own stores: after Pay the answer said "A Retry
    from here … would replay this response, not charge again"; the card's next step,
    Retry, charged again on i2."""
    lab = "/lab/nu23-apart"
    client.patch(f"{lab}/api/settings", json={"instances": 2, "store_scope": "per_instance"})
    headers = {"HX-Request": "true", "Idempotency-Key": "k-apart", "X-Lab-Action": "Pay"}
    pay = client.post(f"{lab}/api/charges", json=BODY, headers=headers)
    assert pay.status_code == 201
    page = html_lib.unescape(client.get(lab, headers=EN).text)
    assert "a Retry from here reaches a store that never saw key k-apart" in page
    assert RETRY not in page
    vi = html_lib.unescape(client.get(lab, headers={"Accept-Language": "vi"}).text)
    assert "tới một store chưa từng thấy key k-apart" in vi
    # And it is true: the Retry charges again.
    headers["X-Lab-Action"] = "Retry"
    assert client.post(f"{lab}/api/charges", json=BODY, headers=headers).status_code == 201
    # One shared store: the replay it promises.
    client.patch(f"{lab}/api/settings", json={"store_scope": "shared"})
    headers = {**headers, "Idempotency-Key": "k-shared", "X-Lab-Action": "Pay"}
    client.post(f"{lab}/api/charges", json={**BODY, "order_id": "43"}, headers=headers)
    assert RETRY in html_lib.unescape(client.get(lab, headers=EN).text)


def test_no_scenario_title_names_the_setting_its_fix_changes() -> None:
    """Lesson 4 after Apply the fix read "Lesson: The race (lock off)" beside "fix ON: Lock
    on": a title stays on the card with the fix on, so it names the case, not a setting."""
    for scenario in SCENARIOS.values():
        for setting in scenario.fix:
            assert f"({setting} " not in scenario.title.lower(), scenario.title
    assert translate(SCENARIOS["race"].title) == "The race: two requests, one key"


def test_a_wait_on_a_holder_released_at_once_is_not_blamed_on_stepping() -> None:
    """Step mode, both requests stopped after lookup, then Release all: the replay said "It
    waited 306 ms for the per-key lock, which #1 held: in step mode #1 stood paused until
    you stepped it on". Nobody stepped #1: the wait was its gateway charge."""
    lab = Workspace("nu23-wait", settings=Settings(gateway_latency_ms=300, step_mode=True))
    with requests(lab, 2):
        quiet(lab)
        lab.payments.stepper.release_all()
    entries = lab.payments.requests()
    replay = next(e for e in entries if e.outcome == "replayed")
    said = " ".join(
        translate(s)
        for s in explain(entries, summarise(lab.payments.gateway.ledger()), replay).sentences
    )
    # Released together, either may take the lock first.
    assert re.search(r"arrived while #[12] was still charging", said), said
    assert "stood paused" not in said


def test_a_lock_that_was_free_is_not_drawn_as_a_wait() -> None:
    """One Pay's lane read "+0 ms lock wait", then "lock acquire: no wait": as if it had
    waited. A wait that took time stays on the timeline."""

    def lane(waited_ms: float) -> list[str]:
        entry = RequestEntry(1, "Pay", started=10.0, key="k")
        entry.steps += [
            Step("lookup", 0.1, {"hit": False}),
            Step("lock wait", 0.2, {}),
            Step("lock acquire", 0.2 + waited_ms, {"waited_ms": waited_ms}),
        ]
        entry.finished = 10.5
        [cluster] = timeline([entry])
        return [m.name for m in cluster.lanes[0].marks]

    assert "lock wait" not in lane(0.0) and "lock acquire" in lane(0.0)
    assert "lock wait" in lane(250.0)


@pytest.mark.parametrize("char", [b"\x00", b"\x01", b"\x7f"])
def test_a_control_character_in_a_header_is_refused_by_the_server_itself(
    app: Flask, char: bytes
) -> None:
    """As the README says: the server answers a plain-text 400 before the app, and nothing
    reaches the lab (a new user expected the app's problem+json)."""
    port, stop = _waitress(app)
    try:
        status, body = raw_post(port, "nu23-ctl", [b" a" + char + b"b"])
    finally:
        stop()
    assert status == 400 and b"Invalid header" in body
    assert app.extensions["labs"].peek("nu23-ctl") is None


@pytest.mark.parametrize(
    "url",
    [
        "/lab/nu23-body/api/charges",
        "/lab/nu23-body/natural/api/apply",
        "/lab/nu23-body/queue/api/jobs",
        "/lab/nu23-body/retries/api/run",
    ],
)
def test_a_body_in_another_charset_is_415_and_a_bom_is_said_plainly(
    client: FlaskClient, url: str
) -> None:
    """``charset=latin-1`` was accepted and the body read as UTF-8 anyway; a body starting
    with a BOM was told "(decode using utf-8-sig)", the parser's own advice."""
    latin = client.post(
        url, data=b"{}", headers={"Content-Type": "application/json; charset=latin-1"}
    )
    assert latin.status_code == 415 and latin.mimetype == "application/problem+json"
    assert "not charset=latin-1" in latin.json["detail"]
    fine = client.post(url, data=b"{}", headers={"Content-Type": "application/json; charset=UTF-8"})
    assert fine.status_code != 415
    bom = client.post(url, data=b"\xef\xbb\xbf{}", headers={"Content-Type": "application/json"})
    assert bom.status_code == 400 and bom.mimetype == "application/problem+json"
    assert "byte order mark" in bom.json["detail"] and "utf-8-sig" not in bom.json["detail"]


def test_the_retry_cards_two_run_buttons_say_how_they_differ(client: FlaskClient) -> None:
    """ "Run" and "Run the steps" sat side by side on the retry card, the difference unsaid;
    the 402 step read as a step of the lesson, and "." went on without it."""
    for lang, run, steps, optional in (
        (
            "en",
            "The policy and fault plan on the left",
            "The lesson sets its policy",
            "If you like",
        ),
        ("vi", "Chính sách và kế hoạch lỗi bên trái", "Bài học đặt chính sách", "Tùy bạn"),
    ):
        client.post("/lab/nu23-runs", data={"lesson": "retry-policy"})
        html = html_lib.unescape(
            client.get("/lab/nu23-runs/retries", headers={"Accept-Language": lang}).text
        )
        assert f'title="{run}' in html and f'title="{steps}' in html
        assert optional not in html  # the fix's steps only
        client.post(
            "/lab/nu23-runs", data={"scenario": "retry-policy", "lab": "retries", "fixed": "1"}
        )
        fixed = client.get("/lab/nu23-runs/retries", headers={"Accept-Language": lang}).text
        assert optional in html_lib.unescape(fixed)


def test_the_lost_update_panel_and_the_card_do_not_both_say_expected(
    client: FlaskClient,
) -> None:
    """Operations lesson 3: the card said "expected without the fix 100 actual 100", the
    panel beside it "Final balance expected 50 actual 100": two expected numbers."""
    client.post("/lab/nu23-lost", data={"lesson": "lost-update"})
    client.post("/lab/nu23-lost/natural/api/delayed-duplicate", json={})
    for lang, should in (("en", "should be"), ("vi", "đúng ra là")):
        html = html_lib.unescape(
            client.get("/lab/nu23-lost/natural", headers={"Accept-Language": lang}).text
        )
        panel = html[html.index('id="natural-lost-update"') :]
        assert f"<span>{should} <strong>50</strong></span>" in panel


def test_a_scenarios_failure_with_its_fix_off_is_evidence_not_a_mismatch(
    client: FlaskClient,
) -> None:
    """The Client-side guard scenario, Run the steps: "Charges expected 2 actual 3
    MISMATCH" in red, where the lessons word the failure they show as evidence."""
    lab = "/lab/nu23-guard"
    client.post(lab, data={"scenario": "client-guard"})
    for key in ("k-tab-1", "k-tab-2"):  # two tabs, two keys, one order
        headers = {"Idempotency-Key": key, "X-Lab-Action": "Pay"}
        assert client.post(f"{lab}/api/charges", json=BODY, headers=headers).status_code == 201
    card = html_lib.unescape(client.get(lab, headers=EN).text)
    card = card[card.index('id="lesson"') :]
    assert "1 extra: the failure you caused, kept as evidence" in card
    assert "MISMATCH" not in card
    client.post(lab, data={"scenario": "client-guard", "fixed": "1"})
    for key in ("k-tab-3", "k-tab-4"):  # with the fix on, the same failure is a mismatch
        headers = {"Idempotency-Key": key, "X-Lab-Action": "Pay"}
        client.post(f"{lab}/api/charges", json=BODY, headers=headers)
    assert "MISMATCH" in client.get(lab, headers=EN).text


def test_a_content_type_that_names_no_media_type_is_not_called_missing(
    client: FlaskClient,
) -> None:
    """``Content-Type: ;;;===`` was told "The request has no Content-Type header"."""
    answer = client.post("/lab/nu23-ct/api/charges", data=b"{}", headers={"Content-Type": ";;;==="})
    assert answer.status_code == 415
    assert answer.json["detail"] == (
        "The Content-Type header (;;;===) names no media type: send the body as application/json."
    )


def test_a_short_ttl_under_reject_names_the_field_once(client: FlaskClient) -> None:
    """``{"in_flight": "reject", "ttl_s": 10}`` was told "ttl_s must leave ttl_s at least
    30 s…"."""
    answer = client.patch("/lab/nu23-ttl/api/settings", json={"in_flight": "reject", "ttl_s": 10})
    assert answer.status_code == 422
    assert answer.json["errors"] == {
        "ttl_s": 'must be at least 30 s (the in-progress deadline) under in_flight "reject"'
    }
    client.patch("/lab/nu23-ttl/api/settings", json={"ttl_s": 10})
    answer = client.patch("/lab/nu23-ttl/api/settings", json={"in_flight": "reject"})
    assert answer.json["errors"]["in_flight"].startswith("must leave ttl_s at least 30 s")


def test_no_queue_story_describes_the_fix_off_when_the_fix_is_on() -> None:
    """Queue lesson 1 after Apply the fix: "fix ON" above "(with dedup off it records
    nothing)". A story is shown in both states, so it never says what a setting is now."""
    from demo.queue.scenarios import SCENARIOS as QUEUE

    for scenario in QUEUE.values():
        for setting in scenario.fix:
            assert f"with {setting} off" not in scenario.story, scenario.name
