"""The twenty-ninth session: what the last runs left or found, checked in the lab's words."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from demo.registry import LabRegistry

EN = {"Accept-Language": "en"}


def test_the_simulator_sits_under_the_answer_in_its_lesson(app: Flask, client: FlaskClient) -> None:
    """Queue lesson 5 is played on the simulator, which sat 1,900 px below the card at
    1280×720, under the queue, mailbox, tables, timeline, code and diagram."""
    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu29-sim").open_lesson("delivery-semantics")
    html = client.get("/lab/nu29-sim/queue", headers=EN).get_data(as_text=True)
    assert html.index('id="explain"') < html.index('id="simulator"') < html.index('id="queue"')
    registry.get("nu29-crash").open_lesson("redelivery")
    html = client.get("/lab/nu29-crash/queue", headers=EN).get_data(as_text=True)
    assert html.index('id="sequence"') < html.index('id="simulator"')


def test_the_pixel_window_set_by_hand_predicts_its_own_count(
    app: Flask, client: FlaskClient
) -> None:
    """Operations lesson 4, the window chosen by hand halfway: the achieved card read
    "expected with the fix 6 · with the fix 3 · actual 5 MISMATCH". The views before the
    window stay counted; the window's own rule predicts the rest."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-pixel")
    lab.open_lesson("tracking-pixel")
    nat = lab.natural
    reader = nat.view_pixel("42", None, prefetch=False).viewer  # the page's own load
    nat.view_pixel("42", reader, prefetch=False)  # Reload the article
    nat.view_pixel("42", reader, prefetch=True)  # Prefetch it
    nat.view_pixel("42", None, prefetch=False)  # Unfurl in a chat app
    nat.update_settings({"pixel_dedup_window_s": 1800})  # by hand, not Apply the fix
    nat.view_pixel("42", reader, prefetch=False)  # within the window: not counted
    nat.view_pixel("42", None, prefetch=False)  # a new viewer: counted
    assert nat.pixel.counts()["42"] == 5
    html = client.get("/lab/nu29-pixel/natural", headers=EN).get_data(as_text=True)
    card = html[html.index('id="natural-lesson"') :]
    assert 'expected with the fix <strong class="n-expected">5</strong>' in card
    assert 'actual <strong class="n-actual">5</strong>' in card
    assert "n-intended" not in card
    assert "MISMATCH" not in card
