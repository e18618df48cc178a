"""The JSON API through Flask's test client, bad input above all: every error is a clear
4xx problem+json, never a 500, and nothing in the lab is lost."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from flask.testing import FlaskClient

API = "/lab/t1/api"
BODY = {"order_id": "42", "amount": 100000, "currency": "VND"}


def pay(client: FlaskClient, body: Any = BODY, key: str | None = "k1", **kwargs: Any) -> Any:
    headers = {"Idempotency-Key": key} if key is not None else {}
    headers.update(kwargs.pop("headers", {}))
    return client.post(f"{API}/charges", json=body, headers=headers, **kwargs)


def state(client: FlaskClient) -> dict[str, Any]:
    response = client.get(f"{API}/state")
    assert response.status_code == 200
    return response.get_json()


def assert_problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.data
    assert response.mimetype == "application/problem+json"
    problem = json.loads(response.data)
    assert problem["status"] == status
    assert problem["title"] and problem["detail"] and problem["type"]
    assert b"Traceback" not in response.data
    return problem


def test_charge_then_replay_then_conflict(client: FlaskClient) -> None:
    first = pay(client)
    assert first.status_code == 201
    charge = first.get_json()
    assert charge["id"] == "ch_0001" and charge["amount"] == 100000
    assert "Idempotent-Replayed" not in first.headers

    again = pay(client)
    assert again.status_code == 201
    assert again.data == first.data
    assert again.headers["Idempotent-Replayed"] == "true"

    other = pay(client, {**BODY, "amount": 100001})
    problem = assert_problem(other, 409)
    assert problem["type"] == "/problems/key-mismatch"

    s = state(client)
    assert len(s["charges"]) == 1
    assert s["charges"][0]["idempotency_key"] == "k1"
    assert [r["outcome"] for r in s["requests"]] == ["charged", "replayed", "conflict"]
    assert s["records"][0]["state"] == "completed"


def test_reordered_body_replays(client: FlaskClient) -> None:
    pay(client)
    raw = b'{ "currency":"VND",  "amount":100000, "order_id":"42" }'
    again = client.post(
        f"{API}/charges",
        data=raw,
        content_type="application/json",
        headers={"Idempotency-Key": "k1"},
    )
    assert again.headers.get("Idempotent-Replayed") == "true"


def test_quoted_key_is_the_same_key(client: FlaskClient) -> None:
    pay(client, key="abc")
    assert pay(client, key='"abc"').headers.get("Idempotent-Replayed") == "true"


def test_no_key_charges_every_time(client: FlaskClient) -> None:
    assert pay(client, key=None).status_code == 201
    assert pay(client, key=None).status_code == 201
    s = state(client)
    assert len(s["charges"]) == 2 and s["records"] == []
    assert s["summary"] == {"charged": 2, "intended": 1, "emails": 0}
    assert all(c["double_charge"] for c in s["charges"])


def test_state_shape(client: FlaskClient) -> None:
    pay(client)
    s = state(client)
    assert s["settings"]["lock"] is True
    assert s["settings"]["gateway_latency_ms"] == 0 and s["settings"]["ttl_s"] == 86400
    request = s["requests"][0]
    assert {step["step"] for step in request["steps"]} >= {
        "lookup",
        "reserve",
        "gateway charge",
        "record save",
    }
    assert request["idempotency_key"] == "k1" and request["status"] == 201


def test_settings_patch_and_reset(client: FlaskClient) -> None:
    response = client.patch(f"{API}/settings", json={"lock": False, "gateway_latency_ms": 300})
    assert response.status_code == 200
    assert response.get_json()["lock"] is False
    pay(client)
    response = client.post(f"{API}/reset")
    assert response.status_code == 200
    s = state(client)
    assert s["charges"] == [] and s["records"] == [] and s["requests"] == []
    assert s["settings"]["lock"] is False and s["settings"]["gateway_latency_ms"] == 300


def test_labs_are_isolated(client: FlaskClient) -> None:
    pay(client)
    other = client.post("/lab/t2/api/charges", json=BODY, headers={"Idempotency-Key": "k1"})
    assert other.status_code == 201 and "Idempotent-Replayed" not in other.headers
    assert len(client.get("/lab/t2/api/state").get_json()["charges"]) == 1


def test_root_redirects_to_a_fresh_lab(client: FlaskClient) -> None:
    first, second = client.get("/"), client.get("/")
    assert first.status_code == 303
    assert first.location.startswith("/lab/") and first.location != second.location


# -- bad input ---------------------------------------------------------------------


@pytest.fixture
def paid(client: FlaskClient) -> dict[str, Any]:
    """A lab with one charge in it, to check that bad input loses or changes nothing."""
    pay(client)
    return state(client)


def assert_unchanged(client: FlaskClient, before: dict[str, Any]) -> None:
    after = state(client)
    for part in ("charges", "records", "settings"):
        assert (
            after[part] == before[part]
            or part == "records"
            and [{k: v for k, v in r.items() if k != "expires_in_s"} for r in after[part]]
            == [{k: v for k, v in r.items() if k != "expires_in_s"} for r in before[part]]
        )


@pytest.mark.parametrize(
    ("data", "content_type", "status"),
    [
        (b"{not json", "application/json", 400),
        (b'{"order_id": "42", "amount": 1, "amount": 2}', "application/json", 400),
        (b'{"order_id": "42", "amount": 100000.0}', "application/json", 422),
        (b'{"order_id": "42", "amount": true}', "application/json", 422),
        (b'{"order_id": "42", "amount": 1, "extra": 1}', "application/json", 422),
        (b"[]", "application/json", 422),
        (b"order_id=42&amount=1", "application/x-www-form-urlencoded", 415),
        (b'{"order_id": "42", "amount": 1}', "text/plain", 415),
        (b'{"order_id": "42", "amount": 1}', None, 415),
    ],
)
def test_bad_bodies(
    client: FlaskClient, paid: dict[str, Any], data: bytes, content_type: str | None, status: int
) -> None:
    response = client.post(
        f"{API}/charges", data=data, content_type=content_type, headers={"Idempotency-Key": "k2"}
    )
    assert_problem(response, status)
    assert_unchanged(client, paid)


def test_body_over_the_limit_is_413(client: FlaskClient, paid: dict[str, Any]) -> None:
    huge = json.dumps({"order_id": "42", "amount": 1, "pad": "x" * 20_000})
    response = client.post(
        f"{API}/charges",
        data=huge,
        content_type="application/json",
        headers={"Idempotency-Key": "k2"},
    )
    assert_problem(response, 413)
    assert_unchanged(client, paid)


@pytest.mark.parametrize("key", ["", "   ", "x" * 256, "caf\xe9", "a\x01b"])
def test_bad_keys_are_400(client: FlaskClient, paid: dict[str, Any], key: str) -> None:
    response = client.post(
        f"{API}/charges",
        data=json.dumps(BODY),
        content_type="application/json",
        headers=[("Idempotency-Key", key)],
    )
    problem = assert_problem(response, 400)
    assert problem["type"] == "/problems/bad-idempotency-key"
    assert_unchanged(client, paid)


def test_repeated_key_header_is_400(client: FlaskClient, paid: dict[str, Any]) -> None:
    response = client.post(
        f"{API}/charges",
        data=json.dumps(BODY),
        content_type="application/json",
        headers=[("Idempotency-Key", "a"), ("Idempotency-Key", "b")],
    )
    assert_problem(response, 400)
    assert_unchanged(client, paid)


@pytest.mark.parametrize(
    "url", ["/lab/a.b/api/state", "/lab/" + "x" * 65 + "/api/state", "/lab/%C3%A9/api/state"]
)
def test_bad_lab_ids_are_404(client: FlaskClient, url: str) -> None:
    assert_problem(client.get(url), 404)


def test_bad_lab_id_on_charge_is_404_and_charges_nothing(client: FlaskClient) -> None:
    assert_problem(client.post("/lab/bad.id/api/charges", json=BODY), 404)


@pytest.mark.parametrize(
    "body",
    [
        {"lock": "off"},
        {"gateway_latency_ms": 5000},
        {"gateway_latency_ms": "fast"},
        {"nope": 1},
        [1],
        "null",
    ],
)
def test_bad_settings_are_422(client: FlaskClient, paid: dict[str, Any], body: Any) -> None:
    response = client.patch(
        f"{API}/settings",
        data=json.dumps(body) if body != "null" else b"null",
        content_type="application/json",
    )
    assert_problem(response, 422)
    assert_unchanged(client, paid)


def test_settings_with_bad_json_or_type(client: FlaskClient, paid: dict[str, Any]) -> None:
    assert_problem(client.patch(f"{API}/settings", data=b"{", content_type="application/json"), 400)
    assert_problem(
        client.patch(f"{API}/settings", data=b"[" * 50_00, content_type="application/json"), 400
    )
    assert_problem(client.patch(f"{API}/settings", data=b"lock=0", content_type="text/plain"), 415)
    assert_unchanged(client, paid)


def test_unknown_route_and_wrong_method(client: FlaskClient) -> None:
    assert_problem(client.get("/nope", headers={"Accept": "application/json"}), 404)
    assert_problem(client.get(f"{API}/charges"), 405)
    assert_problem(client.delete(f"{API}/state"), 405)


def test_browser_navigation_to_a_bad_lab_gets_an_html_page(client: FlaskClient) -> None:
    response = client.get("/lab/a.b", headers={"Accept": "text/html"})
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert b"A lab id is 1-64 characters" in response.data


def test_security_headers(client: FlaskClient) -> None:
    response = client.get("/lab/t1")
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"


def test_scripts_and_style_sheets_carry_no_policy_of_their_own(client: FlaskClient) -> None:
    """They run under the page's policy; a document (SVG included) keeps its own."""
    scripts = ("/static/app.js", "/static/js/page.js", "/static/htmx-2.0.11.min.js")
    for url in (*scripts, "/static/app.css"):
        with client.get(url) as response:
            assert response.status_code == 200, url
            assert "Content-Security-Policy" not in response.headers, url
            assert response.headers["X-Content-Type-Options"] == "nosniff", url
            assert response.headers["Referrer-Policy"] == "no-referrer", url
    for url in ("/static/favicon.svg", "/lab/t1/sequence.svg", "/lab/t1/api/charges"):
        with client.get(url) as response:
            assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"], url


# -- found by trying to break it ----------------------------------------------------


@pytest.mark.parametrize(
    "form",
    [
        {"order_id": "\u00b2", "amount": "5"},
        {"order_id": "42", "amount": "\u00b2"},
        {"order_id": "42", "amount": "9" * 5000},
        {"order_id": "9" * 5000, "amount": "1"},
        {},
    ],
)
def test_new_order_never_fails(client: FlaskClient, form: dict[str, str]) -> None:
    response = client.post("/lab/t1/new-order", data=form)
    assert response.status_code == 200
    assert 'id="order-form"' in response.get_data(as_text=True)


def test_settings_refuse_repeated_members(client: FlaskClient) -> None:
    response = client.patch(
        f"{API}/settings", data=b'{"lock": false, "lock": true}', content_type="application/json"
    )
    problem = assert_problem(response, 400)
    assert "repeated" in problem["detail"]
    assert state(client)["settings"]["lock"] is True


@pytest.mark.parametrize("key", ['"abc', '"a\\nb"', '"abc";x=1', 'abc"'])
def test_malformed_quoted_keys_are_400(client: FlaskClient, key: str) -> None:
    response = pay(client, key=key)
    if key == 'abc"':  # a bare key may hold a quote inside or at the end
        assert response.status_code == 201
    else:
        assert_problem(response, 400)


@pytest.mark.parametrize("body", [b'{"amount": ' + b"9" * 5000 + b"}", b"[" * 8000 + b"]" * 8000])
def test_json_errors_do_not_leak_python_internals(client: FlaskClient, body: bytes) -> None:
    response = client.post(
        f"{API}/charges",
        data=body,
        content_type="application/json",
        headers={"Idempotency-Key": "k"},
    )
    problem = assert_problem(response, 400)
    assert "sys." not in problem["detail"] and "recursion" not in problem["detail"]


def test_poll_with_stale_settings_gets_the_settings_form(client: FlaskClient) -> None:
    page = client.get("/lab/t1").get_data(as_text=True)
    import re

    version = re.search(r'id="settings-version" name="settings_version" value="(\d+)"', page)
    assert version is not None
    since = re.search(r'data-version="(\d+)"', page).group(1)  # type: ignore[union-attr]
    quiet = client.get(f"/lab/t1/panels?since={since}&settings_version={version.group(1)}")
    assert quiet.status_code == 204
    client.patch(f"{API}/settings", json={"lock": False})  # "another tab"
    fresh = client.get(f"/lab/t1/panels?since={since}&settings_version={version.group(1)}")
    html = fresh.get_data(as_text=True)
    assert '<form id="settings"' in html and 'hx-swap-oob="true"' in html
    assert 'id="lock" name="lock" role="switch" checked' not in html


def test_the_short_link_keeps_its_choices_for_the_new_lab(client: FlaskClient) -> None:
    """``/?lesson=slow-motion`` is what a newcomer types: the fresh lab it leads to offers
    that lesson (a GET still changes nothing), and unknown arguments are not carried."""
    answer = client.get("/?lesson=slow-motion&present=1&junk=1")
    assert answer.status_code == 303
    location = answer.headers["Location"]
    assert re.search(r"/lab/[A-Za-z0-9_-]{16,}\?", location)
    assert "lesson=slow-motion" in location and "present=1" in location
    assert "junk" not in location
    page = client.get(location).get_data(as_text=True)
    assert 'id="offer"' in page
