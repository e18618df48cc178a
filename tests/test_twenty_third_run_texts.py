"""The twenty-third run: what the lab says, checked in its words (both languages)."""

from __future__ import annotations

import gettext
import io

from demo.engine.stepping import PAUSED_MS
from demo.engine.text import translate
from demo.engine.timeline import Step
from demo.payments.requests import RequestEntry
from demo.web.i18n import TRANSLATIONS
from demo.web.payments.timeline import timeline

VI = gettext.GNUTranslations(io.BytesIO((TRANSLATIONS / "vi/LC_MESSAGES/messages.mo").read_bytes()))


def test_a_pause_at_a_step_with_no_line_of_its_own_names_that_step() -> None:
    """Step mode, lesson 5: after "record save: completed" a lane read "paused by you: 0.9 s"
    then "paused by you: 4.6 s", two pauses with no step between (the second stood at
    ``respond``, which the timeline draws as the final "→ 201")."""
    entry = RequestEntry(1, "Double-submit A", started=10.0, key="k")
    entry.steps += [
        Step("lookup", 1.0, {"hit": False, PAUSED_MS: 900.0}),
        Step("record save", 2_000.0, {PAUSED_MS: 900.0}),
        Step("respond", 2_900.0, {"status": 201, PAUSED_MS: 4_600.0}),
    ]
    entry.finished = 17.5
    [cluster] = timeline([entry])
    pauses = [m.text for m in cluster.lanes[0].marks if m.name == "paused"]
    assert [translate(p) for p in pauses] == [
        "paused by you: 0.9 s",
        "paused by you: 0.9 s",
        "paused by you at respond: 4.6 s",
    ]
    assert translate(pauses[-1], VI.gettext) == "bạn tạm dừng ở respond (trả phản hồi): 4.6 s"
