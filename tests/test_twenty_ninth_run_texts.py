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
