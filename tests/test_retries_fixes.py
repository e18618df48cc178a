"""Issue 14's second round: what a new user broke in the retry lab, each as a regression
test (a double click, the payment lab's currency and current order, the form ranges, the
Retry-After lesson, a reset during a storm, and the storm caps)."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from flask.testing import FlaskClient

from demo.engine.clock import VirtualClock
from demo.engine.problems import Problem
from demo.retries import lab as lab_module
from demo.retries.lab import AMOUNT, CURRENCY, MAX_STORMS, RetriesLab
from demo.retries.policy import RANGES as POLICY_RANGES
from demo.retries.storm_input import BUDGET_RANGES, RANGES
from demo.workspace import Workspace
from tests.retries_support import PaymentsTransport, payments_lab

WAIT_S = 10  # a bound for a condition that holds at once; never a timed assertion


class HeldTransport(PaymentsTransport):
    """Holds each charge until ``release`` is set, and says when one arrived."""

    def __init__(self) -> None:
        super().__init__(payments_lab(VirtualClock(lambda: 1_000_000.0)))
        self.arrived, self.release = threading.Event(), threading.Event()

    def __call__(
        self, method: str, path: str, headers: Mapping[str, str], body: Any, /
    ) -> tuple[int, Mapping[str, str], Any]:
        if method == "POST":
            self.arrived.set()
            assert self.release.wait(WAIT_S)
        return super().__call__(method, path, headers, body)


def new_lab(transport: PaymentsTransport | None = None) -> RetriesLab:
    clock = VirtualClock(lambda: 1_000_000.0)
    send = transport or PaymentsTransport(payments_lab(clock))
    return RetriesLab(clock=clock, transport=send, rng=random.Random(5))


def test_a_second_run_while_one_is_in_flight_is_refused_and_charges_nothing() -> None:
    """Item 1: a double click on Run charged twice; one run at a time, the second a 409."""
    send = HeldTransport()
    lab = new_lab(send)
    answers: list[dict[str, Any]] = []
    first = threading.Thread(target=lambda: answers.append(lab.run({"faults": ["ok"]})))
    first.start()
    assert send.arrived.wait(WAIT_S)
    with pytest.raises(Problem) as caught:
        lab.run({"faults": ["ok"]})
    assert caught.value.status == 409 and caught.value.slug == "run-in-flight"
    assert caught.value.retry_after_s
    send.release.set()
    first.join(WAIT_S)
    assert answers[0]["charges"] == 1
    assert len(send.payments.state()["charges"]) == 1
    assert len(lab.runs()) == 1
    assert lab.run({"faults": ["ok"]})["charges"] == 1  # the lab is free again


def test_the_run_charges_in_the_payment_labs_currency() -> None:
    """Item 2: 42.00 EUR showed as "4,200 EUR" in the payment lab; it charges VND."""
    transport = PaymentsTransport(payments_lab())
    new_lab(transport).run({"faults": ["ok"]})
    (charge,) = transport.payments.state()["charges"]
    assert (charge["amount"], charge["currency"]) == (AMOUNT, CURRENCY) == (100_000, "VND")


def test_a_retry_run_leaves_the_payment_pages_order_alone(
    client: FlaskClient, lab_of: Callable[[str], Workspace]
) -> None:
    """Item 2: every retry run made its order the payment page's; Pay there charged it again."""
    assert client.post("/lab/rf2/retries/api/run", json={"faults": ["ok"]}).status_code == 200
    state = client.get("/lab/rf2/api/state").get_json()
    assert [c["order_id"][:6] for c in state["charges"]] == ["retry-"]
    assert lab_of("rf2").payments.current_order == "42"
    # A plain API call still moves it (curl's behaviour, documented).
    body = {"order_id": "77", "amount": 5, "currency": "VND"}
    client.post("/lab/rf2/api/charges", json=body, headers={"Idempotency-Key": "k77"})
    assert lab_of("rf2").payments.current_order == "77"


def test_the_forms_ranges_are_the_apis(client: FlaskClient) -> None:
    """Item 3: Outage (s) said max 60 while the API takes 1-30."""
    html = client.get("/lab/rf3/retries").get_data(as_text=True)

    def bounds(name: str) -> tuple[int, int]:
        found = re.search(rf'name="{name}" min="(\d+)" max="(\d+)"', html)
        assert found, name
        return int(found[1]), int(found[2])

    assert bounds("outage_s") == RANGES["outage_s"] == (1, 30)
    for name in ("clients", "capacity_per_s", "seed"):
        assert bounds(name) == RANGES[name]
    assert bounds("budget_burst") == BUDGET_RANGES["burst"]
    assert bounds("budget_per_s") == BUDGET_RANGES["per_s"]
    assert bounds("max_attempts") == POLICY_RANGES["max_attempts"]


def test_a_retry_before_retry_after_is_refused_again() -> None:
    """Item 4: the early retry got through; a rate limiter answers it 429 again."""
    lab = new_lab()
    lab.apply_scenario("retry-after")
    early = lab.run({})
    assert early["outcome"] == "gave_up"
    assert [a["status"] for a in early["attempts"]] == [429] * 4
    assert early["charges"] == 0
    assert not all(row["met"] for row in lab.expected())
    lab.apply_scenario("retry-after", fixed=True)
    waited = lab.run({})
    assert [a["status"] for a in waited["attempts"]] == [429, 201]
    assert waited["attempts"][1]["waited_ms"] >= 3000
    assert waited["outcome"] == "charged" and waited["charges"] == 1
    assert all(row["met"] for row in lab.expected())


@pytest.fixture
def held_storms(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[threading.Event, threading.Event]]:
    """Storms that hold until released (the simulator itself is tested elsewhere)."""
    started, release = threading.Event(), threading.Event()
    real = lab_module.storm_answer

    def held(request: object) -> dict[str, Any]:
        started.set()
        assert release.wait(WAIT_S)
        return real(request)

    monkeypatch.setattr(lab_module, "storm_answer", held)
    yield started, release
    release.set()


STORM = {"model": "contention", "clients": 10, "strategy": "full_jitter", "seed": 1}


def test_a_reset_wins_over_a_storm_in_flight(held_storms: tuple[threading.Event, ...]) -> None:
    """Item 9: a storm that finished after Reset came back."""
    started, release = held_storms
    lab = new_lab()
    storm = threading.Thread(target=lab.storm, args=(STORM,))
    storm.start()
    assert started.wait(WAIT_S)
    lab.reset()
    release.set()
    storm.join(WAIT_S)
    assert lab.last_storm is None and lab.is_blank()
    assert lab.storm(STORM)["calls"] > 0  # a storm after the reset shows
    assert lab.last_storm is not None


def test_one_storm_per_lab_and_a_few_per_process(held_storms: tuple[threading.Event, ...]) -> None:
    """Item 10: one client could run unlimited concurrent storms."""
    started, release = held_storms
    labs = [new_lab() for _ in range(MAX_STORMS + 1)]
    threads = []
    for lab in labs[:MAX_STORMS]:
        started.clear()
        threads.append(threading.Thread(target=lab.storm, args=(STORM,)))
        threads[-1].start()
        assert started.wait(WAIT_S)
    with pytest.raises(Problem) as same_lab:
        labs[0].storm(STORM)
    assert same_lab.value.status == 409 and same_lab.value.slug == "storm-in-flight"
    with pytest.raises(Problem) as other_lab:
        labs[-1].storm(STORM)
    assert other_lab.value.status == 429 and other_lab.value.retry_after_s
    assert labs[-1].last_storm is None
    release.set()
    for thread in threads:
        thread.join(WAIT_S)
    assert all(lab.last_storm is not None for lab in labs[:MAX_STORMS])
    assert labs[-1].storm(STORM)["calls"] > 0  # the slots are given back


def open_scenario(client: FlaskClient, lab: str, name: str, fixed: bool) -> None:
    flag = "&fixed=1" if fixed else ""
    answer = client.post(f"/lab/{lab}?scenario={name}{flag}&lab=retries")
    assert answer.status_code == 303


def test_lesson_one_shows_a_declined_card_is_final(client: FlaskClient) -> None:
    """Item 5: the lesson promised "why a declined card is final" but only showed 400s.
    The fix keeps the plan (400 stops at once), and its second step runs the 402."""
    open_scenario(client, "rf5", "retry-policy", fixed=True)
    answer = client.post("/lab/rf5/retries/api/run", json={}).get_json()
    assert [a["status"] for a in answer["attempts"]] == [400]
    assert answer["outcome"] == "final_error" and answer["charges"] == 0
    answer = client.post("/lab/rf5/retries/api/run", json={"faults": [402]}).get_json()
    assert [a["status"] for a in answer["attempts"]] == [402]
    assert answer["outcome"] == "final_error" and answer["charges"] == 0
    lesson = client.post("/lab/rf5?lesson=retry-policy")
    assert lesson.status_code == 303
    assert "A 4xx no retry can change ended the run at once" in client.get("/lab/rf5/retries").text


def test_the_jitter_fix_shows_every_strategy_side_by_side(client: FlaskClient) -> None:
    """Item 6: the fix replaced the exponential chart with a full-jitter one on other axes."""
    open_scenario(client, "rf6", "jitter", fixed=True)
    state = client.get("/lab/rf6/retries/api/state").get_json()
    answer = client.post("/lab/rf6/retries/api/storm", json=state["storm_request"]).get_json()
    assert {r["strategy"] for r in answer["results"]} >= {"exponential", "full_jitter"}
    page = client.get("/lab/rf6/retries").text
    assert 'data-strategy="exponential"' in page and 'data-strategy="full_jitter"' in page
    full = next(r for r in answer["results"] if r["strategy"] == "full_jitter")
    row = client.get("/lab/rf6/retries/api/state").get_json()["expected"][0]
    assert row["actual"] == full["calls"]


def test_the_budget_storm_names_its_budget_and_explains_gave_up(client: FlaskClient) -> None:
    """Item 7: "Gave up 995" unexplained; the peak 9980.0 in the card, 9980 in the table."""
    open_scenario(client, "rf7", "retry-budget", fixed=True)
    state = client.get("/lab/rf7/retries/api/state").get_json()
    assert client.post("/lab/rf7/retries/api/storm", json=state["storm_request"]).status_code == 200
    page = client.get("/lab/rf7/retries").text
    assert "with a retry budget: 10 tokens, 5 a second" in page
    assert "a level above decides when to try again" in page
    peak = re.search(r'data-expected="peak_load".*?class="actual-value">([^<]*)<', page, re.S)
    assert peak and re.fullmatch(r"\d{1,3}(,\d{3})*", peak[1]), peak  # no "9980.0"


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [
        ("lost-response-retry", "retries with a new key", "retries with the same key"),
        ("jitter", "retrying with exponential backoff", "every strategy side by side"),
    ],
)
def test_the_steps_describe_the_lab_with_the_fix_on(
    client: FlaskClient, name: str, before: str, after: str
) -> None:
    """Item 8: after Apply the fix, the steps still described the unfixed lab."""
    open_scenario(client, "rf8", name, fixed=False)
    page = client.get("/lab/rf8/retries").text
    assert before in page and after not in page
    open_scenario(client, "rf8", name, fixed=True)
    page = client.get("/lab/rf8/retries").text
    assert after in page and before not in page


def test_the_card_presses_its_own_step_and_apply_waits_for_a_run(client: FlaskClient) -> None:
    """Item 12: Storm was below the fold, and Apply the fix was primary before any run."""
    assert client.post("/lab/rf9?lesson=jitter").status_code == 303
    page = client.get("/lab/rf9/retries").text
    card = page[page.index('id="lesson"') :]
    assert re.search(r'form="storm-form" data-card-action="storm" class="primary"', card)
    assert not re.search(r'form="lesson-apply-fix"[^>]*class="primary"', card)
    state = client.get("/lab/rf9/retries/api/state").get_json()
    client.post("/lab/rf9/retries/api/storm", json=state["storm_request"])
    card = client.get("/lab/rf9/retries").text
    assert re.search(r'form="lesson-apply-fix"[^>]*class="primary"', card)


def test_an_unknown_storm_member_says_so_in_a_sentence(client: FlaskClient) -> None:
    """Item 12: "Fix the storm: foo unknown member." read as a typo."""
    answer = client.post("/lab/rf10/retries/api/storm", json={"foo": 1})
    assert answer.status_code == 422
    assert "foo is not a storm member (they are: model, strategy" in answer.get_json()["detail"]
