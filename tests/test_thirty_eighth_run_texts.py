"""The thirty-eighth session: what the last runs left, checked in the lab's words."""

from __future__ import annotations

import re

from flask import Flask
from flask.testing import FlaskClient
from test_newcomer_texts import EN, lab


def test_the_operations_chapter_end_leads_on_to_the_next_chapter(
    app: Flask, client: FlaskClient
) -> None:
    """Run Y: the operations chapter's end made "back to the payment lab" its primary
    button and the next chapter a quiet one, so the way on read as the way back."""
    from demo.lessons import LESSONS

    workspace = lab(app, "nu38-chapter")
    for name, lesson in LESSONS.items():
        if lesson.lab == "natural":
            workspace.open_lesson(name)
            for check in lesson.checks:
                workspace.progress.get(name).met_at[check.id] = 1.0
    html = client.get("/lab/nu38-chapter/natural", headers=EN).get_data(as_text=True)
    primary = re.findall(r'<a class="button primary[^"]*" href="([^"]+)"', html)
    assert primary == ["/lab/nu38-chapter/retries?lesson=retry-policy"]
    assert html.index("data-next-chapter") < html.index("data-chapter-done")
