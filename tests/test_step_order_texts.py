"""Lesson 5's card names the steps in the order Next step plays them (A, B, A, B: both
requests pass lookup, then both charge), in both languages (issue 10, second
README-only run, G1 4)."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from flask import Flask

from demo import create_app
from demo.registry import LabRegistry
from demo.web.i18n import MISSING

ORDER = {
    "en": ("Step A:", "Step B:", "Step A again", "Step B again"),
    "vi": ("Cho A chạy 1 bước", "Cho B chạy 1 bước", "Cho A chạy thêm", "Cho B chạy thêm"),
}


@pytest.mark.parametrize("language", sorted(ORDER))
def test_lesson_5_steps_alternate_the_lanes_as_next_step_does(language: str) -> None:
    app: Flask = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0, "I18N_MARK_MISSING": True})
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("order-5")
    lab.open_lesson("slow-motion")
    answer = app.test_client().get(f"/lab/{lab.id}", headers={"Accept-Language": language})
    text = html_lib.unescape(answer.get_data(as_text=True))
    assert MISSING not in text
    found = re.search(r'<ol class="lesson-steps">(.*?)</ol>', text, re.S)
    assert found
    steps = found.group(1)
    at = [steps.find(s) for s in ORDER[language]]
    assert -1 not in at and at == sorted(at), (at, steps)
    assert "Step B twice" not in steps
