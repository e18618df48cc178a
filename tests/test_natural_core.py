"""The operations lab's core (no web): every operation retried with and without a dedup
record, the delayed duplicate with and without If-Match, and the pixel's dedup window."""

from __future__ import annotations

import pytest

from demo.engine.clock import VirtualClock
from demo.engine.problems import Problem
from demo.natural.conditional import delayed_duplicate
from demo.natural.lab import NaturalLab
from demo.natural.operations import OPERATIONS, START, apply
from demo.natural.pixel import MAX_POSTS, MAX_SEEN, Pixel

# operation → (what 3 attempts without dedup leave, natural?)
WITHOUT_DEDUP = {
    "set_balance": ({"balance": 100}, True),
    "add_balance": ({"balance": 300}, False),
    "put_profile": ({"profile": {"name": "Lan", "plan": "pro"}}, True),
    "patch_append_tag": ({"tags": ["vip", "vip", "vip"]}, False),
    "delete_item": ({"items": [8]}, True),
    "set_flag": ({"flag": True}, True),
    "send_email": ({"emails": ["em_0001", "em_0002", "em_0003"]}, False),
    "create_invoice": (
        {"invoices": ["INV-0001", "INV-0002", "INV-0003"], "next_invoice": 4},
        False,
    ),
    "transfer": ({"balance": 300, "savings": 700}, False),
}

# operation → what 3 attempts with dedup leave: the state after one attempt
WITH_DEDUP = {
    "set_balance": {"balance": 100},
    "add_balance": {"balance": 100},
    "put_profile": {"profile": {"name": "Lan", "plan": "pro"}},
    "patch_append_tag": {"tags": ["vip"]},
    "delete_item": {"items": [8]},
    "set_flag": {"flag": True},
    "send_email": {"emails": ["em_0001"]},
    "create_invoice": {"invoices": ["INV-0001"], "next_invoice": 2},
    "transfer": {"balance": 100, "savings": 900},
}


def test_every_operation_is_covered() -> None:
    assert set(WITHOUT_DEDUP) == set(OPERATIONS) == set(WITH_DEDUP)


@pytest.mark.parametrize("name", list(WITHOUT_DEDUP))
def test_retried_three_times_without_dedup(name: str) -> None:
    changed, natural = WITHOUT_DEDUP[name]
    run = apply(name, 3, dedup=False, key="k")
    assert run.final_state == {**START, **changed}
    assert run.natural is natural
    assert run.same_state is natural
    assert [a.n for a in run.attempts] == [1, 2, 3]
    assert not any(a.replayed for a in run.attempts)


@pytest.mark.parametrize("name", list(WITH_DEDUP))
def test_retried_three_times_with_dedup(name: str) -> None:
    run = apply(name, 3, dedup=True, key="k")
    assert run.final_state == {**START, **WITH_DEDUP[name]}
    assert run.same_state and run.same_response
    assert [a.replayed for a in run.attempts] == [False, True, True]
    # the classification is the operation's, not the dedup table's
    assert run.natural is WITHOUT_DEDUP[name][1]


def test_the_issue_values() -> None:
    assert apply("add_balance", 3, dedup=False, key="k").final_state["balance"] == 300
    assert apply("add_balance", 3, dedup=True, key="k").final_state["balance"] == 100
    assert len(apply("create_invoice", 3, dedup=False, key="k").final_state["invoices"]) == 3
    assert len(apply("create_invoice", 3, dedup=True, key="k").final_state["invoices"]) == 1
    for dedup in (False, True):
        run = apply("set_balance", 3, dedup=dedup, key="k")
        assert run.final_state["balance"] == 100 and run.natural


def test_a_retried_delete_keeps_the_state_but_not_the_response() -> None:
    run = apply("delete_item", 2, dedup=False, key="k")
    assert [a.status for a in run.attempts] == [204, 404]
    assert run.same_state and run.natural and not run.same_response
    replayed = apply("delete_item", 2, dedup=True, key="k")
    assert [a.status for a in replayed.attempts] == [204, 204]


def test_every_attempt_has_its_own_state() -> None:
    run = apply("add_balance", 4, dedup=False, key="k")
    assert [a.state["balance"] for a in run.attempts] == [100, 200, 300, 400]
    assert [a.changed for a in run.attempts] == [True, True, True, True]


def test_a_transfer_runs_out_of_savings() -> None:
    run = apply("transfer", 10, dedup=False, key="k")
    assert run.final_state["savings"] == 0 and run.final_state["balance"] == 1000
    assert run.attempts[-1].status == 200
    assert START["savings"] == 1000  # the starting state is never touched


def test_the_delayed_duplicate_loses_an_update_unless_conditional() -> None:
    plain = delayed_duplicate(conditional=False)
    assert [(w.client, w.balance, w.status) for w in plain] == [
        ("A", 100, 200),
        ("B", 50, 200),
        ("A", 100, 200),
    ]
    assert plain[-1].balance_after == 100 and plain[-1].late
    guarded = delayed_duplicate(conditional=True)
    assert [w.status for w in guarded] == [200, 200, 412]
    assert guarded[-1].balance_after == 50
    assert guarded[0].if_match == guarded[2].if_match == '"v1"'
    assert guarded[1].if_match == '"v2"'


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_pixel_counts_every_get_with_window_zero() -> None:
    pixel = Pixel(FakeClock())
    first = pixel.view("42", None)
    assert first.new_viewer and first.counted and first.views == 1
    for _ in range(2):
        assert pixel.view("42", first.viewer).counted
    assert pixel.counts() == {"42": 3}


def test_the_pixel_window_counts_once_per_viewer_and_post() -> None:
    clock = FakeClock()
    pixel = Pixel(clock)
    pixel.window_s = 1800
    first = pixel.view("42", None)
    again = [pixel.view("42", first.viewer) for _ in range(2)]
    assert [v.counted for v in again] == [False, False]
    assert pixel.counts() == {"42": 1}
    assert pixel.view("7", first.viewer).counted  # another post
    assert pixel.view("42", None).counted  # no cookie: another viewer (a chat app's unfurl)
    clock.now += 1799
    assert not pixel.view("42", first.viewer).counted  # a real second visit, within: lost
    clock.now += 1
    assert pixel.view("42", first.viewer).counted
    assert pixel.counts() == {"42": 3, "7": 1}


def test_a_forged_cookie_is_a_new_viewer() -> None:
    pixel = Pixel(FakeClock())
    view = pixel.view("42", "<script>")
    assert view.new_viewer and view.viewer != "<script>" and len(view.viewer) == 16


def test_the_pixel_is_bounded() -> None:
    clock = FakeClock()
    pixel = Pixel(clock)
    pixel.window_s = 60
    for n in range(MAX_POSTS):
        pixel.view(str(n), None)
    with pytest.raises(Problem) as refused:
        pixel.view("99999", None)
    assert refused.value.status == 422
    for _ in range(MAX_SEEN + 10):
        pixel.view("1", None)
    assert len(pixel._seen) <= MAX_SEEN and len(pixel._viewers) <= MAX_SEEN


def test_the_lab_logs_every_request_and_is_bounded() -> None:
    finished: list[int] = []
    lab = NaturalLab(
        clock=VirtualClock(FakeClock()), max_log=5, finished=lambda: finished.append(1)
    )
    assert lab.is_blank()
    lab.apply({"operation": "add_balance", "times": 3})
    lab.delayed({"conditional": True})
    view = lab.view_pixel("42", None, prefetch=False)
    lab.view_pixel("42", view.viewer, prefetch=True)
    assert [e.action for e in lab.requests()] == [
        "apply",
        "delayed-duplicate",
        "pixel",
        "pixel",
    ]
    assert len(finished) == 4 and not lab.is_blank()
    assert lab.state()["views"] == {"42": 2}
    for _ in range(10):
        lab.apply({"operation": "set_flag"})
    assert len(lab.requests()) == 5
    lab.reset()
    assert lab.is_blank()


@pytest.mark.parametrize(
    "body",
    [
        None,
        [],
        {},
        {"operation": "nope"},
        {"operation": "add_balance", "times": 0},
        {"operation": "add_balance", "times": 11},
        {"operation": "add_balance", "times": True},
        {"operation": "add_balance", "times": 2.0},
        {"operation": "add_balance", "dedup": "yes"},
        {"operation": "add_balance", "key": ""},
        {"operation": "add_balance", "key": None},
        {"operation": "add_balance", "key": "é"},
        {"operation": "add_balance", "key": "x" * 256},
        {"operation": "add_balance", "extra": 1},
    ],
)
def test_bad_apply_bodies_are_refused_and_change_nothing(body: object) -> None:
    lab = NaturalLab()
    with pytest.raises(Problem) as refused:
        lab.apply(body)
    assert refused.value.status == 422
    assert lab.is_blank()


@pytest.mark.parametrize(
    "changes",
    [
        [],
        {"x": 1},
        {"pixel_dedup_window_s": -1},
        {"pixel_dedup_window_s": 86401},
        {"pixel_dedup_window_s": 60.0},
        {"pixel_dedup_window_s": True},
    ],
)
def test_bad_settings_are_refused(changes: object) -> None:
    lab = NaturalLab()
    with pytest.raises(Problem) as refused:
        lab.update_settings(changes)
    assert refused.value.status == 422
    assert lab.settings() == {"pixel_dedup_window_s": 0}


def test_a_scenario_with_its_fix_sets_the_window() -> None:
    lab = NaturalLab()
    lab.apply_scenario("tracking-pixel", fixed=True)
    assert lab.settings() == {"pixel_dedup_window_s": 1800}
    lab.apply_scenario("tracking-pixel")
    assert lab.settings() == {"pixel_dedup_window_s": 0}
    lab.apply_scenario("set-vs-add", fixed=True)
    assert lab.fix_on("dedup") and not lab.fix_on("window")
    with pytest.raises(Problem):
        lab.apply_scenario("nope")


def test_every_step_the_lab_marks_is_in_its_table() -> None:
    import ast
    from pathlib import Path

    from demo.natural.steps import STEPS

    marks = []
    for path in sorted((Path(__file__).parent.parent / "demo" / "natural").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "mark"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                marks.append((node.args[0].value, {str(k.arg) for k in node.keywords}))
    assert {name for name, _ in marks} == set(STEPS)
    for name, detail in marks:
        assert detail <= set(STEPS[name].detail), name


def test_every_logged_step_fits_its_table() -> None:
    from demo.natural.steps import STEPS

    lab = NaturalLab()
    lab.apply({"operation": "delete_item", "times": 10, "dedup": True})
    lab.delayed({"conditional": True})
    lab.view_pixel("42", None, prefetch=True)
    for entry in lab.requests():
        for step in entry.steps:
            kind = STEPS[step.name]
            assert sum(s.name == step.name for s in entry.steps) <= kind.at_most
            for member, value in step.detail.items():
                assert kind.detail[member].valid(value), (step.name, member, value)


def test_a_lab_full_to_every_cap_stays_under_one_mib() -> None:
    import tracemalloc

    tracemalloc.start()
    try:
        lab = NaturalLab()
        for i in range(250):  # the log keeps 200; the fattest runs, with the longest key
            operation = ("create_invoice", "send_email", "patch_append_tag")[i % 3]
            lab.apply({"operation": operation, "times": 10, "key": "k" * 255})
        for operation in OPERATIONS:
            lab.apply({"operation": operation, "times": 10, "dedup": True, "key": "k" * 255})
        lab.update_settings({"pixel_dedup_window_s": 60})
        for post in range(MAX_POSTS):
            for _ in range(MAX_SEEN // MAX_POSTS + 5):
                lab.view_pixel(str(post + 1), None, prefetch=False)
        used = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(lab.requests()) == 200 and len(lab.pixel._seen) == MAX_SEEN
    assert used < 1024 * 1024, used
