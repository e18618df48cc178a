"""Memory and state under bad input: crafted histories, lone surrogates, invalid keys in
an exported history, records abandoned in progress, and a TTL shorter than the
in-progress deadline. Each case from the field is a test with the value it must get."""

from __future__ import annotations

import ast
import copy
import gc
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from demo import history
from demo.engine.problems import Problem
from demo.engine.text import shown
from demo.payments.charges import parse_json
from demo.payments.idempotency import IdempotencyStore, State, StoreFull
from demo.payments.settings import IN_PROGRESS_S, Settings
from demo.payments.steps import STEPS
from demo.workspace import Workspace

JSON = {"Accept": "application/json"}
BODY = {"order_id": "42", "amount": 100000}
DEMO = Path(__file__).resolve().parent.parent / "demo"


def new_lab(lab_id: str = "t", **settings: Any) -> Workspace:
    return Workspace(lab_id, settings=Settings(gateway_latency_ms=0, **settings))


def pay(lab: Workspace, key: str | None, body: Any = BODY, action: str = "Pay") -> Any:
    raw = json.dumps(body).encode() if not isinstance(body, bytes) else body
    return lab.payments.create_charge([key] if key is not None else [], raw, action=action)


def exported(lab: Workspace) -> bytes:
    """What ``GET /lab/<id>/history.json`` sends."""
    return json.dumps(history.export(lab), ensure_ascii=False, indent=1).encode()


def reimported(body: bytes) -> Workspace:
    """What ``POST /replay`` makes of ``body``."""
    lab = Workspace("replay")
    history.read(parse_json(body)).load_into(lab)
    return lab


def replay(client: FlaskClient, data: Any) -> Any:
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    return client.post("/replay", data=body, content_type="application/json", headers=JSON)


def a_history(client: FlaskClient, lab_id: str) -> dict[str, Any]:
    """A small real history: a charge, its replay, a conflict, a crash and its retry."""
    key = {"Idempotency-Key": "k-1"}
    client.post(f"/lab/{lab_id}/api/charges", json=BODY, headers=key)
    client.post(f"/lab/{lab_id}/api/charges", json=BODY, headers=key)
    client.post(f"/lab/{lab_id}/api/charges", json={**BODY, "amount": 5}, headers=key)
    client.patch(f"/lab/{lab_id}/api/settings", json={"fault": "crash_after_charge"})
    client.post(f"/lab/{lab_id}/api/charges", json=BODY, headers={"Idempotency-Key": "k-2"})
    data: dict[str, Any] = client.get(f"/lab/{lab_id}/history.json").get_json()
    return data


# -- one table for the step details ---------------------------------------------------


OTHER_LABS = ("retries", "queue", "natural")
"""The packages of the labs beside the payment lab: not in an exported history."""


def _trace_calls() -> list[tuple[str, str, set[str]]]:
    """Every ``trace("step", **detail)`` and ``Step("step", at, {...})`` in the core's
    source: (file, step, detail names)."""
    found = []
    for path in sorted(DEMO.rglob("*.py")):
        if path.relative_to(DEMO).parts[0] in OTHER_LABS:
            continue  # their steps are in their own tables, checked by their own tests
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else None
            first = node.args[0]
            if name == "trace" and isinstance(first, ast.Constant):
                assert all(k.arg is not None for k in node.keywords), "no **detail"
                found.append((path.name, first.value, {str(k.arg) for k in node.keywords}))
            elif (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "mark"
                and isinstance(first, ast.Constant)
            ):  # entry.mark("step", **detail): a step written outside a handler's trace
                found.append((path.name, first.value, {str(k.arg) for k in node.keywords}))
            elif name == "Step" and isinstance(first, ast.Constant) and len(node.args) == 3:
                detail = node.args[2]
                assert isinstance(detail, ast.Dict)
                keys = {k.value for k in detail.keys if isinstance(k, ast.Constant)}
                found.append((path.name, first.value, {str(k) for k in keys}))
    return found


def test_every_step_the_lab_writes_is_in_the_table_history_checks() -> None:
    calls = _trace_calls()
    assert len(calls) >= 15  # the reader found the calls, not nothing
    for where, step, names in calls:
        assert step in STEPS, (where, step)
        assert names <= set(STEPS[step].detail), (where, step, names)
    assert {step for _, step, _ in calls} | {"step timeout"} == set(STEPS)


# -- crafted histories: 422 at import, never a 500 later ---------------------------------


def test_a_history_of_86000_tiny_step_details_is_refused_and_makes_no_lab(
    client: FlaskClient, app: Flask
) -> None:
    data = a_history(client, "h-tiny")
    steps = data["requests"][0]["steps"]
    per_step = 86_000 // len(steps) + 1
    for n, step in enumerate(steps):
        step.update({f"k{n}.{i}": 0 for i in range(per_step)})
    body = json.dumps(data, separators=(",", ":")).encode()
    assert len(body) <= history.MAX_BYTES
    labs = len(app.extensions["labs"])
    answer = replay(client, body)
    assert answer.status_code == 422
    assert answer.get_json()["type"] == "/problems/invalid-history"
    assert "requests[0].steps[0]" in answer.get_json()["errors"]
    assert len(app.extensions["labs"]) == labs


def _set_step(name: str, **detail: Any) -> Any:
    def breakage(data: dict[str, Any]) -> None:
        data["requests"][0]["steps"] = [{"step": name, "at_ms": 1.0, **detail}]

    return breakage


@pytest.mark.parametrize(
    ("breakage", "where"),
    [
        (_set_step("lock acquire", waited_ms="x"), "requests[0].steps[0].waited_ms"),
        (_set_step("gateway charge", ms=[1]), "requests[0].steps[0].ms"),
        (_set_step("gateway charge", ms=-1), "requests[0].steps[0].ms"),
        (_set_step("gateway charge", ms=True), "requests[0].steps[0].ms"),
        (_set_step("lookup", hit="yes"), "requests[0].steps[0].hit"),
        (_set_step("lookup", state="gone"), "requests[0].steps[0].state"),
        (_set_step("respond", status="201"), "requests[0].steps[0].status"),
        (_set_step("respond", status=201.0), "requests[0].steps[0].status"),
        (_set_step("crash", after=["lookup"]), "requests[0].steps[0].after"),
        (_set_step("gateway replay", charge_id={"id": 1}), "requests[0].steps[0].charge_id"),
        (_set_step("reserve", note="hi"), "requests[0].steps[0]"),
        (lambda d: d["requests"][0].update(outcome=["charged"]), "requests[0].outcome"),
        (lambda d: d["requests"][0].update(outcome={"a": 1}), "requests[0].outcome"),
        (lambda d: d["requests"][0].update(status=True), "requests[0].status"),
        (lambda d: d["requests"][0].update(at="noon"), "requests[0].at"),
        (lambda d: d["requests"][0].update(lock="no"), "requests[0].lock"),
        (lambda d: d["requests"][0].update(delivered=0), "requests[0].delivered"),
        (lambda d: d["requests"][0].update(action="x" * 41), "requests[0].action"),
        (lambda d: d["requests"][0].update(action="tab\there"), "requests[0].action"),
        (lambda d: d["requests"][0].update(raw_key="a\x7fb"), "requests[0].raw_key"),
        (lambda d: d["requests"][0].update(body=[1, 2]), "requests[0].body"),
        (lambda d: d["requests"][0].update(body={"order_id": [[[]]]}), "requests[0].body"),
        (lambda d: d.update(scenario=["race"]), "scenario"),
        (lambda d: d.update(fixed="yes"), "fixed"),
        (
            lambda d: d["requests"][0].update(
                steps=[{"step": "lookup", "at_ms": n, "hit": False} for n in range(3)]
            ),
            "requests[0].steps[2]",
        ),
        (
            lambda d: d["requests"][0].update(steps=[{"step": "reserve", "at_ms": 1}] * 2),
            "requests[0].steps[1]",
        ),
    ],
)
def test_a_field_of_the_wrong_type_is_422_at_import(
    client: FlaskClient, app: Flask, breakage: Any, where: str
) -> None:
    data = a_history(client, "h-type")
    assert replay(client, data).status_code == 303  # the history as exported opens
    labs = len(app.extensions["labs"])
    broken = copy.deepcopy(data)
    breakage(broken)
    answer = replay(client, broken)
    assert answer.status_code == 422, answer.get_json()
    assert answer.mimetype == "application/problem+json"
    assert answer.get_json()["type"] == "/problems/invalid-history"
    assert where in answer.get_json()["errors"]
    assert len(app.extensions["labs"]) == labs  # nothing made of it


def test_a_history_of_every_kind_of_step_opens_and_its_pages_answer(
    client: FlaskClient,
) -> None:
    data = a_history(client, "h-steps")
    data["requests"][0]["steps"] = [
        {"step": name, "at_ms": float(n), **{m: _valid(m) for m in kind.detail}}
        for n, (name, kind) in enumerate(STEPS.items())
    ]
    answer = replay(client, data)
    assert answer.status_code == 303
    location = answer.headers["Location"]
    for path in ("", "/panels", "/api/state", "/sequence.svg", "/history.json"):
        assert client.get(location + path).status_code == 200, path


def _valid(member: str) -> Any:
    return {
        "ok": True,
        "hit": True,
        "state": "completed",
        "again": True,
        "match": False,
        "waited_ms": 12.5,
        "ms": 300.1,
        "charge_id": "ch_0001",
        "status": 201,
        "after": "gateway charge",
        "email": "em_0001",
        "via": "outbox",
        "key": "order-42",
        "paused_ms": 5795.2,
    }[member]


def test_a_one_mebibyte_history_stays_under_two_mebibytes_in_memory(
    client: FlaskClient,
) -> None:
    """The densest history the rules let through, measured with tracemalloc: what the
    replay lab keeps after the import (not the parser's transient peak)."""
    data = a_history(client, "h-mem")
    template = data["requests"][-1]
    REQUESTS = 170  # noqa: N806 - as many of the densest requests as fit in 1 MiB
    steps = [
        {"step": name, "at_ms": n + 0.123456789, **{m: _valid(m) for m in kind.detail}}
        for n, (name, kind) in enumerate(STEPS.items())
        for _ in range(kind.at_most)
    ]
    for n, step in enumerate(steps):  # numbers unlike each other: nothing to share
        for member in ("waited_ms", "ms"):
            if member in step:
                step[member] = n + 0.987654321
    text = "é" * 299
    data["requests"] = [
        {
            **template,
            "id": n,
            "started_ms": n * 1000.001,
            "action": "a" * 40,
            "idempotency_key": "k" * 255,
            "raw_key": text,
            "problem": text,
            "problem_detail": text,
            "steps": steps,
        }
        for n in range(1, REQUESTS + 1)
    ]
    data["charges"] = [
        {"id": f"ch_{n:04d}" + "c" * 60, "idempotency_key": "k" * 100, "order_id": "o" * 64,
         "amount": 10**15 - n, "currency": "VND", "created": 1.8e9 + n / 7}
        for n in range(500)
    ]  # fmt: skip
    data["emails"] = [
        {"id": f"em_{n:04d}", "idempotency_key": f"{n}" + "k" * 40, "order_id": "o" * 64,
         "charge_id": f"ch_{n:04d}"}
        for n in range(500)
    ]  # fmt: skip
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    assert 950 * 1024 < len(body) <= history.MAX_BYTES, len(body)
    gc.collect()
    tracemalloc.start()
    try:
        lab = Workspace("mem")
        before = tracemalloc.get_traced_memory()[0]
        history.read(parse_json(body)).load_into(lab)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(lab.payments.requests()) == REQUESTS
    print(f"1 MiB history: {len(body)} bytes, kept {kept} bytes")
    assert kept < 2 * 1024 * 1024, kept


# -- lone surrogates ------------------------------------------------------------------


SURROGATE_NAME = b'{"\\ud800": 1}'


def test_a_lone_surrogate_member_name_on_settings_is_400_and_changes_nothing(
    client: FlaskClient,
) -> None:
    before = client.get("/lab/s-set/api/state").get_json()["settings"]
    answer = client.patch(
        "/lab/s-set/api/settings",
        data=SURROGATE_NAME,
        content_type="application/json",
        headers=JSON,
    )
    assert answer.status_code == 400
    assert answer.get_json()["type"] == "/problems/malformed-json"
    assert client.get("/lab/s-set/api/state").get_json()["settings"] == before


@pytest.mark.parametrize(
    "body",
    [SURROGATE_NAME, b'{"order_id": "4\\udc00", "amount": 1}', b'[["\\ud800"]]'],
)
def test_a_lone_surrogate_in_a_charge_is_400_and_the_request_ends(
    client: FlaskClient, body: bytes
) -> None:
    answer = client.post(
        "/lab/s-pay/api/charges",
        data=body,
        content_type="application/json",
        headers={**JSON, "Idempotency-Key": "k-1"},
    )
    assert answer.status_code == 400
    assert answer.get_json()["type"] == "/problems/malformed-json"
    state = client.get("/lab/s-pay/api/state").get_json()
    last = state["requests"][-1]
    assert (last["outcome"], last["status"]) == ("invalid", 400)  # not IN FLIGHT
    assert state["records"] == [] and state["charges"] == []
    assert client.get("/lab/s-pay/panels").status_code == 200
    assert client.get("/lab/s-pay/history.json").status_code == 200
    # Nothing was stored: the same key with a good body goes through.
    again = client.post("/lab/s-pay/api/charges", json=BODY, headers={"Idempotency-Key": "k-1"})
    assert again.status_code == 201


def test_a_lone_surrogate_member_name_in_a_history_is_400_and_makes_no_lab(
    client: FlaskClient, app: Flask
) -> None:
    data = a_history(client, "s-hist")
    labs = len(app.extensions["labs"])
    for broken in (
        SURROGATE_NAME,
        json.dumps({**data, "settings": {"\ud800": 1}}).encode(),  # \ud800 in the file
        json.dumps({**data, "scenario": "\udfff"}).encode(),
    ):
        answer = replay(client, broken)
        assert answer.status_code == 400
        assert answer.get_json()["type"] == "/problems/malformed-json"
    assert len(app.extensions["labs"]) == labs


def test_a_bug_in_a_charge_request_still_ends_it(monkeypatch: pytest.MonkeyPatch) -> None:
    lab = new_lab()

    def broken(body: bytes) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr("demo.payments.endpoint.parse_charge", broken)
    with pytest.raises(RuntimeError):
        pay(lab, "k-1")
    (entry,) = lab.payments.requests()
    assert entry.finished is not None and entry.status == 500
    assert lab.state()["requests"][0]["outcome"] != "in_flight"


# -- a lab's own history re-imports and re-exports the same -------------------------


INVALID_KEYS = [
    "a\x7fb",  # DEL
    "a\tb",  # TAB
    "caf\u00c3\u00a9",  # "café" in UTF-8, read as Latin-1
    "\u00e2\u0082\u00ac",  # "€" in UTF-8, read as Latin-1: a C1 control in the middle
    "x" * 300,
    '"unterminated',
    "",
]


def test_invalid_keys_are_kept_as_shown_and_the_history_round_trips(
    client: FlaskClient,
) -> None:
    for key in INVALID_KEYS:
        answer = client.post(
            "/lab/r-keys/api/charges", json=BODY, headers={"Idempotency-Key": key, **JSON}
        )
        assert answer.status_code == 400, key
    first = client.get("/lab/r-keys/history.json")
    raw_keys = [r["raw_key"] for r in first.get_json()["requests"]]
    assert raw_keys[:4] == ["a\\x7fb", "a\\tb", "caf\u00c3\u00a9", "\u00e2\\x82\u00ac"]
    assert all(k.isprintable() for k in raw_keys)
    answer = client.post("/replay", data=first.data, content_type="application/json")
    assert answer.status_code == 303
    again = client.get(answer.headers["Location"] + "/history.json")
    assert again.data == first.data  # byte for byte
    page = client.get(answer.headers["Location"]).text
    assert "invalid key: a\\x7fb" in page


def test_an_awkward_clock_round_trips_exactly() -> None:
    """The old export recomputed ``duration_ms`` as a float difference, so an export of the
    import differed now and then; whole microseconds come back exactly."""
    lab = new_lab()
    for n in range(6):
        pay(lab, f"k-{n}")
    for n, entry in enumerate(lab.payments.requests()):
        entry.started = 987_654.321_987_654 + n * 0.1 + 1e-7 * n
        entry.finished = entry.started + 0.300_000_1 + n * 1.000_000_3e-3
    lab.payments.requests()[1].started -= 0.2  # logged second, started first (a concurrent pair)
    first = exported(lab)
    assert min(r["started_ms"] for r in json.loads(first)["requests"]) == 0
    second = exported(reimported(first))
    assert second == first
    assert exported(reimported(second)) == first


def test_a_scenario_lab_round_trips_with_its_scenario() -> None:
    lab = new_lab()
    lab.apply_scenario("crash-window", fixed=True)
    lab.payments.update_settings({"gateway_latency_ms": 0})
    pay(lab, "k-1")
    pay(lab, "k-1", action="Retry")
    first = exported(lab)
    assert json.loads(first)["scenario"] == "crash-window"
    replayed = reimported(first)
    assert replayed.payments.scenario is lab.payments.scenario and replayed.payments.fixed
    assert exported(replayed) == first


ACTIONS = st.text(st.characters(max_codepoint=0x2FF), max_size=50)
KEY = st.one_of(
    st.none(),
    st.sampled_from(["k-1", "k-2", '"k-1"', "k-3"]),
    st.text(st.characters(max_codepoint=0xFF), max_size=70),  # anything a header carries
)
STEP = st.tuples(
    KEY,
    st.sampled_from([BODY, {**BODY, "amount": 5}, {"order_id": "7", "amount": 1}, b"{", {}]),
    ACTIONS,
    st.sampled_from(
        [
            None,
            {"fault": "crash_after_charge"},
            {"fault": "lose_response"},
            {"fault": "gateway_error"},
            {"gateway_decline": True},
            {"gateway_decline": False},
            {"lock": False},
            {"email": "outbox"},
            {"email": "inline"},
            {"instances": 2, "store_scope": "per_instance"},
            {"recovery": "downstream_key"},
            {"require_key": True},
            {"in_flight": "reject"},
            {"profile": "stripe"},
        ]
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, max_size=12), st.integers(0, 3))
def test_export_import_export_is_identical_for_any_requests(steps: list[Any], advance: int) -> None:
    lab = new_lab("prop")
    for key, body, action, change in steps:
        if change:
            lab.payments.update_settings(change)
        pay(lab, key, body, action)
    if advance:
        lab.advance(advance * 3600)
    first = exported(lab)
    assert exported(reimported(first)) == first


# -- records abandoned in progress count towards the cap ---------------------------------


def test_crashes_in_progress_stay_within_the_record_cap() -> None:
    lab = Workspace("cap", settings=Settings(gateway_latency_ms=0), max_records=20)
    for n in range(60):
        lab.payments.update_settings({"fault": "crash_after_charge"})
        response, entry = pay(lab, f"k-{n}")
        assert entry.outcome == "crashed"
        assert len(lab.payments.records()) <= 20
        lab.advance(IN_PROGRESS_S + 1)  # the crashed request's deadline passes
    records = lab.payments.records()
    assert len(records) == 20
    assert {r.key for _, r in records} == {f"k-{n}" for n in range(40, 60)}  # oldest went


def test_a_store_full_of_live_in_progress_records_refuses_new_keys_with_503() -> None:
    lab = Workspace("full", settings=Settings(gateway_latency_ms=0), max_records=5)
    pay(lab, "done")  # a completed record: evicted first
    for n in range(5):
        lab.payments.update_settings({"fault": "crash_after_charge"})
        pay(lab, f"k-{n}")
    assert len(lab.payments.records()) == 5
    assert "done" not in {r.key for _, r in lab.payments.records()}
    charges = len(lab.payments.gateway.ledger())
    response, entry = pay(lab, "new")
    assert response.status == 503
    assert json.loads(response.body)["type"] == "/problems/store-full"
    assert 1 <= int(response.header("Retry-After") or 0) <= IN_PROGRESS_S
    assert entry.outcome == "invalid" and entry.finished is not None
    assert len(lab.payments.gateway.ledger()) == charges  # nothing charged
    assert len(lab.payments.records()) == 5
    lab.advance(IN_PROGRESS_S + 1)
    response, _ = pay(lab, "new")
    assert response.status == 201
    assert len(lab.payments.records()) == 5


def test_the_store_evicts_the_oldest_completed_or_abandoned_record() -> None:
    now = [1000.0]
    store = IdempotencyStore(max_records=3, in_progress_s=30, clock=lambda: now[0])
    store.reserve("running", "f")
    store.complete("done", "f", _ok())
    store.reserve("crashed", "f")
    now[0] += 31  # "running" and "crashed" are past their deadline now: abandoned
    store.reserve("fresh", "f")
    assert [r.key for r in store.records()] == ["done", "crashed", "fresh"]
    store.reserve("fresh-2", "f")
    assert [r.key for r in store.records()] == ["crashed", "fresh", "fresh-2"]
    assert [r.state for r in store.records()] == [State.IN_PROGRESS] * 3
    store.reserve("fresh-3", "f")  # "crashed" is the oldest abandoned one
    with pytest.raises(StoreFull) as full:
        store.reserve("fresh-4", "f")
    assert full.value.retry_after_s == 30
    assert [r.key for r in store.records()] == ["fresh", "fresh-2", "fresh-3"]


def _ok() -> Any:
    from demo.payments.idempotency import Response

    return Response(201, b"{}")


# -- a TTL under the in-progress deadline with in_flight "reject" ------------------------


@pytest.mark.parametrize(
    ("first", "then", "field"),
    [
        (None, {"in_flight": "reject", "ttl_s": 10}, "ttl_s"),
        ({"ttl_s": 10}, {"in_flight": "reject"}, "in_flight"),
        ({"in_flight": "reject"}, {"ttl_s": IN_PROGRESS_S - 1}, "ttl_s"),
    ],
)
def test_a_ttl_under_the_deadline_with_reject_is_422(
    client: FlaskClient, first: Any, then: Any, field: str
) -> None:
    url = "/lab/ttl/api/settings"
    if first:
        assert client.patch(url, json=first).status_code == 200
    before = client.get("/lab/ttl/api/state").get_json()["settings"]
    answer = client.patch(url, json=then, headers=JSON)
    assert answer.status_code == 422
    assert answer.get_json()["type"] == "/problems/invalid-settings"
    assert "in-progress deadline" in answer.get_json()["errors"][field]
    assert client.get("/lab/ttl/api/state").get_json()["settings"] == before


def test_a_ttl_at_the_deadline_with_reject_answers_409_in_flight() -> None:
    lab = new_lab(in_flight="reject", ttl_s=IN_PROGRESS_S)
    lab.payments.update_settings({"fault": "crash_after_charge"})
    pay(lab, "k-1")  # left in progress, as a request still running would be
    response, entry = pay(lab, "k-1")
    assert (response.status, entry.outcome) == (409, "in_use")
    assert response.header("Retry-After") is not None


def test_a_history_with_a_short_ttl_under_reject_is_refused(client: FlaskClient) -> None:
    data = a_history(client, "ttl-h")
    data["settings"].update(in_flight="reject", ttl_s=5)
    answer = replay(client, data)
    assert answer.status_code == 422
    assert "settings" in answer.get_json()["errors"]


def test_shown_is_its_own_fixed_point() -> None:
    for text in ("a\x7fb", "\t", "\ud800", "é\u2028", "x" * 400, "plain"):
        once = shown(text)
        assert once.isprintable() and len(once) <= 300
        assert shown(once) == once


def test_problem_details_are_kept_printable_and_bounded() -> None:
    lab = new_lab()
    body = json.dumps({f"f\x01{n}" * 10: 1 for n in range(40)}).encode()
    response, entry = pay(lab, "k-1", body)
    assert response.status == 422
    assert entry.problem_detail is not None
    assert entry.problem_detail.isprintable() and len(entry.problem_detail) <= 300
    first = exported(lab)
    assert exported(reimported(first)) == first


def test_read_refuses_a_problem_not_a_500_for_a_bad_nested_body() -> None:
    with pytest.raises(Problem) as bad:
        history.read({"format": history.FORMAT, "version": 1, "settings": {}, "requests": [
            {"id": 1, "started_ms": 0, "outcome": "charged", "action": "a", "instance": "i1",
             "body": {"order_id": [[[[]]]], "amount": 1}},
        ]})  # fmt: skip
    assert bad.value.status == 422


def test_store_full_over_http_is_a_503_problem_with_retry_after() -> None:
    from demo import create_app

    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0, "LAB_MAX_RECORDS": 3})
    http = app.test_client()
    url = "/lab/full/api/charges"
    for n in range(3):
        http.patch("/lab/full/api/settings", json={"fault": "crash_after_charge"})
        http.post(url, json=BODY, headers={"Idempotency-Key": f"k-{n}"})
    answer = http.post(url, json=BODY, headers={"Idempotency-Key": "new", **JSON})
    assert answer.status_code == 503
    assert answer.mimetype == "application/problem+json"
    assert answer.get_json()["type"] == "/problems/store-full"
    assert 1 <= int(answer.headers["Retry-After"]) <= IN_PROGRESS_S
    state = http.get("/lab/full/api/state").get_json()
    assert len(state["records"]) == 3 and len(state["charges"]) == 3
    assert state["requests"][-1]["status"] == 503


def test_a_replay_shows_the_order_the_lab_was_on(client: FlaskClient) -> None:
    """Issue 10 §4: a replay's order-id field showed 42 when the lab was on 44."""
    for order in ("43", "44"):
        body = {**BODY, "order_id": order}
        client.post("/lab/o44/api/charges", json=body, headers={"Idempotency-Key": f"k-{order}"})
    lab = reimported(json.dumps(client.get("/lab/o44/history.json").get_json()).encode())
    assert lab.payments.current_order == "44"
    assert lab.read_only


def test_an_e_mail_keeps_when_and_how_it_was_sent_through_a_replay(client: FlaskClient) -> None:
    client.patch("/lab/m1/api/settings", json={"email": "outbox"})
    client.post("/lab/m1/api/charges", json=BODY, headers={"Idempotency-Key": "k-m"})
    data = client.get("/lab/m1/history.json").get_json()
    [mail] = data["emails"]
    assert mail["via"] == "outbox" and mail["sent_at"] > 0
    lab = reimported(json.dumps(data).encode())
    assert [(m.via, m.sent_at) for m in lab.payments.emails()] == [("outbox", mail["sent_at"])]
    mail["sent_at"] = "yesterday"
    answer = replay(client, data)
    assert answer.status_code == 422
    assert "emails[0].sent_at" in answer.get_json()["errors"]
