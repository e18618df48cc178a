"""The queue lab's page and the fragments its buttons swap in (no browser): a GET
changes nothing, each button calls the real lab, bad input is a 422 problem that
changes nothing, and what the page draws (code view, chart, diagram) comes from the
real code and real runs."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo.queue import worker
from demo.queue.simulator import simulate
from demo.registry import LabRegistry
from demo.web.i18n import MISSING

HX = {"HX-Request": "true"}


def post(client: FlaskClient, lab: str, what: str, **form: str) -> Any:
    return client.post(f"/lab/{lab}/queue/{what}", data=form, headers=HX)


def test_the_page_and_its_poll_change_nothing(app: Flask, client: FlaskClient) -> None:
    registry: LabRegistry = app.extensions["labs"]
    page = client.get("/lab/q-get/queue")
    assert page.status_code == 200
    assert "Queue lab" in page.text
    assert 'aria-current="page">Queue</a>' in page.text  # the lab switcher marks this lab
    assert client.get("/lab/q-get/queue/panels").status_code == 200
    assert registry.peek("q-get") is None  # no lab was made for a read


def test_the_poll_answers_204_while_nothing_changed(client: FlaskClient, lab_of: Any) -> None:
    lab = lab_of("q-poll")
    assert client.get(f"/lab/q-poll/queue/panels?since={lab.version}").status_code == 204
    post(client, "q-poll", "enqueue", job="42")
    fresh = client.get(f"/lab/q-poll/queue/panels?since={lab.version - 1}")
    assert fresh.status_code == 200
    assert f'data-version="{lab.version}"' in fresh.text


def test_without_script_a_button_answers_303_to_the_page(client: FlaskClient) -> None:
    answer = client.post("/lab/q-303/queue/enqueue", data={"job": "43"})
    assert answer.status_code == 303
    assert answer.headers["Location"].endswith("/lab/q-303/queue")


def test_the_buttons_drive_the_real_lab(client: FlaskClient, lab_of: Any) -> None:
    queue = lab_of("q-run").queue
    assert (
        post(client, "q-run", "settings", setting="crash_at", crash_at="after_effect").status_code
        == 200
    )
    post(client, "q-run", "enqueue", job="42")
    html = post(client, "q-run", "work").text
    assert "CRASHED, NOT ACKED" in html
    assert queue.entries()[-1].crashed_at == "after_effect"
    post(client, "q-run", "clock", advance_s="31")
    html = post(client, "q-run", "work").text
    assert queue.measure("emails_per_key") == 2
    assert html.count('<tr class="double">') == 2  # both e-mails marked as one key's
    post(client, "q-run", "producer-retry")
    assert [m["job_id"] for m in queue.state()["messages"]] == ["send-invoice-42"] * 2
    post(client, "q-run", "settings", setting="workers", workers="3")
    post(client, "q-run", "work", every="1")
    assert queue.settings.workers == 3
    post(client, "q-run", "reset")
    assert queue.state()["messages"] == []
    assert queue.settings.workers == 3  # a reset keeps the settings


def test_a_checkbox_setting_is_on_when_sent_and_off_when_not(
    client: FlaskClient, lab_of: Any
) -> None:
    queue = lab_of("q-check").queue
    post(client, "q-check", "settings", setting="dedup", dedup="on")
    assert queue.settings.dedup is True
    post(client, "q-check", "settings", setting="dedup")
    assert queue.settings.dedup is False


@pytest.mark.parametrize(
    ("what", "form", "status"),
    [
        ("settings", {"setting": "workers", "workers": "9"}, 422),
        ("settings", {"setting": "max_attempts", "max_attempts": "0"}, 422),
        ("settings", {"setting": "visibility_timeout_s", "visibility_timeout_s": "1e3"}, 422),
        ("settings", {"setting": "delivery", "delivery": "exactly_once"}, 422),
        ("settings", {"setting": "step"}, 422),
        ("settings", {}, 422),
        ("enqueue", {"job": "44"}, 422),
        ("simulate", {"mode": "exactly_once", "messages": "10"}, 422),
        (
            "simulate",
            {"mode": "idempotent", "messages": "100001", "loss": "0", "ack_loss": "0"},
            422,
        ),
        (
            "simulate",
            {"mode": "idempotent", "messages": "10", "loss": "0.95", "ack_loss": "0"},
            422,
        ),
        ("clock", {"advance_s": "-5"}, 422),
        ("clock", {"advance_s": "abc"}, 422),
        ("run", {"scenario": "exactly-once"}, 404),
        ("run", {"scenario": "redelivery", "fixed": "yes"}, 422),
        ("work", {"every": "2"}, 422),
        ("settings", {"setting": "step_mode", "step_mode": "on"}, 422),  # no Step buttons here
        ("settings", {"setting": "dedup", "dedup": "yes"}, 422),
        ("settings", {"setting": "workers", "workers": "02"}, 422),
        ("clock", {"advance_s": "31.0"}, 422),
        ("simulate", {"mode": "idempotent", "messages": "10", "loss": "1e-1"}, 422),
    ],
)
def test_bad_input_is_a_problem_and_changes_nothing(
    client: FlaskClient, lab_of: Any, what: str, form: dict[str, str], status: int
) -> None:
    lab = lab_of("q-bad")
    post(client, "q-bad", "enqueue", job="42")
    before = (_held(lab.queue.state()), lab.clock_offset_s())
    answer = post(client, "q-bad", what, **form)
    assert answer.status_code == status
    assert answer.mimetype == "application/problem+json"
    assert answer.headers["HX-Reswap"] == "none"  # the page keeps its panels
    assert (_held(lab.queue.state()), lab.clock_offset_s()) == before


def _held(state: dict[str, Any]) -> dict[str, Any]:
    """What the lab holds, without the time it is read at."""
    return {k: v for k, v in state.items() if k != "now"}


def test_run_plays_the_scenario_and_its_fix(client: FlaskClient, lab_of: Any) -> None:
    queue = lab_of("q-play").queue
    html = post(client, "q-play", "run", scenario="redelivery").text
    assert queue.measure("emails_per_key") == 2
    # A scenario's run with its fix off shows the failure on purpose: evidence, not red.
    assert 'class="actual-value">2<' in html and "kept as evidence" in html
    assert "MISMATCH" not in html
    html = post(client, "q-play", "run", scenario="redelivery", fixed="1").text
    assert queue.fixed and queue.measure("emails_per_key") == 1
    assert 'class="actual-value">1<' in html and "as expected" in html


def test_the_code_view_is_the_consumers_real_source(client: FlaskClient) -> None:
    post(client, "q-code", "enqueue", job="42")
    html = post(client, "q-code", "work").text
    source, first = inspect.getsourcelines(worker.consume)
    ack = next(n for n, line in enumerate(source) if 'trace("ack")' in line)
    marked = re.search(r'<span class="line passed at" data-step="ack"><span class="ln">(\d+)', html)
    assert marked is not None and int(marked.group(1)) == first + ack
    assert html.count('data-step="receive"') == 1


def test_the_chart_draws_real_runs(client: FlaskClient) -> None:
    html = post(
        client, "q-chart", "simulate",
        mode="at_most_once", messages="500", loss="0.3", ack_loss="0.1", seed="7",
    ).text  # fmt: skip
    lines = re.findall(r'<polyline points="([^"]+)"', html)
    assert len(lines) == 9  # three modes × effects, duplicates, lost
    assert all(len(points.split()) == 10 for points in lines)  # loss 0 to 0.9
    run = simulate(mode="at_most_once", messages=500, loss=0.3, ack_loss=0.1, seed=7)
    assert f'<td class="num bad">{run.lost}</td>' in html


def test_the_sequence_diagram_tells_a_crash(client: FlaskClient) -> None:
    post(client, "q-seq", "settings", setting="crash_at", crash_at="after_receive")
    post(client, "q-seq", "enqueue", job="42")
    html = post(client, "q-seq", "work").text
    svg = html[html.index('<svg xmlns="http://www.w3.org/2000/svg" viewBox') :]
    assert "publish send-invoice-42 → m-1" in svg
    assert "m-1, receive 1" in svg
    assert "crash after receive" in svg


def test_the_page_in_vietnamese_leaves_nothing_untranslated(app: Flask) -> None:
    marking = Flask.test_client(app)
    app.config["I18N_MARK_MISSING"] = True
    vi = {"Accept-Language": "vi", **HX}
    for name in ("redelivery", "at-most-once", "outbox", "delivery-semantics", "poison-message"):
        for fixed in ("0", "1"):
            html = marking.post("/lab/q-vi/queue/run", data={"scenario": name, "fixed": fixed},
                                headers=vi).text  # fmt: skip
            assert MISSING not in html, name
    page = marking.get("/lab/q-vi/queue", headers={"Accept-Language": "vi"}).text
    assert MISSING not in page
    assert "Phòng lab hàng đợi" in page


def test_the_payment_page_with_a_queue_lesson_open_or_achieved(
    client: FlaskClient, lab_of: Any
) -> None:
    # A queue lesson open: the payment page shows its own path, with no lesson open.
    assert client.post("/lab/q-pay?lesson=redelivery").headers["Location"].endswith("/queue")
    page = client.get("/lab/q-pay")
    assert page.status_code == 200
    assert 'id="lesson"' not in page.text
    # Six queue lessons achieved count for the queue's strip, not the payment lab's ten.
    ws = lab_of("q-pay")
    for name in ("redelivery", "duplicate-job", "at-most-once", "outbox",
                 "delivery-semantics", "poison-message"):  # fmt: skip
        ws.open_lesson(name)
        ws.queue.play(name)
        ws.queue.play(name, fixed=True)
    assert len(ws.achieved()) == 6
    page = client.get("/lab/q-pay").text
    assert "0 of 10 achieved" in page
    assert "6 of 6 achieved" in client.get("/lab/q-pay/queue").text


def test_a_broker_down_page_leads_back_to_the_workspace() -> None:
    from demo import create_app

    app = create_app({"TESTING": True, "REDIS_URL": "redis://127.0.0.1:1/0"})
    page = app.test_client().get("/lab/q-down/queue", headers={"Accept": "text/html"})
    assert page.status_code == 503
    assert 'href="/lab/q-down/queue" class="try-again"' in page.text
    for other in ("payments", "natural", "retries"):
        assert f'href="{_url(app, other, "q-down")}"' in page.text
    assert f'href="{_url(app, "queue", "q-down")}">' not in page.text


def _url(app: Flask, lab: str, lab_id: str) -> str:
    from demo.web.nav import PAGES

    with app.test_request_context():
        return PAGES[lab].url(lab_id)


def _marked_lines(html: str) -> set[int]:
    return {
        int(n)
        for n in re.findall(r'<span class="line passed[^"]*"[^>]*><span class="ln">(\d+)', html)
    }


@pytest.mark.parametrize("outbox", [False, True])
def test_the_code_view_marks_only_the_branch_that_ran(client: FlaskClient, outbox: bool) -> None:
    lab = f"q-branch-{outbox}"
    post(client, lab, "settings", setting="dedup", dedup="on")
    if outbox:
        post(client, lab, "settings", setting="outbox", outbox="on")
    post(client, lab, "enqueue", job="42")
    marked = _marked_lines(post(client, lab, "work").text)
    source, first = inspect.getsourcelines(worker.consume)
    number = {text.strip()[:40]: first + n for n, text in enumerate(source)}
    via_outbox = next(
        v for k, v in number.items() if k.startswith('trace("side effect", via="outbox"')
    )
    via_mailbox = next(
        v for k, v in number.items() if k.startswith('trace("side effect", via="mailbox"')
    )
    seen_in_outbox = next(v for k, v in number.items() if k == 'trace("dedup check", seen=True)')
    assert (via_outbox in marked, via_mailbox in marked) == (outbox, not outbox)
    assert seen_in_outbox not in marked  # the concurrent-worker branch did not run
    assert len(marked) == 5  # receive, dedup check, side effect, record, ack
    # A duplicate: the dedup check, then the line that skipped it; no side effect line.
    post(client, lab, "enqueue", job="42")
    again = post(client, lab, "work").text
    skip = first + next(n for n, t in enumerate(source) if "return skip_duplicate" in t)
    assert via_outbox not in _marked_lines(again) and via_mailbox not in _marked_lines(again)
    assert (
        skip in _marked_lines(again)
        and f'<span class="line passed at"><span class="ln">{skip}' in again
    )


def test_every_worker_at_once_tells_each_workers_outcome(client: FlaskClient) -> None:
    post(client, "q-all", "settings", setting="workers", workers="3")
    post(client, "q-all", "enqueue", job="42")
    post(client, "q-all", "enqueue", job="43")
    html = post(client, "q-all", "work", every="1").text
    explain = html[
        html.index('id="explain"') : html.index("</section>", html.index('id="explain"'))
    ]
    headlines = re.findall(r'<p class="headline">(worker-\d): ([A-Z ,]+)</p>', explain)
    assert len(headlines) == 3  # one per call (a worker done early may take another)
    assert sorted(o for _, o in headlines) == ["IDLE", "PROCESSED", "PROCESSED"]
    # A single work call afterwards tells only its own outcome again.
    html = post(client, "q-all", "work").text
    explain = html[
        html.index('id="explain"') : html.index("</section>", html.index('id="explain"'))
    ]
    assert len(re.findall(r'<p class="headline">', explain)) == 1


def test_the_delivery_semantics_run_is_told_beside_the_lesson(
    client: FlaskClient, lab_of: Any
) -> None:
    queue = lab_of("q-sem").queue
    html = post(client, "q-sem", "run", scenario="delivery-semantics").text
    sim = queue.simulation
    assert sim is not None
    said = (
        f"Simulator, at-least-once, 10,000 messages: {sim.effects:,} side effects, "
        f"{sim.duplicate_effects:,} of them duplicates, {sim.lost:,} jobs lost."
    )
    explain = html[
        html.index('id="explain"') : html.index("</section>", html.index('id="explain"'))
    ]
    assert said in explain and "Nothing yet" not in explain
    card = html[html.index('id="lesson"') : html.index("</section>", html.index('id="lesson"'))]
    assert said in card and 'href="#simulator"' in card
    assert "Delivered is never above Sent" in html
    # The fix is the idempotent consumer: its badge and the settings line agree.
    html = post(client, "q-sem", "run", scenario="delivery-semantics", fixed="1").text
    assert queue.settings.dedup and "fix ON" in html and "dedup ON" in html
    assert "dedup OFF" not in html


def test_the_copy_says_what_really_happens(client: FlaskClient, lab_of: Any) -> None:
    # The armed crash in the select's own words.
    html = post(client, "q-copy", "settings", setting="crash_at", crash_at="after_record").text
    assert "Armed crash (fires once): after the record, before the ack." in html
    assert "after_record." not in html
    # An idle call: no broken "passed on —" sentence.
    html = post(client, "q-copy", "work").text
    assert "passed on —" not in html and "found no visible message" in html
    # Dedup off: the explanation does not claim a record.
    post(client, "q-copy", "settings", setting="crash_at", crash_at="none")
    post(client, "q-copy", "enqueue", job="42")
    html = post(client, "q-copy", "work").text
    assert "recording nothing (dedup is off)" in html and "recorded it" not in html


def test_the_last_lesson_says_all_done(client: FlaskClient, lab_of: Any) -> None:
    ws = lab_of("q-done")
    names = ("redelivery", "duplicate-job", "at-most-once", "outbox",
             "delivery-semantics", "poison-message")  # fmt: skip
    for name in names[:-1]:
        ws.open_lesson(name)
        ws.queue.play(name)
        ws.queue.play(name, fixed=True)
    client.post("/lab/q-done?lesson=poison-message")
    html = post(client, "q-done", "run", scenario="poison-message").text
    assert "All done" not in html
    html = post(client, "q-done", "run", scenario="poison-message", fixed="1").text
    assert "All done: every queue lesson achieved (6 of 6)." in html


def test_step_mode_from_the_api_is_shown_and_driven_on_the_page(
    client: FlaskClient, lab_of: Any
) -> None:
    import threading

    client.patch("/lab/q-step/queue/api/settings", json={"step_mode": True})
    html = client.get("/lab/q-step/queue").text
    assert "Step mode is on" in html and 'id="step-off"' in html
    post(client, "q-step", "enqueue", job="42")
    answers: list[Any] = []
    worker_call = threading.Thread(target=lambda: answers.append(post(client, "q-step", "work")))
    worker_call.start()
    try:
        lab = lab_of("q-step").queue
        for _ in range(2000):  # until the work call stands at its first step
            if lab.stepper.paused() and lab.stepper.paused()[0]["waiting"]:
                break
            threading.Event().wait(0.005)
        request_id = lab.stepper.paused()[0]["request"]
        html = client.get("/lab/q-step/queue/panels").text
        assert f"Work call #{request_id}" in html and "stopped after receive" in html
        html = post(client, "q-step", "step", request=str(request_id)).text
        assert "stopped after side effect" in html
        assert post(client, "q-step", "step", request="99").status_code == 404
        assert post(client, "q-step", "step", go="1").status_code == 422
    finally:
        html = post(client, "q-step", "step", off="1").text
        worker_call.join()
    assert answers[0].status_code == 200
    assert not lab.settings.step_mode and 'id="step"' not in html
    assert [m["state"] for m in lab.state()["messages"]] == ["acked"]


def test_a_lesson_link_on_the_queue_page_is_offered_and_opens_there() -> None:
    """``/lab/<id>/queue?lesson=redelivery``: the GET only offers it (nothing changes); the
    offer's POST opens the lesson and lands back on the queue page."""
    from demo import create_app

    app = create_app({"DEFAULT_LATENCY_MS": 0})
    client = app.test_client()
    html = client.get("/lab/ql1/queue?lesson=redelivery").get_data(as_text=True)
    assert 'id="offer"' in html and "lesson=redelivery" in html
    assert len(app.extensions["labs"]) == 0  # the GET made no lab
    answer = client.post("/lab/ql1?lesson=redelivery", headers={"Origin": "http://localhost"})
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/lab/ql1/queue")
    lab = app.extensions["labs"].get("ql1")
    assert lab.lesson is not None and lab.lesson.name == "redelivery"
    assert lab.queue.scenario is not None and lab.queue.scenario.name == "redelivery"


def test_a_scenario_link_on_the_queue_page_is_sent_on_with_its_lab() -> None:
    from demo import create_app

    client = create_app({"DEFAULT_LATENCY_MS": 0}).test_client()
    answer = client.get("/lab/ql2/queue?scenario=at-most-once")
    assert answer.status_code == 303
    assert "lab=queue" in answer.headers["Location"]
    html = client.get(answer.headers["Location"]).get_data(as_text=True)
    assert 'id="offer"' in html and "lab=queue" in html
    assert client.get("/lab/ql2/queue?scenario=race&lab=queue").status_code == 404
