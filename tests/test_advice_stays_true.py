"""What the page says must stay true of the lab as it is now, in both languages: the
timeline's lock steps, the explanation's advice on the next click (after New order, +25 h,
a lost response), lesson 4's way out and badge, an achieved lesson's counter and Next
step, a read-only replay's card, and the wording of lessons 6 and 9."""

from __future__ import annotations

import html as html_lib
import re
import time
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from demo.engine.timeline import Step
from demo.lessons import PATH
from demo.lessons.engine import Progress
from demo.registry import LabRegistry
from demo.web.i18n import MISSING
from demo.web.payments.step_text import step_text
from demo.web.payments.timeline import _begin_times
from demo.workspace import Workspace

EN = {"Accept-Language": "en"}
VI = {"Accept-Language": "vi"}
HX = {"HX-Request": "true"}
BODY = {"order_id": "42", "amount": 100000}
KEY = "t1:u7:pay:order-42:v1"


# The shared app and client fixtures (conftest.py), with untranslated texts marked.
APP_CONFIG = {"I18N_MARK_MISSING": True}


def lab(app: Flask, lab_id: str) -> Workspace:
    registry: LabRegistry = app.extensions["labs"]
    return registry.get(lab_id)


def page(client: FlaskClient, lab_id: str, headers: dict[str, str]) -> str:
    answer = client.get(f"/lab/{lab_id}", headers=headers)
    assert answer.status_code == 200
    text = answer.get_data(as_text=True)
    assert MISSING not in text
    return html_lib.unescape(text)


def section(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}".*?</section>', html, re.S)
    assert found, element_id
    return found.group(0)


def pay(client: FlaskClient, lab_id: str, key: str = KEY, action: str = "Pay", **body: Any) -> Any:
    return client.post(
        f"/lab/{lab_id}/api/charges",
        json={**BODY, **body},
        headers={**HX, "Idempotency-Key": key, "X-Lab-Action": action},
    )


# -- 6. The lock steps on the timeline --------------------------------------------------


def test_lock_acquire_is_drawn_when_the_lock_was_got_not_when_the_wait_began() -> None:
    """Lesson 5: B began to wait at +8093 ms and got the lock at +13458 ms, after A's
    record save at +13453 ms; the timeline drew "lock acquire" at +8093 ms."""
    lane_b = [
        Step("lookup", 8090.0, {"hit": False}),
        Step("lock wait", 8093.0, {}),
        Step("lock acquire", 13458.0, {"waited_ms": 5366.0}),
        Step("lookup", 13458.4, {"hit": True, "again": True, "state": "completed"}),
    ]
    times = _begin_times(lane_b)
    assert times[1] == 8093.0  # the wait, where it began
    assert times[2] == 13458.0 > 13453.0  # the lock, once A had saved and let it go
    assert str(step_text("lock wait", {})) == "lock wait"
    said = str(step_text("lock acquire", {"waited_ms": 5366.0}))
    assert said == "lock acquire: got it after waiting 5,366 ms"
    assert str(step_text("lock acquire", {"waited_ms": 0.2})) == "lock acquire: no wait"


def test_the_gateway_charge_is_still_drawn_where_it_began() -> None:
    steps = [Step("reserve", 1.0, {}), Step("gateway charge", 301.0, {"ms": 300.0})]
    assert _begin_times(steps) == [1.0, 1.0]


def test_a_waiting_lane_says_when_it_got_the_lock_in_both_languages(
    app: Flask, client: FlaskClient
) -> None:
    from demo.web.i18n import t

    text = step_text("lock acquire", {"waited_ms": 5366.0})
    with app.test_request_context(headers=VI):
        assert t(text) == "lock acquire (lấy lock): có lock sau khi chờ 5.366 ms"


# -- 8. Advice on the next click, while it is still true ---------------------------------

REPLAY_ADVICE = "A Retry from here sends the same key and body: it would replay"


def test_after_25_h_the_panel_no_longer_promises_a_replay(app: Flask, client: FlaskClient) -> None:
    """Lesson 7: after +25 h the panel still said Retry would replay; it charged."""
    the_lab = lab(app, "ttl-advice")
    the_lab.open_lesson("ttl-expiry")
    pay(client, the_lab.id)
    assert REPLAY_ADVICE in section(page(client, the_lab.id, EN), "explain")
    moved = client.post(f"/lab/{the_lab.id}/api/clock", json={"advance_s": 25 * 3600})
    assert moved.status_code == 200
    explain = section(page(client, the_lab.id, EN), "explain")
    assert REPLAY_ADVICE not in explain
    assert f"The record of key {KEY} has expired (its TTL ran out)" in explain
    assert "and charges again" in explain
    assert f"Record của key {KEY} đã hết hạn" in section(page(client, the_lab.id, VI), "explain")
    # And it is true: the Retry charges again.
    assert pay(client, the_lab.id, action="Retry").status_code == 201


def test_after_new_order_the_panel_speaks_of_the_new_order(app: Flask, client: FlaskClient) -> None:
    """Lesson 3: after New order the panel still advised a retry of order 42."""
    the_lab = lab(app, "order-advice")
    the_lab.open_lesson("key-reuse")
    pay(client, the_lab.id)
    answer = client.post(
        f"/lab/{the_lab.id}/new-order", data={"order_id": "42", "amount": "100000"}, headers=EN
    )
    assert answer.status_code == 200
    html = html_lib.unescape(answer.get_data(as_text=True))
    assert 'id="order-form"' in html and 'value="43"' in html
    assert 'hx-swap-oob="true"' in html  # the panels, at once
    explain = section(html, "explain")
    assert REPLAY_ADVICE not in explain
    assert "The form now holds order 43: a new intent with its own key" in explain
    assert "Order 42 keeps its record and its charge." in explain
    vi = section(page(client, the_lab.id, VI), "explain")
    assert "Form giờ là đơn hàng 43" in vi
    # Once order 43 is paid, the advice is about it again.
    pay(client, the_lab.id, key="t1:u7:pay:order-43:v1", order_id="43")
    assert REPLAY_ADVICE in section(page(client, the_lab.id, EN), "explain")


def test_a_lost_response_names_both_retries_as_the_card_does(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 2: the panel said "Retry with the same key" while step 2 said "Press Retry
    with a new key"."""
    the_lab = lab(app, "lost-advice")
    the_lab.open_lesson("lost-response")
    pay(client, the_lab.id)
    explain = section(page(client, the_lab.id, EN), "explain")
    assert "NO RESPONSE" in explain
    assert "Retry with the same key:" not in explain
    assert "Retry with a new key is a new intent, and charges again" in explain
    assert "Retry, with the same key, gets the stored response replayed" in explain
    vi = section(page(client, the_lab.id, VI), "explain")
    assert "Thử lại với key mới là một ý định mới" in vi


# -- 7. Lesson 4: the Lock ticked by hand ------------------------------------------------


def _race_after_double_then_lock_by_hand(app: Flask, client: FlaskClient, lab_id: str) -> Workspace:
    """The double charge (two keys stand in for the race: the ledger is what matters
    here), then Lock ticked by hand, then Double-submit on the order already charged."""
    the_lab = lab(app, lab_id)
    the_lab.open_lesson("race")
    pay(client, the_lab.id)
    assert client.patch(f"/lab/{the_lab.id}/api/settings", json={"lock": True}).status_code == 200
    pay(client, the_lab.id, action="Double-submit A")
    pay(client, the_lab.id, action="Double-submit B")
    return the_lab


def test_lock_by_hand_on_the_old_order_tells_the_way_out(app: Flask, client: FlaskClient) -> None:
    the_lab = _race_after_double_then_lock_by_hand(app, client, "race-hand")
    assert [e.outcome for e in the_lab.payments.requests()] == ["charged", "replayed", "replayed"]
    explain = section(page(client, the_lab.id, EN), "explain")
    assert "so both replayed: nothing raced" in explain
    assert "press New order first: a new key, with no record yet" in explain
    vi = section(page(client, the_lab.id, VI), "explain")
    assert "hãy bấm Đơn hàng mới trước" in vi


def test_a_single_retry_replay_does_not_claim_a_double_submit(
    app: Flask, client: FlaskClient
) -> None:
    the_lab = lab(app, "retry-replay")
    pay(client, the_lab.id)
    pay(client, the_lab.id, action="Retry")
    assert "nothing raced" not in section(page(client, the_lab.id, EN), "explain")


def test_the_badge_says_the_fix_is_on_when_it_was_set_by_hand(
    app: Flask, client: FlaskClient
) -> None:
    the_lab = lab(app, "race-badge")
    the_lab.open_lesson("race")
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "fix OFF" in card and "set by hand" not in card
    client.patch(f"/lab/{the_lab.id}/api/settings", json={"lock": True})
    card = section(page(client, the_lab.id, EN), "lesson")
    badge = re.search(r'class="fix-state[^"]*"[^>]*>(.*?)</span>', card, re.S)
    assert badge is not None and badge.group(1).strip() == "fix ON: Lock on (set by hand)"
    vi = section(page(client, the_lab.id, VI), "lesson")
    assert "cách sửa: BẬT, Lock bật (bật bằng tay)" in vi
    client.patch(f"/lab/{the_lab.id}/api/settings", json={"lock": False})
    assert "fix OFF" in section(page(client, the_lab.id, EN), "lesson")


def test_a_fix_of_the_clients_clicks_is_never_claimed_set_by_hand() -> None:
    from demo.payments.scenarios import SCENARIOS
    from demo.payments.settings import Settings

    defaults = Settings().as_dict()
    assert not SCENARIOS["lost-response"].fix_set_by_hand(defaults | {"fault": "lose_response"})
    assert not SCENARIOS["double-click"].fix_set_by_hand(defaults)
    assert SCENARIOS["ttl-expiry"].fix_set_by_hand(defaults | {"ttl_s": 72 * 3600})
    assert not SCENARIOS["ttl-expiry"].fix_set_by_hand(defaults)


def _achieve(the_lab: Workspace, name: str, at: float = 0.0) -> None:
    """Lesson ``name`` achieved at ``at`` (perf_counter s): 0.0 is before any request of the
    lab, an achievement of an earlier visit."""
    lesson = next(item for item in PATH if item.name == name)
    the_lab.progress[name] = Progress(met_at={c.id: at for c in lesson.checks})


def test_an_achieved_lesson_calls_its_extra_charge_evidence(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 4 achieved beside a red "expected 2 actual 3 MISMATCH"."""
    the_lab = _race_after_double_then_lock_by_hand(app, client, "race-done")
    pay(client, the_lab.id, key="other-key", action="Retry with a new key")  # order 42 again
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "MISMATCH" in card and 'class="numbers bad"' in card
    _achieve(the_lab, "race")
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "Lesson achieved" in card
    assert "MISMATCH" not in card and 'class="numbers bad"' not in card
    assert "1 extra: the failure you caused, kept as evidence" in card
    assert 'class="numbers evidence"' in card
    vi = section(page(client, the_lab.id, VI), "lesson")
    assert "thừa 1: lỗi bạn đã gây ra" in vi and "KHÔNG KHỚP" not in vi


# -- 10. Next step after "Lesson achieved" -----------------------------------------------


def test_once_achieved_next_step_goes_on_not_to_the_fix(app: Flask, client: FlaskClient) -> None:
    """Space after "Lesson achieved" applied the fix, wiping the ledger: the page script's
    Next step presses ``[data-apply-fix]`` first, else ``[data-next-lesson]``. (Achieved by
    the requests on screen: the lock ticked by hand, no fix applied.)"""
    the_lab = lab(app, "race-next")
    the_lab.open_lesson("race")
    card = section(page(client, the_lab.id, EN), "lesson")
    assert re.search(r"<button[^>]*data-apply-fix[^>]*>Apply the fix<", card)
    pay(client, the_lab.id)
    _achieve(the_lab, "race", at=time.perf_counter())
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "data-apply-fix" not in card
    assert re.search(r'<button[^>]*class="primary" data-next-lesson[^>]*>Next lesson', card)
    assert "Next step goes on to the next lesson" in card
    assert "Bước tiếp sẽ chuyển sang bài tiếp theo" in section(
        page(client, the_lab.id, VI), "lesson"
    )


# -- 11. A read-only replay's card ------------------------------------------------------


def test_a_read_only_replay_disables_the_cards_buttons(app: Flask, client: FlaskClient) -> None:
    the_lab = lab(app, "to-replay")
    the_lab.apply_scenario("race")
    pay(client, the_lab.id)
    exported = client.get(f"/lab/{the_lab.id}/history.json").data
    answer = client.post("/replay", data=exported, content_type="application/json")
    replay_id = answer.headers["Location"].rsplit("/", 1)[1]
    card = section(page(client, replay_id, EN), "lesson")
    actions = re.search(r'<p class="lesson-actions">(.*?)</p>', card, re.S)
    assert actions
    buttons = re.findall(r"<button[^>]*>", actions.group(1))
    assert len(buttons) >= 4  # Next step, Run the steps, Apply the fix…, Leave
    assert all(" disabled" in b for b in buttons), buttons
    assert "these buttons run nothing here" in card
    assert "các nút này không chạy gì ở đây" in section(page(client, replay_id, VI), "lesson")
    # A replay holds no store: its records are missing, not expired.
    assert "has expired" not in section(page(client, replay_id, EN), "explain")
    # A fresh lab's card is live.
    live = section(page(client, the_lab.id, EN), "lesson")
    assert " disabled" not in live and "run nothing here" not in live


# -- 12. Wording of lessons 6 and 9 -------------------------------------------------------


def test_lesson_6_names_the_retry_button_it_means(app: Flask, client: FlaskClient) -> None:
    the_lab = lab(app, "crash-words")
    the_lab.open_lesson("crash-window")
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "Press Retry with the same key" not in card
    assert "Press Retry: it sends the same key again." in card
    assert "Bấm Thử lại: nút này gửi lại cùng key." in section(
        page(client, the_lab.id, VI), "lesson"
    )


def test_lesson_9_goes_further_without_contradicting_itself_and_links_on(
    app: Flask, client: FlaskClient
) -> None:
    the_lab = lab(app, "decline-words")
    the_lab.open_lesson("decline")
    the_lab.apply_scenario("decline", fixed=True)
    assert pay(client, the_lab.id).status_code == 502  # "This 502" is read once it came
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "not so clear" not in card
    assert "This 502 came before the charge, so releasing the key was safe." in card
    link = re.search(r'<button type="submit" form="lesson-go-further"[^>]*>([^<]*)</button>', card)
    assert link and link.group(1) == "“Timeout after the charge” →"
    vi = section(page(client, the_lab.id, VI), "lesson")
    assert "502 này đến trước khi trừ tiền" in vi and "“Timeout sau khi trừ tiền” →" in vi
    form = re.search(r'<form id="lesson-go-further" method="post" action="([^"]+)"', card)
    assert form
    opened = client.post(html_lib.unescape(form.group(1)))
    assert opened.status_code == 303
    scenario = the_lab.payments.scenario
    assert scenario is not None and scenario.name == "gateway-timeout"
