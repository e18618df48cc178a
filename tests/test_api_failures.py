"""The failure lab's API: new settings, the clock, scenario links, dropped connections."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient

API = "/lab/f1/api"
BODY = {"order_id": "42", "amount": 100000}
NEW_SETTINGS = {
    "in_flight": "wait",
    "profile": "seed",
    "require_key": False,
    "fault": "none",
    "recovery": "none",
    "instances": 1,
    "store_scope": "shared",
    "gateway_decline": False,
    "email": "off",
}


def test_state_lists_every_setting(client: FlaskClient) -> None:
    settings = client.get(f"{API}/state").get_json()["settings"]
    for name, default in NEW_SETTINGS.items():
        assert settings[name] == default, name


@pytest.mark.parametrize(
    "changes",
    [
        {"fault": "lose_response"},
        {"recovery": "downstream_key"},
        {"in_flight": "reject"},
        {"profile": "stripe"},
        {"require_key": True},
        {"instances": 3, "store_scope": "per_instance"},
        {"gateway_decline": True},
        {"email": "outbox"},
    ],
)
def test_good_settings(client: FlaskClient, changes: dict[str, Any]) -> None:
    response = client.patch(f"{API}/settings", json=changes)
    assert response.status_code == 200
    assert {k: response.get_json()[k] for k in changes} == changes


@pytest.mark.parametrize(
    "changes",
    [
        {"fault": "explode"},
        {"fault": None},
        {"recovery": True},
        {"in_flight": "Wait"},
        {"profile": "paypal"},
        {"require_key": "yes"},
        {"instances": 0},
        {"instances": 4},
        {"instances": "2"},
        {"store_scope": "global"},
        {"gateway_decline": 1},
        {"email": "twice"},
    ],
)
def test_bad_settings_are_422_and_change_nothing(
    client: FlaskClient, changes: dict[str, Any]
) -> None:
    before = client.get(f"{API}/state").get_json()["settings"]
    response = client.patch(f"{API}/settings", json=changes)
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    assert list(json.loads(response.data)["errors"]) == list(changes)
    assert client.get(f"{API}/state").get_json()["settings"] == before


def test_clock(client: FlaskClient) -> None:
    response = client.post(f"{API}/clock", json={"advance_s": 3600})
    assert response.status_code == 200 and response.get_json()["offset_s"] == 3600
    assert client.get(f"{API}/state").get_json()["clock"]["offset_s"] == 3600


@pytest.mark.parametrize(
    "body",
    [
        {"advance_s": 0},
        {"advance_s": "1"},
        {"advance_s": 1.5},
        {"advance": 1},
        {},
        [3600],
        3600,
        {"advance_s": 1, "x": 2},
    ],
)
def test_bad_clock_is_422(client: FlaskClient, body: Any) -> None:
    response = client.post(f"{API}/clock", json=body)
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    assert client.get(f"{API}/state").get_json()["clock"]["offset_s"] == 0


def test_a_lost_response_without_a_socket_is_a_502_no_response(client: FlaskClient) -> None:
    client.patch(f"{API}/settings", json={"fault": "lose_response"})
    response = client.post(f"{API}/charges", json=BODY, headers={"Idempotency-Key": "k"})
    assert response.status_code == 502
    assert json.loads(response.data)["type"] == "/problems/no-response"
    retry = client.post(f"{API}/charges", json=BODY, headers={"Idempotency-Key": "k"})
    assert retry.headers["Idempotent-Replayed"] == "true"
    state = client.get(f"{API}/state").get_json()
    assert len(state["charges"]) == 1
    assert state["requests"][0]["delivered"] is False


def test_scenario_link_applies_and_redirects(client: FlaskClient) -> None:
    response = client.post("/lab/f1?scenario=multi-instance")
    assert response.status_code == 303 and response.location == "/lab/f1"
    settings = client.get(f"{API}/state").get_json()["settings"]
    assert settings["instances"] == 2 and settings["store_scope"] == "per_instance"
    page = client.get("/lab/f1").get_data(as_text=True)
    assert "Scenario: Several instances" in page and "fix OFF" in page
    fixed = client.post("/lab/f1?scenario=multi-instance&fixed=1&run=1")
    assert fixed.location == "/lab/f1?run=1"
    assert client.get(f"{API}/state").get_json()["settings"]["store_scope"] == "shared"
    page = client.get("/lab/f1?run=1").get_data(as_text=True)
    assert 'data-autorun="true"' in page and 'data-script="Pay|Retry"' in page
    client.post("/lab/f1?scenario=none")
    assert "Scenario:" not in client.get("/lab/f1").get_data(as_text=True)


def test_unknown_scenario_is_404(client: FlaskClient) -> None:
    response = client.get("/lab/f1?scenario=nope", headers={"Accept": "application/json"})
    assert response.status_code == 404 and response.mimetype == "application/problem+json"


def test_every_scenario_page_renders(client: FlaskClient) -> None:
    from demo.payments.scenarios import SCENARIOS

    for name, scenario in SCENARIOS.items():
        client.post(f"/lab/f1?scenario={name}")
        html = client.get("/lab/f1").get_data(as_text=True)
        assert scenario.title.replace("&", "&amp;") in html, name
        onward = "Try the second case" if scenario.defence else "Apply the fix and run again"
        assert onward in html, name
