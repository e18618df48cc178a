"""Measuring an element on a page that htmx may swap at any moment.

``Locator.bounding_box()`` gives None when the element it found was replaced or hidden
between finding and measuring (seen in full runs on a loaded machine): measure its
replacement instead of failing on the None.
"""

from __future__ import annotations

from playwright.sync_api import Locator, expect


def box_of(locator: Locator) -> dict[str, float]:
    """The element's box in CSS px (x, y, width, height), once it is visible and measurable."""
    for _ in range(50):
        expect(locator).to_be_visible()
        box = locator.bounding_box()
        if box is not None:
            return dict(box)
        locator.page.wait_for_timeout(100)
    raise AssertionError(f"{locator} never had a box")
