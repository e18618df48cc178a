"""The seventh new-user run through the ten payment lessons: what it found in step mode's
lane texts, the failure lab's feedback and the order form's words (both languages)."""

from __future__ import annotations

import re

import pytest
from test_sixth_run_texts import VI, stepping_lab
from test_step_mode import quiet, requests, step

from demo import create_app


def _step_card(app, lab_id: str, language: str) -> str:  # type: ignore[no-untyped-def]
    page = app.test_client().get(f"/lab/{lab_id}", headers={"Accept-Language": language})
    found = re.search(r'<section id="step".*?</ul>', page.get_data(as_text=True), re.S)
    assert found
    return found.group(0)


def _say(language: str, msgid: str, **values: str) -> str:
    text = msgid if language == "en" else VI.gettext(msgid)
    return text % values


@pytest.mark.parametrize("language", ["en", "vi"])
def test_a_lane_says_the_lock_is_free_and_that_the_money_moved(language: str) -> None:
    """Findings 4 and 5: after the fix, A's first step read just "stopped at lock wait"
    (as if A had waited); with the lock off, "stopped after gateway charge" never said the
    money had moved, and presenter mode's ledger is off screen."""
    app, lab = stepping_lab(f"nu7-lanes-{language}", lock=True)
    with requests(lab, 1):
        step(lab, "A")  # lookup -> lock wait: nobody holds the lock
        quiet(lab)
        card = _step_card(app, lab.id, language)
    wait = "lock wait" if language == "en" else "lock wait (chờ lock)"
    assert _say(language, "stopped at <b>%(step)s</b>: the lock is free, its next step "
                "takes it", step=wait) in card  # fmt: skip
    lab.payments.update_settings({"lock": False})
    lab.reset()  # the first request saved the key's record: a fresh store, so both charge
    with requests(lab, 2):
        while step(lab, "A"):
            if quiet(lab)[0]["step"] == "gateway charge":
                break
        card = _step_card(app, lab.id, language)
    moved = (
        "stopped after <b>%(step)s</b>: the money moved, its charge is in the ledger "
        "(all lanes' charges so far: charged %(charged)s / intended %(intended)s)"
    )
    charge = "gateway charge" if language == "en" else "gateway charge (gọi gateway trừ tiền)"
    # The ledger's own tally, said beside the lane: presenter mode keeps the ledger off screen.
    assert _say(language, moved, step=charge, charged=1, intended=1) in card


@pytest.mark.parametrize("language", ["en", "vi"])
def test_the_failure_lab_says_what_its_buttons_armed_beside_them(language: str) -> None:
    """Finding 2: "Crash after the charge" or "Disarm" changed nothing near the buttons; the
    only word of it was in the explanation, scrolled off screen."""
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    client = app.test_client()
    headers = {"Accept-Language": language}
    client.get("/lab/nu7-armed", headers=headers)

    def armed_line() -> str:
        page = client.get("/lab/nu7-armed", headers=headers).get_data(as_text=True)
        found = re.search(r'<p class="armed-now" role="status"[^>]*>(.*?)</p>', page, re.S)
        assert found
        return found.group(1).strip()

    assert armed_line() == _say(language, "No fault armed: the next request runs as usual.")
    answer = client.patch("/lab/nu7-armed/api/settings", json={"fault": "crash_after_charge"})
    assert answer.status_code == 200
    fault = _say(language, "the next charge crashes its instance")
    assert armed_line() == _say(language, "Armed: %(fault)s.", fault=fault)


def test_the_amount_says_vnd_has_no_decimals() -> None:
    """Finding 7: "(VND, minor units)", while VND has no minor unit (the README says so)."""
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    page = app.test_client().get("/lab/nu7-vnd").get_data(as_text=True)
    assert "(VND, no decimals)" in page and "minor units)" not in page
    assert VI.gettext("(VND, no decimals)") != "(VND, no decimals)"


@pytest.mark.parametrize("language", ["en", "vi"])
def test_a_lane_at_respond_says_what_it_is_about_to_answer(language: str) -> None:
    """The other seventh-run tester: with the lock on, B's lane read just "stopped after
    respond", without saying it was about to replay."""
    app, lab = stepping_lab(f"nu7-respond-{language}", lock=True)
    with requests(lab, 2):
        while step(lab, "A"):
            pass  # A charges and finishes, letting the lock go
        for _ in range(10):
            lane = next(p for p in quiet(lab) if p["label"] == "B")
            if lane["step"] == "respond":
                break
            step(lab, "B")
        card = _step_card(app, lab.id, language)
    msgid = "stopped at <b>%(step)s</b>: its answer %(status)s is ready, a replay (no new charge)"
    shown = "respond" if language == "en" else "respond (trả phản hồi)"
    assert _say(language, msgid, step=shown, status="201") in card


def test_vietnamese_calls_a_double_click_one_thing() -> None:
    """The other seventh-run tester: lesson 1's title says "Bấm đúp", its empty state said
    "một cú double click"."""
    text = VI.gettext(
        "Press Double-submit: two requests leave at the same moment, like a double click. "
        "Then follow the steps on the lesson card."
    )
    assert "bấm đúp" in text and "double click" not in text
