"""The OpenAPI document against the real routes, and a fuzz test of the API against it:
no 5xx, and every answer fits the status codes and schemas the document promises."""

from __future__ import annotations

import json
import re
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from demo.openapi import document

DOC = document()


def test_served(client: FlaskClient) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    assert response.get_json()["openapi"] == "3.1.0"
    Draft202012Validator.check_schema(DOC["components"]["schemas"]["Settings"])


def test_every_route_is_documented_and_every_documented_route_exists(app: Flask) -> None:
    real = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            real.add((path, method.lower()))
    documented = {
        (path, method)
        for path, item in DOC["paths"].items()
        for method in item
        if method in {"get", "post", "patch", "put", "delete"}
    }
    assert real == documented


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator({**schema, "components": DOC["components"]})


def check(response: Any, path: str, method: str) -> None:
    """The answer is no 5xx, a documented status, and fits the documented schema."""
    assert response.status_code < 500, response.data
    operation = DOC["paths"][path][method]
    declared = operation["responses"].get(str(response.status_code))
    assert declared is not None, (path, method, response.status_code, response.data)
    declared = DOC["components"]["responses"]["Problem"] if "$ref" in declared else declared
    content = declared.get("content", {})
    media = response.mimetype
    assert media in content or not content, (media, list(content))
    if media in content and media.endswith("json"):
        validator(content[media]["schema"]).validate(json.loads(response.data))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=10,
)
charge_like = st.fixed_dictionaries(
    {},
    optional={
        "order_id": st.one_of(st.text(max_size=70), st.integers()),
        "amount": st.one_of(
            st.integers(min_value=-5, max_value=10**16),
            st.floats(allow_nan=False),
            st.booleans(),
            st.text(max_size=5),
        ),
        "currency": st.one_of(st.sampled_from(["VND", "USD", "vnd", "EURO"]), st.integers()),
        "extra": json_values,
    },
)
keys = st.one_of(
    st.none(),
    st.sampled_from(["k1", "k2", '"k1"', "", " ", "a,b", '"unclosed', "x" * 256]),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=255), max_size=40),
)
content_types = st.sampled_from(
    [
        "application/json",
        "application/json; charset=utf-8",
        "text/plain",
        None,
        "application/merge-patch+json",
    ]
)
FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(
    body=st.one_of(charge_like, json_values),
    key=keys,
    content_type=content_types,
    raw=st.booleans(),
)
def test_fuzz_charges(
    client: FlaskClient, body: Any, key: str | None, content_type: str | None, raw: bool
) -> None:
    data = json.dumps(body).encode()[: 16 * 1024] if not raw else json.dumps(body).encode()[:-1]
    headers = {} if key is None else {"Idempotency-Key": key.strip() or key}
    try:
        response = client.post(
            "/lab/fuzz/api/charges", data=data, content_type=content_type, headers=headers
        )
    except ValueError:
        return  # a header value the HTTP client itself refuses to send
    check(response, "/lab/{lab_id}/api/charges", "post")


@FUZZ
@given(
    body=st.one_of(
        st.fixed_dictionaries(
            {},
            optional={
                "lock": st.one_of(st.booleans(), st.integers(0, 1)),
                "gateway_latency_ms": st.one_of(st.integers(-10, 4000), st.floats(allow_nan=False)),
                "profile": st.sampled_from(["seed", "ietf", "stripe", "paypal", ""]),
                "instances": st.integers(-1, 5),
                "fault": st.sampled_from(["none", "lose_response", "boom"]),
                "email": st.sampled_from(["off", "inline", "outbox", None]),
            },
        ),
        json_values,
    )
)
def test_fuzz_settings(client: FlaskClient, body: Any) -> None:
    response = client.patch("/lab/fuzz/api/settings", json=body)
    check(response, "/lab/{lab_id}/api/settings", "patch")
    client.patch("/lab/fuzz/api/settings", json={"fault": "none"})  # keep later examples fault-free


@FUZZ
@given(body=st.one_of(st.fixed_dictionaries({"advance_s": json_values}), json_values))
def test_fuzz_clock(client: FlaskClient, body: Any) -> None:
    check(client.post("/lab/fuzz/api/clock", json=body), "/lab/{lab_id}/api/clock", "post")


@FUZZ
@given(lab_id=st.text(max_size=80))
def test_fuzz_lab_ids(client: FlaskClient, lab_id: str) -> None:
    from urllib.parse import quote

    assume(lab_id not in ("", ".", "..") and "/" not in lab_id)  # those are other paths
    check(client.get(f"/lab/{quote(lab_id, safe='')}/api/state"), "/lab/{lab_id}/api/state", "get")


def test_state_fits_its_schema_after_every_kind_of_request(client: FlaskClient) -> None:
    client.patch(
        "/lab/s/api/settings",
        json={"email": "outbox", "instances": 2, "store_scope": "per_instance"},
    )
    for key in ("a", "a", "b"):
        client.post(
            "/lab/s/api/charges",
            json={"order_id": "1", "amount": 5},
            headers={"Idempotency-Key": key},
        )
    client.post("/lab/s/api/charges", json={"order_id": "1", "amount": 5})
    check(client.get("/lab/s/api/state"), "/lab/{lab_id}/api/state", "get")
    check(client.post("/lab/s/api/reset"), "/lab/{lab_id}/api/reset", "post")


def test_wrong_methods_are_documented_405s(client: FlaskClient) -> None:
    check(client.get("/lab/x/api/charges"), "/lab/{lab_id}/api/charges", "post")
    check(client.delete("/lab/x/api/state"), "/lab/{lab_id}/api/state", "get")
