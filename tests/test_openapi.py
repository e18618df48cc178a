"""The OpenAPI document against the real routes, and a fuzz test of the API against it:
no 5xx, and every answer fits the status codes and schemas the document promises."""

from __future__ import annotations

import json
import re
from typing import Any

import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.core import NOT_SET
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from demo import create_app
from demo.web.i18n import LANGUAGES
from demo.web.openapi import document

DOC = document(tuple(LANGUAGES))
load_all_checks()
ALL_CHECKS = list(CHECKS.get_all())


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


# -- schemathesis: every check it has, against the app (WSGI), bounded ----------------

CONTRACT_APP = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
CONTRACT = schemathesis.openapi.from_wsgi("/openapi.json", CONTRACT_APP)
PAGES = {"/lab/{lab_id}", "/lab/{lab_id}/panels", "/lab/{lab_id}/sequence.svg"}
"""HTML pages ignore query values they do not use (a link with a stray parameter opens),
and so does the POST that applies a link's offer (``run=null`` just runs nothing)."""
PAGES |= {"/lab/{lab_id}/retries", "/lab/{lab_id}/retries/panels"}
PAGES |= {"/lab/{lab_id}/natural", "/lab/{lab_id}/queue"}
FORMS = {"/lab/{lab_id}/retries/run", "/lab/{lab_id}/retries/storm"}
SENT_WITHOUT = {"/lab/{lab_id}/queue/work"}
"""Form posts where the fuzzer's own form encoding can drop a field it counts as sent (a
list value beside empty-named fields): the body that arrives lacks the field, so the
view rightly takes its default, and the request was never the one the check judges."""
"""The retry page's forms: every field is text, read into the JSON API's request, whose
rules (documented there) decide: a form that fits its outline may still be a 422, and an
unticked box is any value but ``on``."""


def _integral_floats(value: Any) -> bool:
    """``24.0`` somewhere in a body: the lab's number rule refuses it, JSON Schema cannot."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_integral_floats(v) for v in value.values())
    if isinstance(value, list):
        return any(_integral_floats(v) for v in value)
    return False


def _fresh_app() -> Flask:
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    app.extensions["labs"].get("contract")  # noqa: B018 - a lab for the stateful checks
    return app


@CONTRACT.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_schemathesis_finds_nothing(case: schemathesis.Case) -> None:
    """Every schemathesis check, on a fresh app per example (a settings change such as
    ``gateway_decline`` or ``step_mode`` must not leak into the next example), with the
    documented exceptions the README lists, each asserted here instead."""
    excluded: list[Any] = []
    replay = case.operation.path == "/replay"  # a history's numbers may be floats
    json_body = case.media_type == "application/json" and case.body is not NOT_SET
    integral = json_body and not replay and _integral_floats(case.body)
    if case.operation.path.endswith("/simulate") and isinstance(case.body, dict):
        # A probability is a number, not an integer: 0.0 is a loss rate like 0.25.
        kept = {k: v for k, v in case.body.items() if k not in ("loss", "ack_loss")}
        integral = json_body and _integral_floats(kept)
    if integral or replay:
        excluded.append(positive_data_acceptance)
    if case.operation.path in PAGES and case.method in ("GET", "POST"):
        excluded.append(negative_data_rejection)
    if case.operation.path in FORMS:
        excluded += [negative_data_rejection, positive_data_acceptance]
    if case.operation.path in SENT_WITHOUT:
        excluded.append(negative_data_rejection)
    # The WSGI transport does not decode a compressed body: ask for none (a transfer choice).
    response = case.call_and_validate(
        app=_fresh_app(),
        checks=ALL_CHECKS,
        excluded_checks=excluded,
        headers={"Accept-Encoding": "identity"},
    )
    if integral and case.meta is not None and case.meta.generation.mode.is_positive:
        assert response.status_code == 422, response.text  # 24.0 refused, with the rule
    if replay and case.meta is not None and case.meta.generation.mode.is_positive:
        assert response.status_code in (303, 400, 422), response.text


def test_every_405_lists_the_allowed_methods(app: Flask, client: FlaskClient) -> None:
    # RFC 9110 §15.5.6: a 405 carries Allow, on every path.
    methods: dict[str, set[str]] = {}  # one path may have a rule per method
    for rule in app.url_map.iter_rules():
        if rule.endpoint != "static":
            methods.setdefault(rule.rule, set()).update(rule.methods or ())
    for rule_path, valid in methods.items():
        wrong = next(m for m in ("PUT", "DELETE", "PATCH", "POST") if m not in valid)
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", "double-click", rule_path)
        response = client.open(path, method=wrong)
        assert response.status_code == 405, path
        assert response.mimetype == "application/problem+json"
        allowed = {m.strip() for m in response.headers["Allow"].split(",")}
        assert allowed == valid, path
    assert len(methods) == len(DOC["paths"])
    page = client.put("/lab/x/api/state", headers={"Accept": "text/html"})
    assert page.status_code == 405 and page.mimetype == "text/html"
    assert page.headers["Allow"] == "GET, HEAD, OPTIONS"


def test_the_key_header_is_documented_with_its_true_bounds(client: FlaskClient) -> None:
    charges = DOC["paths"]["/lab/{lab_id}/api/charges"]["post"]
    (header,) = [p for p in charges["parameters"] if p["name"] == "Idempotency-Key"]
    schema = header["schema"]
    assert schema["maxLength"] == 512  # 255 characters, each escaped as two, and 2 quotes
    longest = '"' + '\\"' * 254 + '\\\\"'
    assert len(longest) == 512
    assert validator(schema).is_valid(longest)
    response = client.post(
        "/lab/k/api/charges",
        json={"order_id": "1", "amount": 1},
        headers={"Idempotency-Key": longest},
    )
    assert response.status_code == 201
    assert client.get("/lab/k/api/state").get_json()["charges"][0]["idempotency_key"] == (
        '"' * 254 + "\\"
    )
    for refused in ['"a, b"', "a,b", '" "', "x" * 256]:
        assert not validator(schema).is_valid(refused), refused
    for codes, headers in (("402", "Idempotent-Replayed"), ("409", "Retry-After")):
        name = charges["responses"][codes]["$ref"].rsplit("/", 1)[1]
        assert headers in DOC["components"]["responses"][name]["headers"]


def test_the_document_is_built_from_the_rules_that_check_requests() -> None:
    from demo.lessons import PATH
    from demo.payments.charges import ORDER_ID_PATTERN
    from demo.payments.scenarios import SCENARIOS
    from demo.payments.settings import RANGES

    schemas = DOC["components"]["schemas"]
    assert schemas["ChargeRequest"]["properties"]["order_id"]["pattern"] == ORDER_ID_PATTERN
    for name in RANGES:
        assert "24.0" in schemas["Settings"]["properties"][name]["description"]
    assert "24.0" in schemas["ClockRequest"]["properties"]["advance_s"]["description"]
    page = {p["name"]: p for p in DOC["paths"]["/lab/{lab_id}"]["get"]["parameters"]}
    assert page["lesson"]["schema"]["enum"] == [lesson.name for lesson in PATH]
    assert set(page["scenario"]["schema"]["enum"]) == {*SCENARIOS, "none"}
    assert page["present"]["schema"]["enum"] == ["0", "1"]
    language = DOC["paths"]["/lab/{lab_id}/language"]["post"]["requestBody"]["content"]
    form = language["application/x-www-form-urlencoded"]["schema"]
    assert form["required"] == ["language"] and form["properties"]["language"]["enum"] == list(
        LANGUAGES
    )
    assert "normalisation" in DOC["info"]["description"]
    replay = DOC["paths"]["/replay"]["post"]["requestBody"]["content"]
    assert replay["multipart/form-data"]["schema"]["required"] == ["history"]


def test_settings_refuse_an_integer_written_as_a_float(client: FlaskClient) -> None:
    response = client.patch("/lab/f/api/settings", json={"ttl_s": 24.0})
    assert response.status_code == 422
    assert "ttl_s" in response.get_json()["errors"]
    clock = client.post("/lab/f/api/clock", json={"advance_s": 24.0})
    assert clock.status_code == 422


def test_one_key_with_nfc_then_nfd_cafe_is_409(client: FlaskClient) -> None:
    import unicodedata

    for form, status in (("NFC", 201), ("NFD", 409)):
        order = unicodedata.normalize(form, "Café")
        response = client.post(
            "/lab/u/api/charges",
            json={"order_id": order, "amount": 5},
            headers={"Idempotency-Key": "cafe-1"},
        )
        assert response.status_code == status, form


def _accepted(parse: Any, body: Any) -> bool:
    from demo.engine.problems import Problem

    try:
        parse(body)
    except Problem:
        return False
    return True


setting_values = st.one_of(
    st.booleans(),
    st.integers(-2, 100_000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["wait", "reject", "seed", "stripe", "none", "outbox", "shared", "x", ""]),
    st.none(),
)


@settings(max_examples=300, deadline=None)
@given(
    body=st.dictionaries(
        st.sampled_from([*DOC["components"]["schemas"]["Settings"]["properties"], "other"]),
        setting_values,
        max_size=4,
    )
)
def test_the_settings_schema_is_the_settings_rule(body: dict[str, Any]) -> None:
    from demo.payments.settings import Settings

    documented = validator(DOC["components"]["schemas"]["Settings"]).is_valid(body)
    assume(not _integral_floats(body))  # 24.0: JSON Schema cannot refuse it (documented)
    assert documented == _accepted(Settings().patched, body), body


@settings(max_examples=300, deadline=None)
@given(body=charge_like)
def test_the_charge_schema_is_the_charge_rule(body: dict[str, Any]) -> None:
    from demo.payments.charges import parse_charge

    documented = validator(DOC["components"]["schemas"]["ChargeRequest"]).is_valid(body)
    assume(not _integral_floats(body))  # 100000.0: refused, which JSON Schema cannot say
    assert documented == _accepted(parse_charge, json.dumps(body).encode()), body
