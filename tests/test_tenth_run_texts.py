"""The tenth new-user run through the ten payment lessons: one name for the crash fix,
a headline that counts what raced, lesson 4's fix set by hand, a scenario's primary button,
step mode's lanes after a wait, and the Vietnamese words it found (both languages)."""

from __future__ import annotations

import html
import json
import re
import time

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_advice_stays_true import EN, VI, lab, page, section
from test_seventh_run_texts import _step_card
from test_sixth_run_texts import VI as VI_CATALOGUE
from test_sixth_run_texts import stepping_lab
from test_step_mode import quiet, requests, step

from demo.lessons import LESSONS
from demo.lessons.engine import Progress
from demo.payments.scenarios import SCENARIOS
from demo.web.i18n import TRANSLATIONS

PO = (TRANSLATIONS / "vi/LC_MESSAGES/messages.po").read_text()


# The pages' untranslated texts are marked (see conftest's ``app``).
APP_CONFIG = {"I18N_MARK_MISSING": True}


def test_the_crash_fix_has_the_one_name_the_server_card_gives_it(
    app: Flask, client: FlaskClient
) -> None:
    """The badge said "no downstream key", the card "(recovery: downstream key)", and the
    server card's select "Crash recovery: key to gateway"."""
    scenario = SCENARIOS["crash-window"]
    assert scenario.badge_for(False) == "fix OFF: no key to gateway"
    assert scenario.badge_for(True) == "fix ON: key to gateway"
    assert "(Crash recovery: key to gateway)" in scenario.fix_text
    assert "(Crash recovery: key to gateway)" in SCENARIOS["gateway-timeout"].fix_text
    the_lab = lab(app, "nu10-names")
    the_lab.open_lesson("crash-window")
    for headers in (EN, VI):
        html = page(client, the_lab.id, headers)
        assert "downstream key" not in html.replace("downstream_key", "")
        settings = section(html, "settings").split("</form>")[0]
        option = "key to gateway" if headers is EN else VI_CATALOGUE.gettext("key to gateway")
        assert f">{option}</option>" in settings and option in section(html, "lesson")


def test_a_race_headline_counts_the_two_requests_not_the_orders_charges() -> None:
    """After a crash had charged order 43 once, a race charged it twice more: "paid twice"
    stood beside three charges."""
    msgid = "DOUBLE CHARGE — two requests with one key both charged order %(order)s"
    assert msgid in PO and "paid twice" not in PO
    assert VI_CATALOGUE.gettext(msgid) != msgid


def test_lesson_4_with_the_lock_ticked_by_hand_says_so_and_does_not_push_the_fix(
    app: Flask, client: FlaskClient
) -> None:
    """ "fix ON (set by hand)" stood over "Then press Apply the fix", the primary button."""
    the_lab = lab(app, "nu10-hand")
    the_lab.open_lesson("race")
    first = LESSONS["race"].checks[0].id
    the_lab.progress["race"] = Progress(met_at={first: 0.0})
    the_lab.payments.update_settings({"lock": True})
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "fix ON: Lock on (set by hand)" in card
    assert "Then press Apply the fix" not in card
    assert (
        "The fix is on, set by hand: follow these steps again (or Apply the fix: it starts the "
        "lab afresh, the fix on)." in card
    )
    assert not re.search(r'form="lesson-apply-fix" class="primary"', card)
    assert "Cách sửa đã bật, do bạn tự đặt" in section(page(client, the_lab.id, VI), "lesson")
    the_lab.payments.update_settings({"lock": False})  # as the lesson has it: the fix pushed
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "Then press Apply the fix" in card
    assert re.search(r'form="lesson-apply-fix" class="primary"', card)


def test_a_scenarios_fix_is_the_primary_button_only_once_it_has_run(
    app: Flask, client: FlaskClient
) -> None:
    the_lab = lab(app, "nu10-scen")
    the_lab.apply_scenario("gateway-timeout")
    button = r'<button type="submit" form="lesson-apply-fix"( class="primary")? data-apply-fix'
    found = re.search(button, section(page(client, the_lab.id, EN), "lesson"))
    assert found and found.group(1) is None
    client.post(
        f"/lab/{the_lab.id}/api/charges",
        json={"order_id": "42", "amount": 100000},
        headers={"Idempotency-Key": "t1:u7:pay:order-42:v1", "HX-Request": "true"},
    )
    found = re.search(button, section(page(client, the_lab.id, EN), "lesson"))
    assert found and found.group(1) is not None


@pytest.mark.parametrize("language", ["en", "vi"])
def test_a_lane_names_a_finished_lane_by_its_letter_and_says_how_long_it_waited(
    language: str,
) -> None:
    """ "hit: A's record" in one step, "hit: #1's record" in the next; and B's lane said only
    "stopped after lock acquire" after waiting for A's lock."""
    app, the_lab = stepping_lab(f"nu10-wait-{language}", lock=True)
    with requests(the_lab, 2):
        step(the_lab, "A")  # lookup -> lock wait
        step(the_lab, "A")  # -> lock acquire: A holds the lock
        step(the_lab, "B")  # -> lock wait
        step(the_lab, "B")  # blocked on A's lock
        time.sleep(0.02)  # B waits a measurable while
        a = next(p for p in quiet(the_lab) if p["label"] == "A")
        the_lab.payments.stepper.step(a["request"], to_end=True)
        b = next(p for p in quiet(the_lab) if p["label"] == "B")
        assert b["step"] == "lock acquire"
        card = _step_card(app, the_lab.id, language)
        got = "got it after waiting" if language == "en" else "có lock sau khi chờ"
        assert re.search(rf"{got} \d+ ms", card), card
        step(the_lab, "B")  # -> lookup again: A's record, A having finished
        quiet(the_lab)
        card = html.unescape(_step_card(app, the_lab.id, language))
        said = VI_CATALOGUE.gettext("hit: %(owner)s's record (%(state)s)")
        if language == "en":
            said = "hit: %(owner)s's record (%(state)s)"
        named = said.split(" (")[0]
        assert named % {"owner": "A"} in card and named % {"owner": "#1"} not in card


def test_vietnamese_says_record_and_how_long_a_request_waited() -> None:
    """The lesson's title said "bản ghi", the explanation "record"; and "chờ lock theo key
    13305 ms" read as if "key 13305 ms" were one thing."""
    msgstrs = " ".join(re.findall(r"^msgstr (.*?)(?=^\s*$)", PO, re.S | re.M))
    assert "bản ghi" not in msgstrs.lower()
    assert "chờ lock theo key %(ms)s" not in msgstrs.replace('"\n"', "")
    waited = (
        "This request waited %(ms)s ms for the per-key lock, which %(who)s held: in step mode "
        "%(who)s stood paused until you stepped it on. Once %(who)s had saved its record and "
        "let the lock go, this request looked the key up again and found the finished record."
    )
    assert "chờ lock theo key trong %(ms)s ms" in VI_CATALOGUE.gettext(waited)


def test_the_scripts_new_words_come_in_both_languages(app: Flask, client: FlaskClient) -> None:
    """A blocked lane's key, and an answer from another tab: said, never silent."""
    for headers in (EN, VI):
        html = page(client, "nu10-words", headers)
        found = re.search(r'id="i18n-strings">(.*?)</script>', html, re.S)
        assert found
        words = json.loads(found.group(1))
        blocked, other = words["lane_blocked"], words["retry_other_order"]
        assert all(f"{{{name}}}" in blocked for name in ("label", "by", "key"))
        assert "{order}" in other and "{form}" in other
        if headers is VI:
            assert "bị chặn" in blocked and "Phản hồi này là của đơn hàng" in other
