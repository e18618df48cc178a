"""The retry lab as a lab of the workspace: scenarios that show their pitfall and whose fix
works, reset, blank, and its API answers against the OpenAPI document."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator

from demo.engine.clock import VirtualClock
from demo.engine.lab import Lab
from demo.engine.problems import Problem
from demo.retries.lab import DEFAULT_FAULTS, RetriesLab
from demo.retries.policy import Policy
from demo.retries.scenarios import SCENARIOS
from demo.retries.steps import STEPS
from demo.web.i18n import LANGUAGES
from demo.web.openapi import document
from demo.workspace import Workspace
from tests.retries_support import PaymentsTransport, payments_lab


@pytest.fixture
def lab() -> RetriesLab:
    clock = VirtualClock(lambda: 1_000_000.0)
    return RetriesLab(
        clock=clock, transport=PaymentsTransport(payments_lab(clock)), rng=random.Random(5)
    )


def play(lab: RetriesLab, name: str, fixed: bool) -> list[dict[str, Any]]:
    """Open scenario ``name``, click its script, and return its expected-vs-actual rows."""
    scenario = lab.apply_scenario(name, fixed=fixed)
    for click in scenario.script:
        if click == "run":
            lab.run({})
        else:
            lab.storm(lab.storm_request)
    return lab.expected()


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_each_scenario_shows_its_pitfall_and_its_fix_works(lab: RetriesLab, name: str) -> None:
    broken = play(lab, name, fixed=False)
    assert broken and not all(row["met"] for row in broken), broken
    fixed = play(lab, name, fixed=True)
    assert fixed and all(row["met"] for row in fixed), fixed


def test_a_storm_of_every_strategy_is_read_for_the_scenarios_own(lab: RetriesLab) -> None:
    lab.apply_scenario("jitter", fixed=True)
    answer = lab.storm({**lab.storm_request, "strategy": "all"})
    full = next(r for r in answer["results"] if r["strategy"] == "full_jitter")
    (row,) = lab.expected()
    assert row["actual"] == full["calls"] and row["met"]


def test_lost_response_scenario_numbers(lab: RetriesLab) -> None:
    (row,) = play(lab, "lost-response-retry", fixed=False)
    assert row == {"what": "charges", "expected": 1, "actual": 2, "met": False}


def test_a_scenario_sets_the_policy_and_leaving_it_restores_the_defaults(lab: RetriesLab) -> None:
    lab.apply_scenario("retry-after")
    assert lab.policy.respect_retry_after is False
    assert lab.faults == (429, "ok")
    lab.run({})
    lab.leave_scenario()
    assert lab.policy == Policy() and lab.faults == DEFAULT_FAULTS
    assert lab.last_run is not None  # results kept
    assert lab.expected() == []


def test_an_unknown_scenario_is_a_404(lab: RetriesLab) -> None:
    with pytest.raises(Problem) as caught:
        lab.apply_scenario("nope")
    assert caught.value.status == 404


def test_reset_and_blank(lab: RetriesLab) -> None:
    assert lab.is_blank()
    lab.run({"faults": ["ok"]})
    assert not lab.is_blank()
    lab.reset()
    assert lab.runs() == [] and lab.last_run is None
    assert not lab.is_blank()  # the plan it ran is kept
    lab.leave_scenario()
    assert lab.is_blank()


def test_the_run_log_is_bounded() -> None:
    clock = VirtualClock(lambda: 0.0)
    lab = RetriesLab(clock=clock, transport=PaymentsTransport(payments_lab(clock)), max_log=3)
    for _ in range(5):
        lab.run({"faults": ["ok"]})
    assert [e.id for e in lab.runs()] == [3, 4, 5]


def test_the_retry_lab_is_a_lab_of_the_workspace() -> None:
    ws = Workspace("w1")
    assert isinstance(ws.retries, Lab)
    assert ws.labs["retries"] is ws.retries
    assert ws.is_blank()
    ws.apply_scenario("jitter", lab="retries")
    assert ws.retries.scenario is SCENARIOS["jitter"]
    assert not ws.is_blank()
    ws.leave_scenario(lab="retries")
    assert ws.retries.scenario is None


DOC = document(tuple(LANGUAGES))


def fits(schema_name: str, value: Any) -> None:
    schema = {"$ref": f"#/components/schemas/{schema_name}", "components": DOC["components"]}
    Draft202012Validator(schema).validate(value)


def test_the_answers_fit_the_document(client: FlaskClient) -> None:
    run = client.post("/lab/d1/retries/api/run", json={"faults": ["lose_response", 429, "ok"]})
    fits("RetryRun", run.get_json())
    for body in ({"strategy": "all", "clients": 20}, {"model": "outage", "clients": 5}):
        storm = client.post("/lab/d1/retries/api/storm", json=body)
        fits("StormAnswer", storm.get_json())
    fits("RetriesState", client.get("/lab/d1/retries/api/state").get_json())
    for bad in ({"policy": {"max_attempts": 3}, "faults": ["ok"]}, {"faults": [503]}):
        fits("RetryRunRequest", bad)


def test_every_step_a_run_writes_is_in_the_labs_table(lab: RetriesLab) -> None:
    lab.run({"faults": ["lose_response", 429, 503, "ok"], "policy": {"max_attempts": 10}})
    lab.run({"faults": [402]})
    for entry in lab.runs():
        for step in entry.steps:
            kind = STEPS[step.name]
            for name, value in step.detail.items():
                assert kind.detail[name].valid(value), (step.name, name, value)
        counts = {name: sum(s.name == name for s in entry.steps) for name in STEPS}
        assert all(counts[name] <= STEPS[name].at_most for name in STEPS)
        assert counts["send"] == counts["answer"] >= 1


def test_runs_at_once_each_count_their_own_charges() -> None:
    # One run per lab at a time (a double click is one run), so the runs at once are those
    # of several labs' clients on one payment lab: each counts only its own order.
    clock = VirtualClock(lambda: 0.0)
    payments = payments_lab(clock)
    labs = [RetriesLab(clock=clock, transport=PaymentsTransport(payments)) for _ in range(8)]
    results: list[dict[str, Any]] = []

    def one(lab: RetriesLab, same_key: bool) -> None:
        plan = {"faults": ["lose_response", "ok"], "policy": {"same_key": same_key}}
        results.append(lab.run(plan))

    threads = [threading.Thread(target=one, args=(lab, i % 2 == 0)) for i, lab in enumerate(labs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r["charges"] for r in results) == [1, 1, 1, 1, 2, 2, 2, 2]
    assert len(payments.state()["charges"]) == 12
    assert len({r["order_id"] for r in results}) == 8
    assert all(len(lab.runs()) == 1 for lab in labs)
