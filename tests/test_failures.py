"""The failure lab: each pitfall from the field through the real code path, with its fix
and without it."""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

import pytest

from demo.payments.scenarios import SCENARIOS
from demo.payments.settings import Settings
from demo.workspace import Workspace

BODY = b'{"order_id": "42", "amount": 100000}'
KEY = ["t1:u7:pay:order-42:v1"]


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def make(**settings: Any) -> Workspace:
    return Workspace("t", settings=Settings(gateway_latency_ms=0).patched(settings), clock=Clock())


def charges(lab: Workspace) -> int:
    return len(lab.payments.gateway.ledger())


def concurrently(lab: Workspace, n: int = 2, key: list[str] = KEY) -> list[Any]:
    start = threading.Barrier(n)
    results: list[Any] = []

    def send() -> None:
        start.wait(5)
        results.append(lab.payments.create_charge(key, BODY))

    threads = [threading.Thread(target=send) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return results


# -- 1. Lost response ------------------------------------------------------------------


def test_lost_response_fault_fires_once_and_a_same_key_retry_replays() -> None:
    lab = make(fault="lose_response")
    _, first = lab.payments.create_charge(KEY, BODY)
    assert first.delivered is False and first.outcome == "charged" and first.status is None
    assert charges(lab) == 1
    assert lab.payments.settings.fault == "none"  # one-shot
    response, retry = lab.payments.create_charge(KEY, BODY)
    assert retry.outcome == "replayed" and retry.delivered
    assert json.loads(response.body)["id"] == first.charge_id
    assert charges(lab) == 1


def test_lost_response_retry_with_a_new_key_charges_again() -> None:
    lab = make(fault="lose_response")
    lab.payments.create_charge(KEY, BODY)
    lab.payments.create_charge(["a-fresh-key"], BODY)
    assert charges(lab) == 2


def test_lost_response_is_not_consumed_by_a_request_that_did_not_charge() -> None:
    lab = make()
    lab.payments.create_charge(KEY, BODY)
    lab.payments.update_settings({"fault": "lose_response"})
    _, replay = lab.payments.create_charge(KEY, BODY)
    assert replay.delivered and lab.payments.settings.fault == "lose_response"


# -- 3. Crash between the charge and the record ------------------------------------------


def test_crash_after_charge_without_the_fix_charges_twice() -> None:
    lab = make(fault="crash_after_charge")
    _, crashed = lab.payments.create_charge(KEY, BODY)
    assert crashed.outcome == "crashed" and not crashed.delivered
    assert charges(lab) == 1
    record = lab.payments.store.get(KEY[0])
    assert record is not None and record.state.value == "in_progress"  # left behind
    assert lab.payments.store.lock_count() == 0  # the lock died with the instance
    _, retry = lab.payments.create_charge(KEY, BODY)
    assert retry.outcome == "charged"
    assert retry.step("reclaim") is not None
    assert charges(lab) == 2


def test_crash_after_charge_with_the_downstream_key_gets_the_first_charge_back() -> None:
    lab = make(fault="crash_after_charge", recovery="downstream_key")
    _, crashed = lab.payments.create_charge(KEY, BODY)
    response, retry = lab.payments.create_charge(KEY, BODY)
    assert retry.outcome == "recovered"  # the gateway returned the first charge
    assert retry.step("gateway replay") is not None
    assert charges(lab) == 1
    assert json.loads(response.body)["id"] == lab.payments.gateway.ledger()[0].id
    # And from now on it replays like any completed key.
    assert lab.payments.create_charge(KEY, BODY)[1].outcome == "replayed"


def _boundaries() -> list[str]:
    lab = make()
    _, entry = lab.payments.create_charge(KEY, BODY)
    return [step.name for step in entry.steps]


@pytest.mark.parametrize("scope", ["shared", "per_instance"])
@pytest.mark.parametrize("index", range(len(_boundaries())))
def test_every_crash_point_with_the_fix_never_charges_twice(index: int, scope: str) -> None:
    lab = make(recovery="downstream_key", store_scope=scope)
    lab.payments.crash_at = index
    _, first = lab.payments.create_charge(KEY, BODY)
    assert first.outcome == "crashed"
    lab.payments.crash_at = None
    assert charges(lab) <= 1
    response, retry = lab.payments.create_charge(KEY, BODY)
    assert response.status == 201, (index, retry.steps)
    assert charges(lab) == 1
    assert lab.payments.create_charge(KEY, BODY)[1].outcome == "replayed"
    assert charges(lab) == 1


def test_without_the_fix_the_double_charge_is_at_the_crash_point_after_the_charge() -> None:
    doubled = []
    for index, name in enumerate(_boundaries()):
        lab = make()
        lab.payments.crash_at = index
        lab.payments.create_charge(KEY, BODY)
        lab.payments.crash_at = None
        lab.payments.create_charge(KEY, BODY)
        if charges(lab) > 1:
            doubled.append(name)
    assert doubled == ["gateway charge"]


def test_a_crash_on_a_per_instance_store_loses_its_records() -> None:
    lab = make(store_scope="per_instance", fault="crash_after_charge")
    lab.payments.create_charge(KEY, BODY)
    assert lab.payments.records() == []  # the instance's memory died with it
    lab.payments.create_charge(KEY, BODY)
    assert charges(lab) == 2


# -- 4. In flight ------------------------------------------------------------------------


def test_in_flight_reject_answers_409_with_retry_after() -> None:
    lab = Workspace("t", settings=Settings(gateway_latency_ms=300, in_flight="reject"))
    results = concurrently(lab)
    statuses = sorted(r.status for r, _ in results)
    assert statuses == [201, 409]
    rejected = next(r for r, _ in results if r.status == 409)
    assert int(rejected.header("Retry-After")) >= 1
    assert json.loads(rejected.body)["type"] == "/problems/key-in-use"
    assert charges(lab) == 1


def test_in_flight_wait_replays() -> None:
    lab = Workspace("t", settings=Settings(gateway_latency_ms=300))
    results = concurrently(lab)
    assert sorted(e.outcome for _, e in results) == ["charged", "replayed"]


def test_a_crashed_in_progress_record_is_not_stuck_for_ever_under_reject() -> None:
    lab = make(in_flight="reject", fault="crash_after_charge", recovery="downstream_key")
    lab.payments.create_charge(KEY, BODY)
    response, entry = lab.payments.create_charge(KEY, BODY)
    assert entry.outcome == "in_use" and response.status == 409  # within the deadline
    lab.advance(31)  # past the 30 s in-progress deadline
    response, entry = lab.payments.create_charge(KEY, BODY)
    assert response.status == 201 and entry.step("reclaim") is not None
    assert charges(lab) == 1


# -- 5. Profiles and require_key -----------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "status", "code"),
    [("seed", 409, None), ("ietf", 422, None), ("stripe", 400, "idempotency_error")],
)
def test_profiles_answer_a_reused_key(profile: str, status: int, code: str | None) -> None:
    lab = make(profile=profile)
    lab.payments.create_charge(KEY, BODY)
    response, entry = lab.payments.create_charge(KEY, b'{"order_id": "42", "amount": 1}')
    assert response.status == status and entry.outcome == "conflict"
    assert json.loads(response.body).get("code") == code
    assert charges(lab) == 1


def test_stripe_profile_in_use_code() -> None:
    lab = Workspace(
        "t", settings=Settings(gateway_latency_ms=300, in_flight="reject", profile="stripe")
    )
    rejected = next(r for r, _ in concurrently(lab) if r.status == 409)
    assert json.loads(rejected.body)["code"] == "idempotency_key_in_use"


def test_require_key() -> None:
    lab = make(require_key=True)
    response, entry = lab.payments.create_charge([], BODY)
    assert response.status == 400 and entry.outcome == "invalid"
    assert json.loads(response.body)["type"] == "/problems/missing-idempotency-key"
    assert charges(lab) == 0


# -- 6. TTL and the virtual clock -------------------------------------------------------


def test_retry_after_ttl_expiry_charges_again_and_a_longer_ttl_replays() -> None:
    for ttl, expected in ((24 * 3600, 2), (72 * 3600, 1)):
        lab = make(ttl_s=ttl)
        lab.payments.create_charge(KEY, BODY)
        lab.advance(25 * 3600)
        lab.payments.create_charge(KEY, BODY)
        assert charges(lab) == expected, ttl


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "1", None, 30 * 24 * 3600 + 1])
def test_bad_clock_advances_are_422(bad: Any) -> None:
    from demo.engine.problems import Problem

    with pytest.raises(Problem) as caught:
        make().advance(bad)
    assert caught.value.status == 422


# -- 7. Several instances ---------------------------------------------------------------


def test_round_robin_over_per_instance_stores_charges_again() -> None:
    lab = make(instances=2, store_scope="per_instance")
    _, first = lab.payments.create_charge(KEY, BODY)
    _, retry = lab.payments.create_charge(KEY, BODY)
    assert (first.instance, retry.instance) == ("i1", "i2")
    assert retry.outcome == "charged"
    assert charges(lab) == 2
    assert sorted(where for where, _ in lab.payments.records()) == ["i1", "i2"]


def test_a_shared_store_replays_across_instances() -> None:
    lab = make(instances=3)
    outcomes = [lab.payments.create_charge(KEY, BODY)[1] for _ in range(3)]
    assert [e.instance for e in outcomes] == ["i1", "i2", "i3"]
    assert [e.outcome for e in outcomes] == ["charged", "replayed", "replayed"]
    assert charges(lab) == 1


# -- 8. Decline and transport failure -----------------------------------------------------


def test_a_decline_is_stored_and_replayed() -> None:
    lab = make(gateway_decline=True)
    first, entry = lab.payments.create_charge(KEY, BODY)
    assert first.status == 402 and entry.outcome == "declined"
    assert json.loads(first.body)["code"] == "card_declined"
    again, entry = lab.payments.create_charge(KEY, BODY)
    assert entry.outcome == "replayed" and again.body == first.body
    assert charges(lab) == 0


def test_a_gateway_error_releases_the_key_and_the_retry_charges() -> None:
    lab = make(fault="gateway_error")
    response, entry = lab.payments.create_charge(KEY, BODY)
    assert response.status == 502 and entry.outcome == "error"
    assert lab.payments.store.get(KEY[0]) is None
    response, entry = lab.payments.create_charge(KEY, BODY)
    assert response.status == 201 and charges(lab) == 1


# -- 10. E-mail, once ------------------------------------------------------------------------


def test_inline_email_is_sent_again_by_the_recovered_retry() -> None:
    lab = make(fault="crash_after_charge", recovery="downstream_key", email="inline")
    lab.payments.create_charge(KEY, BODY)
    lab.payments.create_charge(KEY, BODY)
    assert charges(lab) == 1
    assert len(lab.payments.emails()) == 2


def test_a_recovered_charge_with_a_second_email_is_not_told_as_a_success() -> None:
    from demo.payments.explain import explain
    from demo.payments.gateway import summarise

    lab = make(fault="crash_after_charge", recovery="downstream_key", email="inline")
    lab.payments.create_charge(KEY, BODY)
    lab.payments.create_charge(KEY, BODY)
    said = explain(
        lab.payments.requests(),
        summarise(lab.payments.gateway.ledger()),
        settings=lab.payments.settings,
        emails=2,
    )
    assert said.tone == "double"
    assert str(said.headline) == "CHARGED ONCE — but the receipt e-mail went out 2 times"
    once = explain(
        lab.payments.requests(),
        summarise(lab.payments.gateway.ledger()),
        settings=lab.payments.settings,
        emails=1,
    )
    assert once.tone == "charged" and "RECOVERED" in str(once.headline)


def test_outbox_email_is_sent_once() -> None:
    lab = make(fault="crash_after_charge", recovery="downstream_key", email="outbox")
    lab.payments.create_charge(KEY, BODY)
    assert (
        lab.payments.emails() == []
    )  # the crash came before the record (and its outbox) was saved
    lab.payments.create_charge(KEY, BODY)
    lab.payments.create_charge(KEY, BODY)  # a replay sends nothing
    assert charges(lab) == 1
    assert [e.charge_id for e in lab.payments.emails()] == ["ch_0001"]


def test_outbox_sends_once_per_key_even_when_the_charge_ran_twice() -> None:
    lab = Workspace("t", settings=Settings(lock=False, gateway_latency_ms=200, email="outbox"))
    concurrently(lab)
    assert charges(lab) == 2  # the race, lock off
    assert len(lab.payments.emails()) == 1  # email_sent(key) holds


# -- Scenarios: every preset, run as its steps say, with and without its fix ---------------


def run_script(lab: Workspace, fixed: bool) -> None:
    """Do what the page's buttons do, through the same lab calls."""
    assert lab.payments.scenario is not None
    strategy, guard = lab.payments.client["key_strategy"], lab.payments.client["guard"]
    body = {"order_id": "42", "amount": 100000, "currency": "VND"}

    def key() -> list[str]:
        if strategy == "none":
            return []
        stable = f"t1:u7:pay:order-{body['order_id']}:v1"
        return [str(uuid.uuid4())] if strategy == "random" else [stable]

    for action in lab.payments.scenario.clicks(fixed):
        if action in ("Pay", "Retry"):
            lab.payments.create_charge(key(), json.dumps(body).encode(), action=action)
        elif action == "Retry with a new key":
            lab.payments.create_charge(
                [str(uuid.uuid4())], json.dumps(body).encode(), action=action
            )
        elif action == "Change amount":
            changed = {**body, "amount": body["amount"] + 1000}
            lab.payments.create_charge(key(), json.dumps(changed).encode(), action=action)
        elif action == "Double-submit":
            # The client guard lets only the first of the two out.
            concurrently_body(lab, 1 if guard else 2, key(), json.dumps(body).encode())
        elif action == "+25 h":
            lab.advance(25 * 3600)
        elif action == "New order":
            body["order_id"] = lab.payments.new_order_id(after=str(body["order_id"]))
        elif action == "Pay from two tabs":
            # Each tab's guard lets its own click out: two concurrent requests.
            concurrently_body(lab, 2, key(), json.dumps(body).encode())
        else:  # pragma: no cover - a script naming a button this test does not know
            raise AssertionError(action)


def concurrently_body(lab: Workspace, n: int, key: list[str], body: bytes) -> None:
    start = threading.Barrier(n)

    def send() -> None:
        start.wait(5)
        lab.payments.create_charge(key, body)

    threads = [threading.Thread(target=send) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)


BROKEN = {
    "double-click": "charges",
    "lost-response": "charges",
    "key-per-click": "charges",
    "race": "charges",
    "crash-window": "charges",
    "ttl-expiry": "charges",
    "multi-instance": "charges",
    "email-once": "emails",
    "client-guard": "charges",
}
"""What each scenario shows going wrong without its fix; the others are defences at work."""


@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.parametrize("fixed", [False, True])
def test_scenario_expected_vs_actual(name: str, fixed: bool) -> None:
    lab = Workspace("t", settings=Settings(gateway_latency_ms=300))
    lab.apply_scenario(name, fixed=fixed)
    lab.payments.update_settings(
        {"gateway_latency_ms": max(lab.payments.settings.gateway_latency_ms, 300)}
    )
    run_script(lab, fixed)
    state = lab.state()["summary"]
    charges_ok = state["charged"] == state["intended"]
    emails_ok = lab.payments.settings.email == "off" or state["emails"] == state["intended"]
    broken = BROKEN.get(name)
    if fixed or broken is None:
        assert charges_ok and emails_ok, (name, fixed, state)
    elif broken == "charges":
        assert not charges_ok, (name, state)
    else:
        assert charges_ok and not emails_ok, (name, state)
    assert lab.payments.requests(), "the scenario's steps sent no request"


def test_every_scenario_name_is_kebab_case_and_listed() -> None:
    assert set(SCENARIOS) == {
        "double-click", "lost-response", "key-per-click", "key-reuse", "race", "slow-motion",
        "crash-window", "in-flight", "profiles", "ttl-expiry", "multi-instance", "decline",
        "client-guard", "email-once", "gateway-timeout",
    }  # fmt: skip


def test_applying_a_scenario_starts_afresh_and_leaving_restores_defaults() -> None:
    lab = make()
    lab.payments.create_charge(KEY, BODY)
    lab.apply_scenario("race")
    assert (
        lab.payments.settings.lock is False and lab.payments.requests() == [] and charges(lab) == 0
    )
    lab.apply_scenario("race", fixed=True)
    assert lab.payments.settings.lock is True and lab.payments.fixed
    lab.leave_scenario()
    assert lab.payments.scenario is None and lab.payments.settings.lock is True


def test_a_request_from_before_a_reset_never_fires_the_fresh_labs_fault() -> None:
    lab = Workspace("t", settings=Settings(gateway_latency_ms=300))
    started = threading.Event()
    result: list[Any] = []

    def old_request() -> None:
        started.set()
        result.append(lab.payments.create_charge(["old"], BODY))

    thread = threading.Thread(target=old_request)
    thread.start()
    started.wait(5)
    deadline = time.monotonic() + 5
    while (
        not any(e.step("validate") for e in lab.payments.requests()) and time.monotonic() < deadline
    ):
        time.sleep(0.005)  # until the old request is well under way, at the gateway
    lab.apply_scenario("crash-window")  # a fresh lab, with crash_after_charge armed
    thread.join(5)
    assert result[0][1].outcome == "charged"  # it finished, uncrashed, in the old lab
    assert lab.payments.settings.fault == "crash_after_charge"  # still armed for the new lab
    assert lab.payments.requests() == [] and lab.payments.gateway.ledger() == []
    assert not lab.payments.is_current(result[0][1])


def test_recovered_without_a_crash_is_explained_as_the_gateway_catching_it() -> None:
    from demo.payments.explain import explain
    from demo.payments.gateway import summarise

    lab = make(recovery="downstream_key")
    lab.payments.create_charge(KEY, BODY)
    lab.advance(25 * 3600)  # the record expired; the gateway still remembers the key
    _, entry = lab.payments.create_charge(KEY, BODY)
    assert entry.outcome == "recovered" and charges(lab) == 1
    text = " ".join(
        map(
            str,
            explain(
                lab.payments.requests(), summarise(lab.payments.gateway.ledger()), entry
            ).sentences,
        )
    )
    assert "crashed" not in text and "gateway had seen it" in text
