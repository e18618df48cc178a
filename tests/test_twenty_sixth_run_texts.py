"""The twenty-sixth session: what the twenty-sixth run found, checked in the lab's words."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from demo.registry import LabRegistry

EN = {"Accept-Language": "en"}


def test_go_further_follows_the_lesson_buttons(app: Flask, client: FlaskClient) -> None:
    """Lesson 9's "Go further" note, above the checks once the fix was applied, pushed the
    card's buttons off a 1280x720 screen: it is read after the case, as Why is."""
    registry: LabRegistry = app.extensions["labs"]
    client.post("/lab/nu26-further?lesson=decline", headers=EN)
    registry.get("nu26-further").apply_scenario("decline", fixed=True)
    html = client.get("/lab/nu26-further", headers=EN).get_data(as_text=True)
    assert "Go further:" in html
    assert html.index('class="lesson-actions"') < html.index('class="fix-note"')
    assert html.index('class="fix-note"') < html.index('class="why"')
