"""The queue lab's chapter: each lesson is achieved by its scenario run without, then
with its fix, on the real lab; the first run alone achieves nothing."""

from __future__ import annotations

import pytest

from demo.lessons import CHAPTERS, LESSONS
from demo.queue.scenarios import SCENARIOS
from demo.workspace import Workspace

NAMES = [lesson.name for lesson in CHAPTERS["queue"]]


def test_one_lesson_per_scenario() -> None:
    assert list(SCENARIOS) == NAMES
    assert all(LESSONS[name].lab == "queue" for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_scenario_then_fix_achieves_the_lesson(name: str) -> None:
    ws = Workspace("t1")
    ws.open_lesson(name)
    ws.queue.play(name)
    progress = ws.progress[name]
    first = LESSONS[name].checks[0].id
    assert progress.met == {first}, "the scenario shows the failure, not the fix"
    assert name not in ws.achieved()
    ws.apply_scenario(name, fixed=True, lab="queue")
    ws.queue.play(name, fixed=True)
    assert name in ws.achieved()


@pytest.mark.parametrize("name", NAMES)
def test_the_fix_alone_does_not_achieve(name: str) -> None:
    ws = Workspace("t2")
    ws.open_lesson(name)
    ws.queue.play(name, fixed=True)
    assert name not in ws.achieved()


def test_outbox_check_waits_for_the_resend_the_provider_drops() -> None:
    """The relay's crash alone proves nothing yet: the check is met once its resend came
    back from the provider as a repeat (one e-mail per key, with the resend seen)."""
    ws = Workspace("t3")
    ws.open_lesson("outbox")
    ws.queue.play("outbox")
    ws.apply_scenario("outbox", fixed=True, lab="queue")
    clicks = SCENARIOS["outbox"].clicks_for(True)
    with ws.queue.stepping:
        for _ in clicks[:-1]:
            ws.queue.play_next()
    assert "outbox-once" not in ws.progress["outbox"].met
    with ws.queue.stepping:
        ws.queue.play_next()
    assert "outbox-once" in ws.progress["outbox"].met
