"""The operations lab after a newcomer's walk-through: the lessons strip, a link's
change offered (never applied by a GET), presenter mode, the card's expected values per
case, the badge that follows the switches, a safe HEAD and one post id per counter."""

from __future__ import annotations

import re

import pytest
from flask.testing import FlaskClient

L = "/lab/nat1/natural"
HX = {"HX-Request": "true"}


def _html(client: FlaskClient, path: str = "") -> str:
    response = client.get(f"{L}{path}")
    assert response.status_code == 200, response.status_code
    return response.get_data(as_text=True)


def _open(client: FlaskClient, **form: str) -> None:
    response = client.post("/lab/nat1", data={"lab": "natural", **form})
    assert response.status_code == 303, response.data


def _state(client: FlaskClient) -> dict[str, object]:
    data: dict[str, object] = client.get(f"{L}/api/state").get_json()
    return data


def test_the_page_has_the_chapter_s_lessons_strip(client: FlaskClient) -> None:
    html = _html(client)
    assert 'id="natural-path"' in html and "0 of 4 achieved" in html
    start = re.search(r'<form class="start" method="post" action="([^"]+)"', html)
    assert start is not None and "lesson=set-vs-add" in start.group(1)
    for name in ("set-vs-add", "which-are-natural", "lost-update", "tracking-pixel"):
        assert f'data-lesson="{name}"' in html


def test_the_lesson_card_has_checks_hints_reset_and_the_chapter_end(client: FlaskClient) -> None:
    _open(client, lesson="set-vs-add")
    html = _html(client)
    assert 'data-check="set-natural-add-not"' in html and "Show a hint" in html
    assert f"{L}/lessons/set-vs-add/reset" in html
    response = client.post(f"{L}/lessons/set-vs-add/hint", headers=HX)
    assert response.status_code == 200 and 'class="hints"' in response.get_data(as_text=True)
    assert client.post(f"{L}/lessons/set-vs-add/reset").status_code == 303
    assert 'class="hints"' not in _html(client)
    # The last lesson, achieved: no next lesson, the chapter ends with the way back.
    _open(client, lesson="tracking-pixel")
    client.get(f"{L}/pixel.gif?post=42")
    client.get(f"{L}/pixel.gif?post=42")
    _open(client, lesson="tracking-pixel")  # afresh; progress is kept
    client.patch(f"{L}/api/settings", json={"pixel_dedup_window_s": 1800})
    client.get(f"{L}/pixel.gif?post=42")
    client.get(f"{L}/pixel.gif?post=42")
    html = _html(client)
    assert "Lesson achieved" in html and "data-next-lesson" not in html
    assert "data-chapter-done" in html and "/lab/nat1" in html


def test_a_hint_reload_does_not_count_a_view(client: FlaskClient) -> None:
    _open(client, lesson="tracking-pixel")
    client.post(f"{L}/lessons/tracking-pixel/hint", headers=HX)
    assert _state(client)["views"] == {}


@pytest.mark.parametrize(
    "query", ["?lesson=set-vs-add", "?scenario=lost-update&lab=natural", "?present=1&lab=natural"]
)
def test_a_link_is_offered_not_applied(client: FlaskClient, query: str) -> None:
    _open(client, scenario="none")  # make the lab
    html = _html(client, query)
    offer = re.search(r'<form id="offer" class="offer" method="post" action="([^"]+)"', html)
    assert offer is not None and offer.group(1).startswith("/lab/nat1?")
    state = _state(client)
    assert state["scenario"] is None and 'class="natural-page present' not in html
    response = client.post(offer.group(1).replace("&amp;", "&"))
    assert response.status_code == 303 and response.location.endswith(f"{L}")


def test_a_link_without_lab_is_sent_on_with_it(client: FlaskClient) -> None:
    response = client.get(f"{L}?scenario=lost-update")
    assert response.status_code == 303 and "lab=natural" in response.location
    assert client.get(f"{L}?scenario=nope&lab=natural").status_code == 404


def test_presenter_switch_in_the_header_and_leaves(client: FlaskClient) -> None:
    html = _html(client)
    assert 'class="present-switch"' in html and "present=1" in html
    _open(client, present="1")
    html = _html(client)
    assert 'class="natural-page present' in html
    switch = re.search(r'<form class="present" method="post" action="([^"]+)"', html)
    assert switch is not None and "present=0" in switch.group(1)


def test_set_vs_add_without_the_fix_is_evidence_not_a_mismatch(client: FlaskClient) -> None:
    _open(client, scenario="set-vs-add")
    client.post(f"{L}/api/apply", json={"operation": "add_balance", "times": 3})
    html = _html(client, "/_partials/lesson")
    assert "failure without the fix" in html and "MISMATCH" not in html
    assert re.search(r'n-expected">300<.*n-actual">300<', html, re.S)
    assert "kept as evidence" in html
    client.post(f"{L}/api/apply", json={"operation": "add_balance", "times": 3, "dedup": True})
    html = _html(client, "/_partials/lesson")
    assert "expected with the fix" in html and re.search(
        r'n-expected">100<.*n-actual">100<', html, re.S
    )


def test_which_are_natural_expects_the_mix(client: FlaskClient) -> None:
    _open(client, scenario="which-are-natural")
    for op in ("set_balance", "add_balance", "put_profile", "patch_append_tag", "delete_item",
               "set_flag", "send_email", "create_invoice", "transfer"):  # fmt: skip
        client.post(f"{L}/api/apply", json={"operation": op, "times": 3})
    html = _html(client, "/_partials/lesson")
    assert re.search(r'n-expected">4<.*n-actual">4<', html, re.S) and "MISMATCH" not in html


def test_lost_update_without_if_match_expects_100(client: FlaskClient) -> None:
    _open(client, scenario="lost-update")
    client.post(f"{L}/api/delayed-duplicate", json={"conditional": False})
    html = _html(client, "/_partials/lesson")
    assert re.search(r'n-expected">100<.*n-actual">100<', html, re.S) and "MISMATCH" not in html


def test_the_badge_says_when_the_fix_was_changed_by_hand(client: FlaskClient) -> None:
    """It says what the lab holds now (Dedup off), and that it was changed by hand."""
    _open(client, scenario="set-vs-add", fixed="1")
    assert ">fix ON: dedup</span>" in _html(client, "/_partials/lesson")
    client.post(f"{L}/api/apply", json={"operation": "add_balance", "times": 3, "dedup": False})
    html = _html(client, "/_partials/lesson")
    assert ">fix OFF: no dedup (changed by hand)</span>" in html


def test_a_deduplicated_add_is_made_safe_not_red(client: FlaskClient) -> None:
    client.post(f"{L}/api/apply", json={"operation": "add_balance", "times": 3, "dedup": True})
    html = _html(client, "/_partials/operations")
    assert "made safe by the dedup record" in html and "badge record" not in html


def test_a_head_of_the_pixel_counts_nothing(client: FlaskClient) -> None:
    client.get(f"{L}/pixel.gif?post=42")
    response = client.head(f"{L}/pixel.gif?post=42")
    assert response.status_code == 200 and response.mimetype == "image/gif"
    assert response.headers["Cache-Control"] == "no-store"
    assert _state(client)["views"] == {"42": 1}


@pytest.mark.parametrize("post", ["042", "0042", "0", "-1", "4 2", ""])
def test_a_post_id_is_a_positive_integer_without_leading_zeros(
    client: FlaskClient, post: str
) -> None:
    client.get(f"{L}/pixel.gif?post=42")
    response = client.get(f"{L}/pixel.gif?post={post}")
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    assert _state(client)["views"] == {"42": 1}


def test_a_repeated_post_is_refused(client: FlaskClient) -> None:
    response = client.get(f"{L}/pixel.gif?post=1&post=2")
    assert response.status_code == 422 and response.mimetype == "application/problem+json"


def test_the_poll_brings_another_tab_s_operations(client: FlaskClient) -> None:
    client.get(f"{L}/pixel.gif?post=42")
    version = re.search(r"since=(\d+)", _html(client)).group(1)  # type: ignore[union-attr]
    client.post(f"{L}/api/apply", json={"operation": "add_balance", "times": 3})
    html = _html(client, f"/_partials/pixel?since={version}")
    assert 'id="natural-operations"' in html
    assert re.search(r'<tr data-operation="add_balance"[^>]* class="latest">', html)


def test_the_timeline_says_counted_without_a_bad_plural(client: FlaskClient) -> None:
    client.get(f"{L}/pixel.gif?post=42")
    html = _html(client, "/_partials/timeline")
    assert "counted: the counter is at 1" in html and "1 views" not in html


def test_the_tracking_pixel_lesson_does_not_open_green(client: FlaskClient) -> None:
    _open(client, lesson="tracking-pixel")
    client.get(f"{L}/pixel.gif?post=42")  # the page's own load: no step of the attendee's
    html = _html(client, "/_partials/lesson")
    assert "Not run yet" in html and 'class="numbers' not in html
    assert 'class="met"' not in html
    client.get(f"{L}/pixel.gif?post=42")  # Reload the article: counted again
    html = _html(client, "/_partials/lesson")
    assert re.search(r'n-expected">2<.*n-actual">2<', html, re.S) and "kept as evidence" in html


def test_one_attempt_is_no_evidence(client: FlaskClient) -> None:
    _open(client, scenario="set-vs-add")
    client.post(f"{L}/api/apply", json={"operation": "add_balance", "times": 1})
    html = _html(client, "/_partials/lesson")
    assert "nothing was retried" in html and "kept as evidence" not in html
