"""The twenty-first new-user run, in both languages: Dedup ticked by hand counts as the
queue lesson's fix, and the failure a lesson's first check asked for reads as evidence, not
as a red MISMATCH, before the lesson is achieved."""

from __future__ import annotations

import gettext
import html as html_lib
import io
import re
from typing import Any

from flask.testing import FlaskClient

from demo.lessons import Progress
from demo.web.i18n import MISSING, TRANSLATIONS

APP_CONFIG = {"I18N_MARK_MISSING": True}
HX = {"HX-Request": "true"}
EN = {"Accept-Language": "en"}
VI = {"Accept-Language": "vi"}
VI_TEXT = gettext.GNUTranslations(
    io.BytesIO((TRANSLATIONS / "vi/LC_MESSAGES/messages.mo").read_bytes())
)
RUN_BUTTON = re.compile(r'name="fixed" value="(\d)">\s*<button type="submit" id="run-scenario"')


def page(client: FlaskClient, url: str, headers: dict[str, str] = EN) -> str:
    answer = client.get(url, headers=headers)
    assert answer.status_code == 200
    assert MISSING not in answer.text
    return html_lib.unescape(answer.text)


def queue_post(client: FlaskClient, lab: str, what: str, **form: str) -> None:
    answer = client.post(f"/lab/{lab}/queue/{what}", data=form, headers=HX)
    assert answer.status_code == 200, answer.text


def test_dedup_ticked_by_hand_is_the_queue_lessons_fix(client: FlaskClient, lab_of: Any) -> None:
    """Lesson 2: Dedup ticked by hand kept "fix OFF", and Run the scenario (now Run the
    steps) turned it off again, so the lesson never completed."""
    assert client.post("/lab/q21-hand?lesson=duplicate-job").status_code in (302, 303)
    queue_post(client, "q21-hand", "run", scenario="duplicate-job", fixed="0")
    html = page(client, "/lab/q21-hand/queue")
    # The failure the first check asked for: evidence, not a MISMATCH.
    assert "the failure you caused, kept as evidence" in html and "MISMATCH" not in html
    assert RUN_BUTTON.search(html).group(1) == "0"  # type: ignore[union-attr]
    queue_post(client, "q21-hand", "settings", setting="dedup", dedup="on")
    html = page(client, "/lab/q21-hand/queue")
    assert "fix ON: dedup (set by hand)" in html and "fix OFF" not in html
    assert RUN_BUTTON.search(html).group(1) == "1"  # type: ignore[union-attr]
    assert "cách sửa: BẬT, dedup (bật bằng tay)" in page(client, "/lab/q21-hand/queue", VI)
    queue_post(client, "q21-hand", "run", scenario="duplicate-job", fixed="1")
    lab = lab_of("q21-hand")
    assert lab.queue.settings.dedup is True
    html = page(client, "/lab/q21-hand/queue")
    assert "Lesson achieved" in html


def test_a_queue_run_with_the_fix_that_still_fails_is_a_mismatch(client: FlaskClient) -> None:
    """Evidence is the failure before the fix; with the fix on, a wrong count stays red."""
    assert client.post("/lab/q21-red?lesson=redelivery").status_code in (302, 303)
    queue_post(client, "q21-red", "run", scenario="redelivery", fixed="1")
    queue_post(client, "q21-red", "settings", setting="dedup")  # Dedup off again, by hand
    queue_post(client, "q21-red", "enqueue")
    queue_post(client, "q21-red", "work")
    queue_post(client, "q21-red", "clock", advance_s="31")
    queue_post(client, "q21-red", "work")
    html = page(client, "/lab/q21-red/queue")
    assert "MISMATCH" in html


def lesson_card(client: FlaskClient, lab_id: str, headers: dict[str, str] = EN) -> str:
    found = re.search(r'id="lesson".*?</section>', page(client, f"/lab/{lab_id}", headers), re.S)
    assert found
    return found.group(0)


def test_the_double_charge_a_payment_lesson_asked_for_is_evidence(
    client: FlaskClient, lab_of: Any
) -> None:
    """Lesson 4, the double charge made: its check ticked beside a red "expected 1 actual 2
    MISMATCH", though it was what the steps asked for. (Two keys stand in for the race
    here: the card reads the ledger and the progress.)"""
    lab = lab_of("p21-first")
    lab.open_lesson("race")
    for key in ("k-1", "k-2"):
        answer = client.post(
            "/lab/p21-first/api/charges",
            json={"order_id": "42", "amount": 100000},
            headers={**HX, "Idempotency-Key": key, "X-Lab-Action": "Pay"},
        )
        assert answer.status_code == 201
    card = lesson_card(client, "p21-first")
    assert "MISMATCH" in card  # nothing asked for it yet
    lab.progress["race"] = Progress(met_at={"lock-off-double": 0.0})
    card = lesson_card(client, "p21-first")
    assert "Lesson achieved" not in card
    assert "MISMATCH" not in card and 'class="numbers bad"' not in card
    assert "1 extra: the failure you caused, kept as evidence" in card
    vi = lesson_card(client, "p21-first", VI)
    assert "thừa 1: lỗi bạn đã gây ra" in vi and "KHÔNG KHỚP" not in vi
    # The Lock ticked by hand since: the ledger still holds the failure it asked for, and
    # the card says so rather than turn red (the twenty-first run's second try).
    assert client.patch("/lab/p21-first/api/settings", json={"lock": True}).status_code == 200
    card = lesson_card(client, "p21-first")
    assert "fix ON: Lock on (set by hand)" in card and "MISMATCH" not in card
    assert "1 extra: the failure you caused, kept as evidence" in card


def test_every_page_carries_one_brand_in_both_languages(client: FlaskClient) -> None:
    """The header read "Idempotency lab" on two pages, "Queue lab" and "Operations lab" on
    the others; in Vietnamese "Phòng lab …" beside "Lab …"."""
    for path in ("", "/queue", "/retries", "/natural"):
        html = page(client, f"/lab/brand21{path}")
        assert re.search(r"<h1>Idempotency lab</h1>", html), path
        vi = page(client, f"/lab/brand21{path}", VI)
        assert re.search(r"<h1>Phòng lab idempotency</h1>", vi), path
        # A long lab id is cut in the header at 1280 px: its tooltip holds it whole.
        assert "title=\"Lab brand21: share this page's address" in html, path
    for name in ("Idempotency lab", "Queue lab", "Operations lab", "Retry lab"):
        assert VI_TEXT.gettext(name).startswith("Phòng lab "), name


def test_a_queue_lesson_card_has_the_buttons_of_the_other_labs(client: FlaskClient) -> None:
    """The queue card said "Run the scenario" and listed every hint under "Hints" at once,
    where the other labs' cards say "Run the steps" and "Show a hint", one at a time."""
    assert client.post("/lab/q21-card?lesson=redelivery").status_code in (302, 303)
    html = page(client, "/lab/q21-card/queue")
    assert "Run the steps" in html and "Run the scenario" not in html
    first_hint = "Run the steps: the worker crashes before its ack"
    assert "Show a hint" in html and first_hint not in html
    hint_url = re.search(r'hx-post="([^"]+/hint)"', html)
    assert hint_url
    for shown in (1, 2):
        queue_post_url = hint_url.group(1)
        assert client.post(queue_post_url, headers=HX).status_code == 200
        html = page(client, "/lab/q21-card/queue")
        assert first_hint in html
        assert ("Show a hint" in html) is (shown < 2)  # the lesson has two hints
    vi = page(client, "/lab/q21-card/queue", VI)
    assert "Chạy các bước: worker sập trước khi ack" in vi


def test_the_operations_lesson_keeps_its_answer_folded_until_tried(
    client: FlaskClient, lab_of: Any
) -> None:
    """Lesson 2 of the operations lab: its "Why" listed which operations are natural
    before the attendee had sorted one; and the Attempts field was refused as "times"."""
    assert client.post("/lab/n21-why?lesson=which-are-natural").status_code in (302, 303)
    html = page(client, "/lab/n21-why/natural")
    assert '<details class="why"><summary><b>Why:</b> the answer, once you have tried' in html
    assert "Attempts <small>(<code>times</code>)</small>" in html
    vi = page(client, "/lab/n21-why/natural", VI)
    assert "câu trả lời, sau khi bạn đã thử các bước" in vi
    lab_of("n21-why").progress["which-are-natural"].met_at["sorted"] = 0.0
    html = page(client, "/lab/n21-why/natural")
    assert '<details class="why">' not in html and '<p class="why"><b>Why:</b>' in html


def test_the_queue_clock_says_how_far_ahead_it_is_in_words(client: FlaskClient) -> None:
    """+31 s on the queue lab's clock read "now +0m 31s"."""
    queue_post(client, "q21-clock", "clock", advance_s="31")
    html = page(client, "/lab/q21-clock/queue")
    assert "the lab's clock: 31s ahead of real time" in html and "0m 31s" not in html
    vi = page(client, "/lab/q21-clock/queue", VI)
    assert "đồng hồ của phòng lab: đi trước giờ thật 31s" in vi


def test_the_operations_states_are_never_broken_mid_value(client: FlaskClient) -> None:
    """ "next_invoice" on one line and "1" on the next; "PUT /profile {"name": "Lan", "plan":"
    then "pro"}" below: each state member and the PUT's body now stay whole."""
    html = page(client, "/lab/n21-whole/natural")
    assert '<span class="whole">next_invoice 1</span>' in html
    # The counter read 1 on the first visit, before any press: it says why.
    assert "(opening this page fetches the pixel too: the article embeds it)" in html
    assert '<code>PUT /profile <span class="whole">{"name": "Lan", "plan": "pro"}</span>' in html


NEXT_STEP = re.compile(
    r'<form method="post" action="([^"]+/queue/next)"[^>]*>\s*<input type="hidden" '
    r'name="scenario" value="([^"]+)"><input type="hidden" name="fixed" value="(\d)">'
    r'\s*<button type="submit" id="next-step" class="next-step" data-next-step-server '
    r'title="([^"]+)"'
)


def test_next_step_walks_a_queue_lesson_one_click_at_a_time(
    client: FlaskClient, lab_of: Any
) -> None:
    """The queue card had no Next step: the lesson was all at once (Run the scenario) or
    by hand, where the other labs step it, "." included."""
    assert client.post("/lab/q21-next?lesson=redelivery").status_code in (302, 303)
    queue = lab_of("q21-next").queue
    clicks = len(queue.scenario.clicks)
    for n in range(1, clicks + 1):
        form = NEXT_STEP.search(page(client, "/lab/q21-next/queue"))
        assert form, n
        assert form.group(2, 3, 4) == ("redelivery", "0", f"Step {n} of {clicks}")
        answer = client.post(form.group(1), data={"scenario": "redelivery", "fixed": "0"})
        assert answer.status_code == 303
        assert queue.played == n
        card = page(client, "/lab/q21-next/queue")
        # Midway the numbers are not final: neither "as expected" nor a MISMATCH yet.
        midway = "not over yet: more of the steps above to run" in card
        assert midway is (n < clicks), n
    assert queue.measure("emails_per_key") == 2  # the failure, as Run the steps makes it
    html = page(client, "/lab/q21-next/queue")
    form = NEXT_STEP.search(html)
    assert form and form.group(3, 4) == ("1", f"The fix, step 1 of {clicks}")
    client.post(form.group(1), data={"scenario": "redelivery", "fixed": "1"})
    assert queue.fixed and queue.played == 1 and queue.entries() != []
    for _ in range(clicks - 1):
        client.post(form.group(1), data={"scenario": "redelivery", "fixed": "1"})
    assert queue.measure("emails_per_key") == 1
    html = page(client, "/lab/q21-next/queue")
    assert "Lesson achieved" in html and NEXT_STEP.search(html) is None
    assert 'data-next-step-server data-onward data-goes-to="Next lesson →"' in html
    vi = page(client, "/lab/q21-next/queue", VI)
    assert "Bước tiếp <kbd>.</kbd>" in vi


def test_next_step_refuses_an_odd_case_and_a_missing_scenario(client: FlaskClient) -> None:
    bad = client.post("/lab/q21-bad/queue/next", data={"scenario": "redelivery", "fixed": "2"})
    assert bad.status_code == 422 and bad.mimetype == "application/problem+json"
    none = client.post("/lab/q21-bad/queue/next", data={"scenario": "nope", "fixed": "0"})
    assert none.status_code == 404 and none.mimetype == "application/problem+json"


def test_every_lab_page_offers_its_shortcuts(client: FlaskClient) -> None:
    """The Shortcuts button and list were on the payment lab's page only; "." works on the
    others too. The payment lab's own keys are listed on its page only."""
    for path in ("", "/queue", "/retries", "/natural"):
        html = page(client, f"/lab/keys21{path}")
        assert 'data-shortcuts aria-haspopup="dialog">Shortcuts <kbd>?</kbd>' in html, path
        assert 'id="shortcuts" class="shortcuts" role="dialog"' in html, path
        assert ("<dd>Pay</dd>" in html) is (path == ""), path
        assert "Next step: " in html, path
    vi = page(client, "/lab/keys21/queue", VI)
    assert "Bước tiếp: làm bước tiếp theo của bài học" in vi


def test_a_retry_lesson_opened_after_step_mode_can_run(client: FlaskClient, lab_of: Any) -> None:
    """Payments lesson 5 ends in step mode; the Retries tab's first lesson then refused every
    Run with 409 "Payment lab in step mode" until the attendee found the switch."""
    lab = lab_of("r21-step")
    lab.open_lesson("slow-motion")
    assert lab.payments.settings.step_mode
    assert client.post("/lab/r21-step?lesson=retry-policy").status_code in (302, 303)
    assert not lab.payments.settings.step_mode
    answer = client.post("/lab/r21-step/retries/api/run", json={})
    assert answer.status_code == 200, answer.text


def test_an_empty_amount_is_told_it_is_missing(client: FlaskClient) -> None:
    """The Amount field left empty: "amount must be an integer in minor units (100000, not
    100000.0 or "100000")", as if the attendee had typed a decimal."""
    empty = "is empty, or holds a number the browser could not read (such as 1e400)"
    for body, told in (
        ({"order_id": "42"}, "is required: a whole number in minor units, such as 100000"),
        ({"order_id": "42", "amount": ""}, empty),  # the field: empty, or 1e400 (run X)
    ):
        answer = client.post("/lab/a21-empty/api/charges", json=body)
        assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
        assert answer.get_json()["errors"]["amount"].startswith(told)
    vi = client.post("/lab/a21-empty/api/charges", json={"order_id": "42"}, headers=VI)
    assert "là bắt buộc" in vi.get_json()["detail"]
