"""The lessons path: each lesson's "achieved" check sees what really happened in the lab.

Every lesson is played here the way its steps say, through the real handler: first the
failure, then the fix. A lesson is achieved only once both have happened."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from test_step_mode import requests, step

from demo.engine.problems import Problem
from demo.lessons import LESSONS, PATH
from demo.payments.settings import Settings
from demo.workspace import Workspace

BODY = b'{"order_id": "42", "amount": 100000}'
OTHER = b'{"order_id": "42", "amount": 101000}'
KEY = "t1:u7:pay:order-42:v1"


def new_lab(latency_ms: int = 0) -> Workspace:
    return Workspace("lessons", settings=Settings(gateway_latency_ms=latency_ms))


def pay(lab: Workspace, key: str | None = KEY, body: bytes = BODY) -> str:
    return lab.payments.create_charge([key] if key else [], body)[1].outcome


def double_submit(lab: Workspace, key: str | None = KEY) -> list[str]:
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def send() -> None:
        start.wait()
        outcomes.append(pay(lab, key))

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(outcomes)


def fix(lab: Workspace) -> None:
    """What "Apply the fix" does: the scenario again, with its fix, in the same lesson."""
    assert lab.lesson is not None
    lab.apply_scenario(lab.lesson.name, fixed=True)


def stepped_double_submit(lab: Workspace) -> None:
    """Step A and B in turn, one step each: both pass lookup before either saves."""
    with requests(lab, 2):
        for _ in range(30):
            if not lab.payments.stepper.paused():
                break
            step(lab, "A")
            step(lab, "B")


def fail_double_click(lab: Workspace) -> None:
    double_submit(lab, key=None)


def fixed_double_click(lab: Workspace) -> None:
    double_submit(lab)


def fail_lost_response(lab: Workspace) -> None:
    pay(lab)
    pay(lab, key="a-new-random-key")


def fixed_lost_response(lab: Workspace) -> None:
    pay(lab)
    assert pay(lab) == "replayed"


def fail_key_reuse(lab: Workspace) -> None:
    pay(lab)
    assert pay(lab, body=OTHER) == "conflict"


def fixed_key_reuse(lab: Workspace) -> None:
    pay(lab)
    pay(lab, key="t1:u7:pay:order-43:v1", body=b'{"order_id": "43", "amount": 101000}')


def fail_race(lab: Workspace) -> None:
    assert double_submit(lab) == ["charged", "charged"]


def fixed_race(lab: Workspace) -> None:
    assert double_submit(lab) == ["charged", "replayed"]


def fail_slow_motion(lab: Workspace) -> None:
    stepped_double_submit(lab)
    assert len(lab.payments.gateway.ledger()) == 2


def fixed_slow_motion(lab: Workspace) -> None:
    stepped_double_submit(lab)
    assert len(lab.payments.gateway.ledger()) == 1


def fail_crash_window(lab: Workspace) -> None:
    assert pay(lab) == "crashed"
    assert pay(lab) == "charged"


def fixed_crash_window(lab: Workspace) -> None:
    assert pay(lab) == "crashed"
    assert pay(lab) == "recovered"


def fail_ttl_expiry(lab: Workspace) -> None:
    pay(lab)
    lab.advance(25 * 3600)
    assert pay(lab) == "charged"


def fixed_ttl_expiry(lab: Workspace) -> None:
    pay(lab)
    lab.advance(25 * 3600)
    assert pay(lab) == "replayed"


def fail_multi_instance(lab: Workspace) -> None:
    pay(lab)
    assert pay(lab) == "charged"


def fixed_multi_instance(lab: Workspace) -> None:
    pay(lab)
    assert pay(lab) == "replayed"


def fail_decline(lab: Workspace) -> None:
    assert pay(lab) == "declined"
    assert pay(lab) == "replayed"


def fixed_decline(lab: Workspace) -> None:
    assert pay(lab) == "error"
    assert pay(lab) == "charged"


def fail_email_once(lab: Workspace) -> None:
    pay(lab)
    pay(lab)
    assert len(lab.payments.emails()) == 2


def fixed_email_once(lab: Workspace) -> None:
    pay(lab)
    pay(lab)
    assert len(lab.payments.emails()) == 1


Half = Callable[[Workspace], None]
PLAYS: dict[str, tuple[Half, Half]] = {
    name: (
        globals()["fail_" + name.replace("-", "_")],
        globals()["fixed_" + name.replace("-", "_")],
    )
    for name in (
        "double-click",
        "lost-response",
        "key-reuse",
        "race",
        "slow-motion",
        "crash-window",
        "ttl-expiry",
        "multi-instance",
        "decline",
        "email-once",
    )
}


def latency(name: str) -> int:
    return 200 if name in ("double-click", "race") else 0  # a race window to overlap in


def test_the_path_runs_in_workshop_order() -> None:
    assert [lesson.name for lesson in PATH] == list(PLAYS)
    for lesson in PATH:
        assert lesson.goal and lesson.takeaway and lesson.hints and len(lesson.checks) >= 2


@pytest.mark.parametrize("name", list(PLAYS))
def test_following_the_steps_achieves_the_lesson(name: str) -> None:
    lab = new_lab(latency(name))
    lab.open_lesson(name)
    fail, fixed = PLAYS[name]
    fail(lab)
    assert lab.achieved() == set()
    fix(lab)
    fixed(lab)
    assert lab.achieved() == {name}, lab.state()["lessons"]


@pytest.mark.parametrize("name", list(PLAYS))
def test_each_half_alone_meets_only_its_own_check(name: str) -> None:
    """A lesson asks for the failure and the fix: neither alone achieves it."""
    first, second = (c.id for c in LESSONS[name].checks)
    fail, fixed = PLAYS[name]
    lab = new_lab(latency(name))
    lab.open_lesson(name)
    fail(lab)
    assert lab.state()["lessons"][name] == {"achieved": False, "met": [first], "hints_shown": 0}
    lab = new_lab(latency(name))
    lab.open_lesson(name)
    fix(lab)
    fixed(lab)
    assert lab.state()["lessons"][name]["met"] == []  # the fix, but nothing failed first
    assert second != first


@pytest.mark.parametrize("name", list(PLAYS))
def test_the_fix_must_come_after_the_failure(name: str) -> None:
    """ "See it fail, then fix it": what the fix showed before the failure does not count."""
    fail, fixed = PLAYS[name]
    lab = new_lab(latency(name))
    lab.open_lesson(name)
    fix(lab)
    fixed(lab)
    lab.apply_scenario(name)  # without the fix again
    fail(lab)
    assert lab.state()["lessons"][name]["met"] == [LESSONS[name].checks[0].id]
    assert lab.achieved() == set()


def test_the_race_checks_see_the_lock_not_the_fix_button() -> None:
    """Switching the lock on by hand is the fix too: the checks read what really ran."""
    lab = new_lab(latency_ms=200)
    lab.open_lesson("race")
    assert double_submit(lab) == ["charged", "charged"]
    lab.payments.update_settings({"lock": True})
    lab.payments.new_order_id()
    assert double_submit(lab, key="t1:u7:pay:order-43:v1") == ["charged", "replayed"]
    assert lab.achieved() == {"race"}


def test_progress_survives_a_reset_and_other_lessons_keep_theirs() -> None:
    lab = new_lab()
    lab.open_lesson("decline")
    fail_decline(lab)
    fix(lab)
    fixed_decline(lab)
    lab.open_lesson("crash-window")
    assert pay(lab) == "crashed"
    assert pay(lab) == "charged"
    lab.reset()
    assert lab.state()["lessons"]["crash-window"]["met"] == ["crash-double"]
    lab.reset_lesson("crash-window")
    assert lab.state()["lessons"]["crash-window"]["met"] == []
    assert lab.achieved() == {"decline"}


def test_hints_are_revealed_one_at_a_time_and_stop_at_the_last() -> None:
    lab = new_lab()
    lab.open_lesson("race")
    shown = [lab.show_hint("race") for _ in range(len(LESSONS["race"].hints) + 2)]
    assert shown == [1, 2, 3, 3, 3]
    lab.reset_lesson("race")
    assert lab.state()["lessons"]["race"]["hints_shown"] == 0


def test_a_lesson_runs_checks_only_while_it_is_open() -> None:
    lab = new_lab()
    lab.open_lesson("decline")
    lab.leave_scenario()
    lab.payments.update_settings({"gateway_decline": True})
    pay(lab)
    pay(lab)
    assert lab.state()["lessons"]["decline"]["met"] == []


def test_unknown_lessons_are_404() -> None:
    lab = new_lab()
    for call in (lab.open_lesson, lab.show_hint, lab.reset_lesson):
        with pytest.raises(Problem) as caught:
            call("nope")
        assert caught.value.status == 404


def test_key_reuse_new_order_then_pay_is_the_fix_too() -> None:
    """After the 409, a new order paid under its own key: the natural way, no fix button."""
    lab = new_lab()
    lab.open_lesson("key-reuse")
    fail_key_reuse(lab)
    assert pay(lab, key="t1:u7:pay:order-43:v1", body=b'{"order_id": "43", "amount": 5}') == (
        "charged"
    )
    assert lab.achieved() == {"key-reuse"}


def test_lost_response_retry_with_the_same_key_after_the_new_key_counts() -> None:
    """Pay (lost), Retry with a new key (double), then Retry with the first key: the
    replay is new, so it counts, although its lost response came before the double."""
    lab = new_lab()
    lab.open_lesson("lost-response")
    fail_lost_response(lab)
    assert pay(lab) == "replayed"
    assert lab.achieved() == {"lost-response"}


def _step_to_end(lab: Workspace, label: str) -> None:
    for _ in range(30):
        if not step(lab, label):
            return
    raise AssertionError(f"{label} never finished: {lab.payments.stepper.paused()}")


def test_slow_motion_is_not_achieved_by_stepping_a_to_the_end_first() -> None:
    # The lesson teaches B blocked on A's lock while A holds it: running A to its end
    # before B even tries the lock shows no blocking, so it is not the lesson's second check.
    lab = new_lab()
    lab.open_lesson("slow-motion")
    fail_slow_motion(lab)
    fix(lab)
    with requests(lab, 2):
        _step_to_end(lab, "A")
        _step_to_end(lab, "B")
    assert sorted(e.outcome for e in lab.payments.requests()[-2:]) == ["charged", "replayed"]
    assert len(lab.payments.gateway.ledger()) == 1
    assert "slow-motion" not in lab.achieved()
    # The interleaving: A takes the lock, B tries it and blocks, then A runs on.
    lab.reset()  # an empty store again: the same key misses once more
    with requests(lab, 2):
        for label in ("A", "A", "B", "B"):  # A: lock wait, lock acquire; B: lock wait, blocks
            assert step(lab, label), label
        blocked = [p for p in lab.payments.stepper.paused() if p["label"] == "B"]
        assert blocked and blocked[0]["blocked_by"] == "A"
        _step_to_end(lab, "A")
        _step_to_end(lab, "B")
    assert "slow-motion" in lab.achieved()
