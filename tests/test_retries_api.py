"""The retry lab's API: real requests to the payment lab of the same workspace."""

from __future__ import annotations

import time
from typing import Any

import pytest
from flask.testing import FlaskClient

LAB = "/lab/r1"
RUN = f"{LAB}/retries/api/run"
STORM = f"{LAB}/retries/api/storm"


def run(client: FlaskClient, faults: list[Any], **policy: Any) -> dict[str, Any]:
    response = client.post(RUN, json={"faults": faults, "policy": policy})
    assert response.status_code == 200, response.get_json()
    result: dict[str, Any] = response.get_json()
    return result


def ledger(client: FlaskClient, order_id: str) -> list[dict[str, Any]]:
    charges = client.get(f"{LAB}/api/state").get_json()["charges"]
    return [c for c in charges if c["order_id"] == order_id]


def assert_problem(response: Any, status: int, slug: str) -> dict[str, Any]:
    assert response.status_code == status
    assert response.mimetype == "application/problem+json"
    body: dict[str, Any] = response.get_json()
    assert body["type"] == f"/problems/{slug}"
    return body


@pytest.mark.parametrize("status", [400, 402, 409, 422])
def test_final_answers_are_not_retried(client: FlaskClient, status: int) -> None:
    result = run(client, [status])
    assert [a["status"] for a in result["attempts"]] == [status]
    assert result["attempts"][0]["retried"] is False
    assert result["outcome"] == "final_error"
    assert result["charges"] == 0


def test_lost_response_same_key_one_charge(client: FlaskClient) -> None:
    result = run(client, ["lose_response", "ok"], same_key=True)
    assert len(result["attempts"]) == 2
    assert len({a["key"] for a in result["attempts"]}) == 1
    assert result["outcome"] == "replayed"
    assert result["charges"] == 1
    assert len(ledger(client, result["order_id"])) == 1


def test_lost_response_new_key_double_charge_in_the_payment_ledger(client: FlaskClient) -> None:
    result = run(client, ["lose_response", "ok"], same_key=False)
    assert result["charges"] == 2
    charges = ledger(client, result["order_id"])
    assert len(charges) == 2
    assert all(c["double_charge"] for c in charges)
    assert {c["idempotency_key"] for c in charges} == {a["key"] for a in result["attempts"]}


def test_the_attempts_are_on_the_payment_lab_timeline(client: FlaskClient) -> None:
    result = run(client, ["lose_response", 503, "ok"])
    requests = client.get(f"{LAB}/api/state").get_json()["requests"]
    assert [r["action"] for r in requests] == ["Retry client", "Retry client"]
    assert [r["outcome"] for r in requests] == ["charged", "replayed"]
    assert result["outcome"] == "replayed"


def test_waits_grow(client: FlaskClient) -> None:
    result = run(client, [503, 503, "ok"], strategy="exponential", base_ms=250)
    assert [a["waited_ms"] for a in result["attempts"]] == [0, 250, 500]
    assert len({a["key"] for a in result["attempts"]}) == 1


def test_retry_after_respected(client: FlaskClient) -> None:
    result = run(client, [429, "ok"], respect_retry_after=True)
    assert result["attempts"][1]["waited_ms"] >= 3000


def test_max_attempts_gives_up(client: FlaskClient) -> None:
    result = run(client, [502] * 5, max_attempts=3)
    assert len(result["attempts"]) == 3
    assert result["outcome"] == "gave_up"


def test_a_run_moves_the_virtual_clock_and_sleeps_for_none(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    result = run(client, [503, 503, "ok"], strategy="exponential", base_ms=2000)
    assert [a["waited_ms"] for a in result["attempts"]] == [0, 2000, 4000]
    assert slept == []  # the payment lab's gateway has no latency here, and no wait is real
    clock = client.get(f"{LAB}/api/state").get_json()["clock"]
    assert clock["offset_s"] == pytest.approx(6.0)


def test_the_payment_labs_own_lost_response_is_a_network_error(client: FlaskClient) -> None:
    client.patch(f"{LAB}/api/settings", json={"fault": "lose_response"})
    result = run(client, ["ok", "ok"])
    assert result["attempts"][0]["error"] == "network"
    assert result["outcome"] == "replayed"
    assert result["charges"] == 1


def test_state_holds_the_last_run_and_a_get_changes_nothing(client: FlaskClient) -> None:
    assert client.get(f"{LAB}/retries/api/state").get_json()["last_run"] is None
    result = run(client, [503, "ok"], strategy="fixed")
    state = client.get(f"{LAB}/retries/api/state").get_json()
    assert state["last_run"] == result
    assert state["policy"]["strategy"] == "fixed"
    assert state["faults"] == [503, "ok"]
    assert [s["name"] for s in state["runs"][0]["steps"]] == ["send", "answer"] * 2
    assert client.get(f"{LAB}/retries/api/state").get_json() == state


def test_a_get_of_an_unknown_lab_makes_none(client: FlaskClient, app: Any) -> None:
    assert client.get("/lab/nobody/retries/api/state").status_code == 200
    assert app.extensions["labs"].peek("nobody") is None


@pytest.mark.parametrize(
    ("body", "slug"),
    [
        ({"policy": {"max_attempts": 0}}, "invalid-policy"),
        ({"policy": {"strategy": "sometimes"}}, "invalid-policy"),
        ({"policy": {"retry_on": [200]}}, "invalid-policy"),
        ({"policy": [1]}, "invalid-policy"),
        ({"faults": [418]}, "invalid-faults"),
        ({"faults": "ok"}, "invalid-faults"),
        ({"faults": ["ok"], "extra": 1}, "invalid-run"),
        ([1, 2], "invalid-run"),
    ],
)
def test_bad_runs_are_422_and_change_nothing(client: FlaskClient, body: Any, slug: str) -> None:
    run(client, ["ok"])
    before = client.get(f"{LAB}/retries/api/state").get_json()
    payments = client.get(f"{LAB}/api/state").get_json()["charges"]
    assert_problem(client.post(RUN, json=body), 422, slug)
    assert client.get(f"{LAB}/retries/api/state").get_json() == before
    assert client.get(f"{LAB}/api/state").get_json()["charges"] == payments


def test_malformed_and_non_json_bodies(client: FlaskClient) -> None:
    assert_problem(
        client.post(RUN, data="{", content_type="application/json"), 400, "malformed-json"
    )
    assert_problem(
        client.post(RUN, data="x", content_type="text/plain"), 415, "unsupported-media-type"
    )
    assert_problem(
        client.post(STORM, data=b"\xff", content_type="application/json"), 400, "malformed-json"
    )


def test_storm_all_strategies(client: FlaskClient) -> None:
    response = client.post(STORM, json={"model": "contention", "clients": 30, "strategy": "all"})
    assert response.status_code == 200
    answer = response.get_json()
    assert len(answer["results"]) == 6
    assert all(r["calls"] >= 30 for r in answer["results"])
    state = client.get(f"{LAB}/retries/api/state").get_json()
    assert state["last_storm"] == answer


def test_storm_same_seed_same_answer(client: FlaskClient) -> None:
    body = {"model": "outage", "clients": 50, "strategy": "full_jitter", "outage_s": 2, "seed": 9}
    first = client.post(STORM, json=body).get_json()
    assert client.post(STORM, json=body).get_json() == first
    assert set(first) >= {"calls", "completion_s", "peak_load", "series"}


@pytest.mark.parametrize(
    "body",
    [{"clients": 1001}, {"model": "flood"}, {"budget": {"burst": -1, "per_s": 1}}, {"seed": "1"}],
)
def test_bad_storms_are_422(client: FlaskClient, body: dict[str, Any]) -> None:
    assert_problem(client.post(STORM, json=body), 422, "invalid-storm")
    assert client.get(f"{LAB}/retries/api/state").get_json()["last_storm"] is None


def test_a_cross_site_run_is_refused(client: FlaskClient) -> None:
    response = client.post(RUN, json={}, headers={"Sec-Fetch-Site": "cross-site"})
    assert response.status_code == 403
    assert client.get(f"{LAB}/api/state").get_json()["charges"] == []


def test_no_run_while_the_payment_lab_is_in_step_mode(client: FlaskClient) -> None:
    client.patch(f"{LAB}/api/settings", json={"step_mode": True})
    before = client.get(f"{LAB}/retries/api/state").get_json()
    assert_problem(client.post(RUN, json={"faults": ["ok"]}), 409, "payment-lab-stepping")
    assert client.get(f"{LAB}/retries/api/state").get_json() == before
    assert client.get(f"{LAB}/api/state").get_json()["requests"] == []
