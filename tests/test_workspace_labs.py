"""The workspace as labs on a shared engine: every lab is reset, counted for "blank",
and opened by its lessons' and scenarios' names; an unknown lab is a 404 problem."""

from __future__ import annotations

from typing import Any

import pytest

from demo import create_app
from demo.engine.lab import Lab
from demo.engine.problems import Problem
from demo.workspace import Workspace


class StubLab:
    """The smallest lab the workspace accepts."""

    name = "stub"

    def __init__(self) -> None:
        self.scenario: Any = None
        self.resets = 0
        self.blank = True

    def apply_scenario(self, name: str, *, fixed: bool = False) -> Any:
        if name != "only":
            raise Problem(404, "unknown-scenario", "No such scenario")
        self.scenario = name
        return name

    def leave_scenario(self) -> None:
        self.scenario = None

    def reset(self) -> None:
        self.resets += 1

    def is_blank(self) -> bool:
        return self.blank

    def state(self) -> dict[str, Any]:
        return {"scenario": self.scenario}


def test_the_payment_lab_is_a_lab() -> None:
    ws = Workspace("t1")
    assert isinstance(ws.payments, Lab)
    assert isinstance(StubLab(), Lab)
    assert list(ws.labs)[0] == "payments"  # first in the switcher; other labs follow


def test_reset_and_blank_go_through_every_lab() -> None:
    ws = Workspace("t1")
    stub = StubLab()
    ws.labs[stub.name] = stub
    ws.reset()
    assert stub.resets == 1
    assert ws.is_blank()
    stub.blank = False
    assert not ws.is_blank()


def test_a_scenario_of_another_lab_opens_there() -> None:
    ws = Workspace("t1")
    stub = StubLab()
    ws.labs[stub.name] = stub
    assert ws.apply_scenario("only", lab="stub") == "only"
    assert stub.scenario == "only"
    assert ws.payments.scenario is None
    ws.leave_scenario(lab="stub")
    assert stub.scenario is None


def test_an_unknown_lab_is_a_404_problem() -> None:
    ws = Workspace("t1")
    with pytest.raises(Problem) as caught:
        ws.apply_scenario("race", lab="nowhere")
    assert caught.value.status == 404


def test_a_link_to_an_unknown_lab_is_a_404_problem_and_makes_no_lab() -> None:
    app = create_app({"DEFAULT_LATENCY_MS": 0})
    client = app.test_client()
    answer = client.post("/lab/t1?lab=nowhere&scenario=race")
    assert answer.status_code == 404
    assert answer.content_type == "application/problem+json"
    assert answer.get_json()["type"].endswith("unknown-lab")
    assert len(app.extensions["labs"]) == 0


def test_a_payment_scenario_link_still_lands_on_the_payment_page() -> None:
    app = create_app({"DEFAULT_LATENCY_MS": 0})
    client = app.test_client()
    answer = client.post("/lab/t1?lab=payments&scenario=race")
    assert answer.status_code == 303
    assert answer.headers["Location"].endswith("/lab/t1")
    answer = client.post("/lab/t1?lesson=race")
    assert answer.status_code == 303
    assert answer.headers["Location"].endswith("/lab/t1")
