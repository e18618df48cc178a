"""Texts the fourth new-user run through the ten lessons found missing or at odds with
what the page showed, in both languages."""

from __future__ import annotations

import html as html_lib
import re
import threading
import time
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo.registry import LabRegistry
from demo.web.i18n import MISSING

EN = {"Accept-Language": "en"}
VI = {"Accept-Language": "vi"}
KEY = ["t1:u7:pay:order-42:v1"]
BODY = b'{"order_id": "42", "amount": 100000}'


# The shared app and client fixtures (conftest.py), with untranslated texts marked.
APP_CONFIG = {"I18N_MARK_MISSING": True}


def page(client: FlaskClient, lab_id: str, headers: dict[str, str]) -> str:
    answer = client.get(f"/lab/{lab_id}", headers=headers)
    assert answer.status_code == 200
    text = answer.get_data(as_text=True)
    assert MISSING not in text
    return html_lib.unescape(text)


def store_panel(html: str) -> str:
    start = html.index('<section id="store"')
    return html[start : html.index("</section>", start)]


def test_the_store_says_a_record_expired_not_that_no_key_was_seen(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 7, fix off: Pay, then +25 h. The store had dropped the record at its 24 h
    TTL and said "Empty: no key has been seen yet" beside ch_0001 charged under that key."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("ttl-gone")
    lab.apply_scenario("ttl-expiry")
    lab.payments.create_charge(KEY, BODY)
    panel = store_panel(page(client, "ttl-gone", EN))
    assert "Expired" not in panel  # still kept: the table lists it
    lab.advance(25 * 3600)
    panel = store_panel(page(client, "ttl-gone", EN))
    assert "no key has been seen" not in panel
    assert (
        "Expired: the record for t1:u7:pay:order-42:v1 was dropped when its TTL (24h 00m) "
        "ran out, so a retry with this key is a new request and charges again." in panel
    )
    vi = store_panel(page(client, "ttl-gone", VI))
    assert "Đã hết hạn: record của t1:u7:pay:order-42:v1" in vi
    assert "chưa thấy key nào" not in vi
    # The retry charges again and saves a new record: the key is kept again.
    lab.payments.create_charge(KEY, BODY)
    panel = store_panel(page(client, "ttl-gone", EN))
    assert "Expired" not in panel


def test_a_fresh_store_still_says_no_key_was_seen(client: FlaskClient) -> None:
    panel = store_panel(page(client, "fresh", EN))
    assert "Empty: no key has been seen yet." in panel
    assert "Expired" not in panel


def lanes(client: FlaskClient, lab_id: str, headers: dict[str, str]) -> dict[str, str]:
    """Each step-mode lane's words, by label."""
    html = client.get(f"/lab/{lab_id}/panels", headers={"HX-Request": "true", **headers})
    text = html_lib.unescape(html.get_data(as_text=True))
    assert MISSING not in text
    lane = r'<li class="step-lane lane-(\w+)">.*?<span class="where[^"]*">(.*?)</span>'
    found = re.findall(lane, text, re.S)
    return {label: re.sub(r"<[^>]+>", "", words) for label, words in found}


def test_a_lane_stopped_after_a_lookup_says_what_the_lookup_found(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 5: "stopped after lookup" / "stopped after lookup again" did not say what the
    lookup found; the lane says it now, from the lookup's trace detail (``hit=``, state)."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("found")
    lab.payments.update_settings({"step_mode": True, "lock": True, "gateway_latency_ms": 0})
    threads: list[threading.Thread] = []

    def send() -> None:
        thread = threading.Thread(target=lambda: lab.payments.create_charge(KEY, BODY))
        thread.start()
        threads.append(thread)

    def waiting(label: str, step: str) -> dict[str, Any]:
        deadline = time.monotonic() + 10
        while True:
            lane = next((p for p in lab.payments.stepper.paused() if p["label"] == label), None)
            if lane is not None and lane["waiting"] and lane["step"] == step:
                return lane
            assert time.monotonic() < deadline, repr(lab.payments.stepper.paused())
            time.sleep(0.002)

    try:
        send()
        a = waiting("A", "lookup")
        assert lanes(client, "found", EN)["A"] == (
            "stopped after lookup: miss: no record for this key yet"
        )
        assert lanes(client, "found", VI)["A"] == (
            "dừng sau lookup (tra cứu): không thấy (chưa có record nào cho key này)"
        )
        for step in ("lock wait", "lock acquire", "lookup", "reserve"):
            lab.payments.stepper.step(a["request"])
            a = waiting("A", step)
        send()  # B arrives while A holds the key reserved
        waiting("B", "lookup")
        assert lanes(client, "found", EN)["B"] == (
            "stopped after lookup: hit: A's record (in progress)"
        )
        assert lanes(client, "found", VI)["B"] == (
            "dừng sau lookup (tra cứu): có: record của A (đang xử lý)"
        )
        lab.payments.stepper.step(a["request"], to_end=True)  # A saves its record
        b = waiting("B", "lookup")
        for step in ("fingerprint check", "lock wait", "lock acquire", "lookup"):
            lab.payments.stepper.step(b["request"])
            b = waiting("B", step)
        assert lanes(client, "found", EN)["B"] == (
            "stopped after lookup again: hit: A's record (completed)"
        )
    finally:
        lab.payments.stepper.release_all()
        for thread in threads:
            thread.join(10)


def status_line(html: str) -> str:
    start = html.index('<p class="mode">')
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html[start : html.index("</p>", start)]))


LOCK_PER_KEY = {
    "en": "The lock is per key: a request with no key has nothing to lock, so the Lock being "
    "on changed nothing for it.",
    "vi": "Lock là theo từng key: một yêu cầu không có key thì không có gì để lock, nên Lock "
    "đang bật cũng không thay đổi gì cho nó.",
}


@pytest.mark.parametrize("language", ["en", "vi"])
def test_a_keyless_double_charge_says_the_lock_is_per_key(
    app: Flask, client: FlaskClient, language: str
) -> None:
    """Lesson 1: during the no-key double charge the status line said "Lock is ON", and
    nothing said why the lock did not stop it."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get(f"keyless-{language}")
    lab.apply_scenario("double-click")
    headers = {"Accept-Language": language}
    assert lab.payments.settings.lock
    assert LOCK_PER_KEY[language] not in status_line(page(client, lab.id, headers))
    lab.payments.create_charge(None, BODY)
    lab.payments.create_charge(None, BODY)
    line = status_line(page(client, lab.id, headers))
    assert ("Lock is ON" if language == "en" else "Lock đang BẬT") in line
    assert LOCK_PER_KEY[language] in line
    # With a key, the lock does its work: the sentence goes.
    lab.payments.create_charge(KEY, BODY)
    assert LOCK_PER_KEY[language] not in status_line(page(client, lab.id, headers))
    # With the lock off, there is no "Lock is ON" to explain.
    lab.payments.update_settings({"lock": False})
    lab.payments.create_charge(None, BODY)
    assert LOCK_PER_KEY[language] not in status_line(page(client, lab.id, headers))


def test_free_play_after_the_last_lesson_starts_with_a_new_order(
    app: Flask, client: FlaskClient
) -> None:
    """After the wrap-up (lesson 10 left), free play's Pay answered "REPLAYED — ch_0001
    again, no new charge" (lesson 10's record) while the page said e-mail was off now.
    Leaving a lesson that sent the page's order moves the form on to a new order."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("after-10")
    lab.apply_scenario("email-once", fixed=True)
    lab.payments.create_charge(KEY, BODY)  # the crash
    lab.payments.create_charge(KEY, BODY)  # the retry: one e-mail through the outbox
    html = page(client, "after-10", EN)
    assert 'id="order-id" name="order_id" value="42"' in html
    lab.leave_scenario()
    html = page(client, "after-10", EN)
    assert 'id="order-id" name="order_id" value="43"' in html
    assert "t1:u7:pay:order-43:v1</textarea>" in html
    assert (
        "Free play: the form holds a new order (43), so Pay charges it once; the ledger "
        "keeps order 42 from “Send the receipt e-mail once”." in html
    )
    assert (
        "Chơi tự do: form đang giữ một đơn hàng mới (43), nên Thanh toán trừ tiền nó một lần; "
        "ledger vẫn giữ đơn hàng 42 từ “Gửi email biên lai đúng một lần”."
        in page(client, "after-10", VI)
    )
    assert len(lab.payments.gateway.ledger()) == 1  # lesson 10's evidence stays
    key = ["t1:u7:pay:order-43:v1"]
    _, entry = lab.payments.create_charge(key, b'{"order_id": "43", "amount": 100000}')
    assert entry.outcome == "charged"  # free play's Pay: a new intent, not a replay
    assert "Free play:" not in page(client, "after-10", EN)  # told until the first Pay
    # Leaving a scenario that never sent the page's order keeps the order as it is.
    lab.apply_scenario("race")
    before = lab.payments.current_order
    lab.leave_scenario()
    assert lab.payments.current_order == before
