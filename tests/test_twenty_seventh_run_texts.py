"""The twenty-seventh session: what runs 27 to 30 found, checked in the lab's words."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from demo.registry import LabRegistry

EN = {"Accept-Language": "en"}
BODY = {"order_id": "42", "amount": 100000}


def ledger(client: FlaskClient, lab_id: str) -> str:
    html = client.get(f"/lab/{lab_id}", headers=EN).get_data(as_text=True)
    return html[html.index('id="ledger"') : html.index("</section>", html.index('id="ledger"'))]


def test_a_declined_card_says_why_nothing_is_intended(app: Flask, client: FlaskClient) -> None:
    """After a 402 the ledger read "charged 0 / intended 0" beside "No money has moved.": a
    newcomer who meant to pay read "intended 0" as a wrong number."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu27-declined")
    lab.payments.update_settings({"gateway_decline": True})
    answer = client.post(
        "/lab/nu27-declined/api/charges", json=BODY, headers={"Idempotency-Key": "k-1", **EN}
    )
    assert answer.status_code == 402
    text = ledger(client, "nu27-declined")
    assert "intended 0" in text
    assert "The gateway declined the card (402): nothing to charge, so nothing intended" in text
    registry.get("nu27-fresh")
    assert "declined" not in ledger(client, "nu27-fresh")  # said only after a decline


def test_the_pixel_says_the_clock_moved(app: Flask, client: FlaskClient) -> None:
    """Operations lesson 4: "+10 min on the clock" changed nothing on screen; the views
    staying at 1 read as a button that did nothing."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu27-clock")
    page = client.get("/lab/nu27-clock/natural?lesson=tracking-pixel", headers=EN)
    assert "ahead of real time" not in page.get_data(as_text=True)
    lab.advance(600)
    html = client.get("/lab/nu27-clock/natural", headers=EN).get_data(as_text=True)
    pixel = html[html.index('id="natural-pixel"') :]
    assert "The lab's clock is 10m 00s ahead of real time: the dedup window runs on it." in pixel


def test_the_storm_says_whose_settings_and_which_peak(app: Flask, client: FlaskClient) -> None:
    """Retry lesson 4: the policy's strategy read full_jitter while the lesson spoke of
    exponential backoff (the storm has its own fields, further down); the table's peak
    (the busiest 100 ms) read against 1 s bars; "the two charts" stood over six."""
    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu27-storm").open_lesson("jitter")
    html = client.get("/lab/nu27-storm/retries", headers=EN).get_data(as_text=True)
    assert "with the strategy and backoff set here (the policy above is the one client" in html
    assert "so their charts sit side by side" in html
    assert "the two charts" not in html
    assert client.post("/lab/nu27-storm/retries/api/storm", json={}, headers=EN).status_code == 200
    html = client.get("/lab/nu27-storm/retries", headers=EN).get_data(as_text=True)
    assert "Peak load (calls/s, busiest 100 ms)" in html


def test_the_payment_lessons_why_waits_for_the_first_check(app: Flask, client: FlaskClient) -> None:
    """Lesson 1 showed Why (the answer) before the first press, while the operations lab's
    card folds it until the attendee has tried the steps: the two labs differed."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu27-why")
    lab.open_lesson("double-click")

    def card() -> str:
        html = client.get("/lab/nu27-why", headers=EN).get_data(as_text=True)
        return html[html.index('id="lesson"') : html.index("</section>", html.index('id="lesson"'))]

    folded = card()
    assert '<details class="why"><summary><b>Why:</b> the answer, once you have tried' in folded
    assert "The fix:" in folded
    lab.progress["double-click"].met_at["keyless-double"] = 0.0  # the failure seen
    shown = card()
    assert '<p class="why"><b>Why:</b>' in shown and '<details class="why"' not in shown


def test_the_json_parsers_words_are_translated(client: FlaskClient) -> None:
    """A Vietnamese problem kept Python's own words in English: "Expecting value ở dòng 1,
    cột 1"."""
    vi = {"Accept-Language": "vi", "Content-Type": "application/json", "Idempotency-Key": "k"}
    for body, english, vietnamese in (
        (b"", "Expecting value at line 1", "thiếu một giá trị ở dòng 1"),
        (b'{"a" 1}', "Expecting ':' delimiter at line 1", "thiếu dấu phân cách ':' ở dòng 1"),
        (b"1 2", "Extra data at line 1", "dữ liệu thừa ở dòng 1"),
    ):
        answer = client.post("/lab/nu27-json/api/charges", data=body, headers=vi)
        assert answer.status_code == 400, answer.get_data(as_text=True)
        assert answer.mimetype == "application/problem+json"
        assert vietnamese in answer.get_json()["detail"]
        answer = client.post("/lab/nu27-json/api/charges", data=body, headers={**vi, **EN})
        assert english in answer.get_json()["detail"]


def test_free_play_says_which_lesson_its_answer_is_from(app: Flask, client: FlaskClient) -> None:
    """Left for free play, the answer box said "This answer is from “Lost response”": which
    lesson that was, the path's number, was for the attendee to find."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu27-left")
    lab.open_lesson("lost-response")
    lab.payments.create_charge("k-left", BODY)
    lab.leave_scenario()
    html = client.get("/lab/nu27-left", headers=EN).get_data(as_text=True)
    assert "This answer is from lesson 2, “Lost response”, which you left" in html


def test_a_reset_says_the_settings_stay(app: Flask, client: FlaskClient) -> None:
    """The 29th run pressed Reset and did not expect the latency and step mode to stay."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu27-reset")
    said = "the other labs of this workspace too (Operations, Retries, Queue), and set the clock"
    assert said not in client.get("/lab/nu27-reset", headers=EN).get_data(as_text=True)
    lab.payments.create_charge("k-reset", BODY)
    assert client.post("/lab/nu27-reset/api/reset", headers=EN).status_code == 200
    assert said in client.get("/lab/nu27-reset", headers=EN).get_data(as_text=True)
    lab.payments.create_charge("k-reset", BODY)  # the next request: said no more
    assert said not in client.get("/lab/nu27-reset", headers=EN).get_data(as_text=True)


def test_the_queue_headline_speaks_the_pages_language(app: Flask, client: FlaskClient) -> None:
    """The 31st run, in Vietnamese: "worker-1: CRASHED, NOT ACKED" above the lanes that
    said "ĐÃ CRASH, CHƯA ACK"; a poison message's handler error was called CRASHED, and
    its reason stayed English ("invoice_id must be a positive integer")."""
    registry: LabRegistry = app.extensions["labs"]
    vi = {"Accept-Language": "vi"}
    lab = registry.get("nu27-qvi")
    lab.open_lesson("redelivery")
    lab.queue.play_next()  # Enqueue
    html = client.get("/lab/nu27-qvi/queue", headers=vi).get_data(as_text=True)
    assert "Đưa vào hàng đợi: job send-invoice-42" in html
    lab.queue.play_next()  # Work: the worker crashes before the ack
    html = client.get("/lab/nu27-qvi/queue", headers=vi).get_data(as_text=True)
    assert '<p class="headline">worker-1: ĐÃ SẬP, CHƯA ACK</p>' in html
    assert "CRASHED, NOT ACKED" not in html
    lab.queue.play("poison-message")
    html = client.get("/lab/nu27-qvi/queue", headers=vi).get_data(as_text=True)
    assert "HANDLER LỖI, CHƯA ACK" in html and "invoice_id phải là số nguyên dương" in html
    assert "ĐÃ SẬP" not in html  # the worker did not crash: its handler refused the job
    english = client.get("/lab/nu27-qvi/queue", headers=EN).get_data(as_text=True)
    assert "HANDLER FAILED, NOT ACKED" in english
    assert "(invoice_id must be a positive integer)" in english


def test_the_outbox_lessons_relay_crash_comes_with_the_fix(app: Flask, client: FlaskClient) -> None:
    """Queue lesson 4 before the fix: steps 5-7 armed a relay crash, enqueued job 43 and
    pressed Work twice, with the outbox off: no relay, job 43 done once, an IDLE, and the
    crash left armed. The relay's part is the fix's case."""
    from demo.queue.scenarios import SCENARIOS as QUEUE

    outbox = QUEUE["outbox"]
    assert not any(click == "settings" for click, _ in outbox.clicks_for(False))
    assert ("settings", {"crash_at": "relay_after_send"}) in outbox.clicks_for(True)
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu27-outbox")
    lab.open_lesson("outbox")
    card = client.get("/lab/nu27-outbox/queue", headers=EN).get_data(as_text=True)
    assert "relay: sent, not yet marked sent" not in card.split('id="lesson"')[1].split("</ol>")[0]
    lab.queue.play("outbox")
    assert lab.queue.measure("emails_per_key") == 2  # the crash window's failure, still shown
    assert lab.queue.settings.crash_at == "none"  # fired once; no relay crash left armed
    assert [e.outcome for e in lab.queue.entries()].count("idle") == 0


def test_the_operations_card_as_a_scenario_speaks_of_no_checks(
    app: Flask, client: FlaskClient
) -> None:
    """Operations, a scenario with its fix: "Run as a scenario, it ticks none of the lesson's
    checks", then two lines down "…and the lesson's checks keep what they saw"."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu27-opsc")
    lab.natural.apply_scenario("tracking-pixel", fixed=True)
    html = client.get("/lab/nu27-opsc/natural", headers=EN).get_data(as_text=True)
    assert "Applying the fix started the lab afresh: the rows from before are cleared.</p>" in html
    assert "the lesson's checks keep what they saw" not in html
    # The view counter and its note: "1(opening this page…" had no space between them.
    assert '</strong>\n    <small class="counted-note">' in html


def test_the_vietnamese_words_keep_to_one_rendering() -> None:
    """The 31st run: "bộ mô phỏng" on the card, "trình mô phỏng" on the section; "trúng" for
    a hit in lesson 5's steps, "có" on the lane; "phần cài đặt" for the panel "Thiết lập"."""
    from babel.messages.pofile import read_po

    with open("demo/translations/vi/LC_MESSAGES/messages.po", "rb") as f:
        strings = [str(m.string) for m in read_po(f) if m.id and m.string]
    for avoided in ("bộ mô phỏng", "Bộ mô phỏng", "trúng", "phần cài đặt"):
        assert not [s for s in strings if avoided in s], avoided


def test_the_queue_fix_ticked_by_hand_keeps_the_evidence_and_next_step_applies_it(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 1, the first check met, then Dedup ticked by hand: the card turned the
    failure's "kept as evidence" into a red MISMATCH, and Next step left for lesson 2 with
    lesson 1 unachieved (the fix's case never run, the crash no longer armed)."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu27-qhand")
    lab.open_lesson("redelivery")
    lab.queue.play("redelivery")
    lab.queue.update_settings({"dedup": True})
    html = client.get("/lab/nu27-qhand/queue", headers=EN).get_data(as_text=True)
    card = html[html.index('id="lesson"') :]
    assert 'class="numbers evidence"' in card and "MISMATCH" not in card
    form = card[: card.index('id="next-step"')]
    assert 'name="fixed" value="1">' in form[form.rindex("<form") :]  # Next step: the fix
    assert 'title="The fix, step 1 of 4"' in card
