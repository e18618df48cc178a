"""The thirtieth session: what the fortieth new-user run named, checked in the lab's words."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from demo.registry import LabRegistry

EN = {"Accept-Language": "en"}
VI = {"Accept-Language": "vi"}


def _card(html: str, start: str) -> str:
    at = html.index(start)
    return html[at : html.index("</section>", at)]


def test_the_lock_ticked_by_hand_says_what_apply_the_fix_does(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 4 with the Lock ticked by hand: "Apply the fix" stood under the card with no
    word of what it would do to a fix already on (it starts the lab afresh)."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu30-race")
    lab.open_lesson("race")
    lab.payments.update_settings({"lock": True})
    card = _card(client.get("/lab/nu30-race", headers=EN).get_data(as_text=True), 'id="lesson"')
    first = card[card.index('<ol class="lesson-steps">') :]
    first = first[: first.index("</li>")]
    assert "press New order first (or Apply the fix: it starts the lab afresh, the fix on)" in first
    vi = _card(client.get("/lab/nu30-race", headers=VI).get_data(as_text=True), 'id="lesson"')
    assert "Áp dụng cách sửa: lab bắt đầu lại từ đầu" in vi


def test_the_operations_table_says_what_a_dashed_answer_is(app: Flask, client: FlaskClient) -> None:
    """Operations: the dashed blue 200s (answers replayed from the dedup record) had no
    legend; a newcomer took them for three runs. The legend comes with the first replay."""
    registry: LabRegistry = app.extensions["labs"]
    nat = registry.get("nu30-legend").natural
    nat.apply({"operation": "add_balance", "times": 3, "dedup": False})
    html = client.get("/lab/nu30-legend/natural", headers=EN).get_data(as_text=True)
    assert "answers-legend" not in html  # no replay on screen: nothing to explain
    nat.apply({"operation": "add_balance", "times": 3, "dedup": True})
    html = client.get("/lab/nu30-legend/natural", headers=EN).get_data(as_text=True)
    legend = html[html.index('class="hint answers-legend"') :]
    legend = legend[: legend.index("</p>")]
    assert '<span class="status s2xx replayed">200</span>' in legend
    assert "replayed from the dedup record, the operation did not run again" in legend
    assert html.index("answers-legend") < html.index('<table class="ops">')
    vi = client.get("/lab/nu30-legend/natural", headers=VI).get_data(as_text=True)
    assert "replay từ record dedup, thao tác không chạy lại" in vi
