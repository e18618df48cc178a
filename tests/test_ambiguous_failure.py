"""The ambiguous failure: the gateway takes the charge, and its answer never comes.

Unlike a failure before the charge (502, key released), the server cannot tell whether it
paid. It must not release the key and charge again: it keeps the key in doubt, unless the
key goes on to the gateway (the downstream key of the crash lesson), which makes a re-run
safe either way."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo.payments.explain import explain
from demo.payments.gateway import summarise
from demo.payments.idempotency import (
    IdempotencyStore,
    OutcomeUnknown,
    Response,
    State,
    execute,
    fingerprint,
)
from demo.payments.settings import Settings
from demo.registry import LabRegistry
from demo.workspace import Workspace

FP = fingerprint("POST", "/api/charges", {"order_id": "42", "amount": 100000, "currency": "VND"})
KEY = ["t1:u7:pay:order-42:v1"]
BODY = b'{"order_id": "42", "amount": 100000}'


# -- execute(): the domain core ------------------------------------------------------


class ChargesThenTimesOut:
    """A side effect whose first run charges and then loses its answer."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self) -> Response:
        self.runs += 1
        if self.runs == 1:
            raise OutcomeUnknown("ch_1")
        return Response(201, b'{"id": "ch_1"}')


@pytest.mark.parametrize("lock", [True, False])
def test_an_unknown_outcome_keeps_the_key_in_doubt_and_the_retry_runs_nothing(
    lock: bool,
) -> None:
    store, charge = IdempotencyStore(), ChargesThenTimesOut()
    with pytest.raises(OutcomeUnknown):
        execute(store, "k", FP, charge, lock=lock)
    record = store.get("k")
    assert record is not None and record.state is State.IN_DOUBT
    assert store.lock_count() == 0
    done = execute(store, "k", FP, charge, lock=lock)
    assert done.outcome == "in_doubt" and done.response.status == 409
    assert json.loads(done.response.body)["type"].endswith("/key-in-doubt")
    assert charge.runs == 1  # never run again blindly


@pytest.mark.parametrize("lock", [True, False])
def test_with_a_downstream_key_an_unknown_outcome_releases_the_key(lock: bool) -> None:
    store, charge = IdempotencyStore(), ChargesThenTimesOut()
    with pytest.raises(OutcomeUnknown):
        execute(store, "k", FP, charge, lock=lock, rerun_safe=True)
    assert store.get("k") is None
    assert execute(store, "k", FP, charge, lock=lock, rerun_safe=True).outcome == "charged"
    assert charge.runs == 2  # the re-run is safe: the gateway deduplicates it


def test_a_key_in_doubt_stays_in_doubt_when_later_attempts_could_rerun_safely() -> None:
    """The attempt that may have charged carried no downstream key: a re-run now, even
    with one, could not be matched to it by the gateway."""
    store, charge = IdempotencyStore(), ChargesThenTimesOut()
    with pytest.raises(OutcomeUnknown):
        execute(store, "k", FP, charge)
    assert execute(store, "k", FP, charge, rerun_safe=True).outcome == "in_doubt"
    assert charge.runs == 1


def test_a_key_in_doubt_with_another_body_is_still_a_conflict() -> None:
    store = IdempotencyStore()
    store.mark_in_doubt("k", FP)
    other = fingerprint("POST", "/api/charges", {"order_id": "42", "amount": 1, "currency": "VND"})
    assert execute(store, "k", other, ChargesThenTimesOut()).outcome == "conflict"


def test_a_record_in_doubt_is_evictable_like_a_completed_one() -> None:
    store = IdempotencyStore(max_records=2)
    store.mark_in_doubt("a", FP)
    store.complete("b", FP, Response(201, b"{}"))
    store.reserve("c", FP)  # room is made: the oldest, in doubt, goes
    assert store.get("a") is None and store.get("c") is not None


# -- the lab: the gateway really charges, then times out ----------------------------


def make(**settings: Any) -> Workspace:
    return Workspace("t", settings=Settings(gateway_latency_ms=0, **settings))


def test_the_lab_keeps_the_key_in_doubt_and_charges_once() -> None:
    lab = make(fault="gateway_timeout")
    response, entry = lab.payments.create_charge(KEY, BODY)
    assert response.status == 504 and entry.outcome == "error"
    assert json.loads(response.body)["type"].endswith("/gateway-timeout")
    assert len(lab.payments.gateway.ledger()) == 1  # the money moved
    assert entry.step("gateway timeout") is not None and entry.step("in doubt") is not None
    assert lab.payments.settings.fault == "none"  # one-shot
    response, entry = lab.payments.create_charge(KEY, BODY)
    assert response.status == 409 and entry.outcome == "in_doubt"
    assert len(lab.payments.gateway.ledger()) == 1  # not released and charged again


def test_with_the_downstream_key_the_retry_gets_the_first_charge_back() -> None:
    lab = make(fault="gateway_timeout", recovery="downstream_key")
    response, entry = lab.payments.create_charge(KEY, BODY)
    assert response.status == 504 and entry.step("release") is not None
    response, entry = lab.payments.create_charge(KEY, BODY)
    assert response.status == 201 and entry.outcome == "recovered"
    assert json.loads(response.body)["id"] == "ch_0001"
    assert [c.id for c in lab.payments.gateway.ledger()] == ["ch_0001"]


def test_switching_the_downstream_key_on_later_does_not_release_a_key_in_doubt() -> None:
    lab = make(fault="gateway_timeout")
    lab.payments.create_charge(KEY, BODY)
    lab.payments.update_settings({"recovery": "downstream_key"})
    # The first call went out without the key: the gateway could not match a re-run.
    _, entry = lab.payments.create_charge(KEY, BODY)
    assert entry.outcome == "in_doubt" and len(lab.payments.gateway.ledger()) == 1


def test_a_keyless_timeout_says_a_retry_would_charge_again() -> None:
    lab = make(fault="gateway_timeout")
    response, entry = lab.payments.create_charge([], BODY)
    assert response.status == 504 and entry.outcome == "error"
    assert "No key was sent" in json.loads(response.body)["detail"]


def test_the_explanations_tell_the_timeout_and_the_doubt() -> None:
    lab = make(fault="gateway_timeout")
    lab.payments.create_charge(KEY, BODY)
    summary = summarise(lab.payments.gateway.ledger())
    said = explain(lab.payments.requests(), summary, None, lab.payments.settings)
    assert str(said.headline) == "504 — the gateway timed out, after charging"
    assert "kept it, marked in doubt" in " ".join(map(str, said.sentences))
    lab.payments.create_charge(KEY, BODY)
    said = explain(lab.payments.requests(), summary, None, lab.payments.settings)
    assert str(said.headline) == "409 IN DOUBT — nothing charged again"
    fixed = make(fault="gateway_timeout", recovery="downstream_key")
    fixed.payments.create_charge(KEY, BODY)
    fixed.payments.create_charge(KEY, BODY)
    said = explain(
        fixed.payments.requests(),
        summarise(fixed.payments.gateway.ledger()),
        None,
        fixed.payments.settings,
    )
    assert said.headline and "RECOVERED" in str(said.headline)
    assert "timed out after the gateway charged" in " ".join(map(str, said.sentences))


@pytest.mark.parametrize("fixed", [False, True])
def test_the_scenario_charges_once_either_way(fixed: bool) -> None:
    lab = make()
    lab.apply_scenario("gateway-timeout", fixed=fixed)
    lab.payments.update_settings({"gateway_latency_ms": 0})
    lab.payments.create_charge(KEY, BODY)
    _, retry = lab.payments.create_charge(KEY, BODY)
    assert retry.outcome == ("recovered" if fixed else "in_doubt")
    assert len(lab.payments.gateway.ledger()) == 1


# -- over HTTP ----------------------------------------------------------------------------


@pytest.fixture
def app() -> Flask:
    from demo import create_app

    return create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})


def test_over_http_a_timeout_is_504_then_409_in_doubt(app: Flask) -> None:
    client: FlaskClient = app.test_client()
    api = "/lab/timeout/api"
    assert client.patch(f"{api}/settings", json={"fault": "gateway_timeout"}).status_code == 200
    headers = {"Idempotency-Key": KEY[0]}
    first = client.post(
        f"{api}/charges", json={"order_id": "42", "amount": 100000}, headers=headers
    )
    assert first.status_code == 504 and first.mimetype == "application/problem+json"
    again = client.post(
        f"{api}/charges", json={"order_id": "42", "amount": 100000}, headers=headers
    )
    assert again.status_code == 409 and again.get_json()["type"].endswith("/key-in-doubt")
    registry: LabRegistry = app.extensions["labs"]
    assert len(registry.get("timeout").payments.gateway.ledger()) == 1
    state = client.get(f"{api}/state").get_json()
    assert [r["state"] for r in state["records"]] == ["in_doubt"]


def test_the_page_offers_the_fault_and_names_it_when_armed(app: Flask) -> None:
    client: FlaskClient = app.test_client()
    page = client.get("/lab/timeout-page").get_data(as_text=True)
    assert "Gateway times out after charging" in page
    client.patch("/lab/timeout-page/api/settings", json={"fault": "gateway_timeout"})
    page = client.get("/lab/timeout-page").get_data(as_text=True)
    assert "the next gateway call charges, then times out" in page


def test_after_a_crash_the_explanation_names_the_lease() -> None:
    """A free lock proves a dead holder only in one process: the explanation says so."""
    for recovery, outcome in (("none", "charged"), ("downstream_key", "recovered")):
        lab = make(fault="crash_after_charge", recovery=recovery)
        lab.payments.create_charge(KEY, BODY)
        _, retry = lab.payments.create_charge(KEY, BODY)
        assert retry.outcome == outcome
        said = explain(
            lab.payments.requests(),
            summarise(lab.payments.gateway.ledger()),
            None,
            lab.payments.settings,
        )
        text = " ".join(map(str, said.sentences))
        assert "only inside one process" in text and "a lease, 30 s here" in text
