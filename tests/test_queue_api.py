"""The queue lab's JSON API: status codes, problem+json for every bad input, and answers
that fit the OpenAPI document."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator

from demo import create_app
from demo.queue.jobs import EXAMPLE
from demo.web.i18n import LANGUAGES
from demo.web.openapi import document

DOC = document(tuple(LANGUAGES))
API = "/lab/q/queue/api"


def fits(body: Any, schema: str) -> None:
    Draft202012Validator(
        {"$ref": f"#/components/schemas/{schema}", "components": DOC["components"]}
    ).validate(body)


def test_enqueue_work_and_state(client: FlaskClient) -> None:
    created = client.post(f"{API}/jobs", json=dict(EXAMPLE))
    assert created.status_code == 201
    fits(created.get_json(), "Enqueued")
    message_id = created.get_json()["message_id"]
    worked = client.post(f"{API}/work")
    assert worked.status_code == 200
    result = worked.get_json()
    fits(result, "WorkResult")
    assert (result["outcome"], result["message_id"]) == ("processed", message_id)
    assert result["explanation"]
    state = client.get(f"{API}/state").get_json()
    fits(state, "QueueState")
    assert state["messages"] == [
        {"message_id": message_id, "job_id": "send-invoice-42",
         "idempotency_key": "invoice:42:email", "state": "acked", "receive_count": 1,
         "visible_at": None},
    ]  # fmt: skip
    assert [(e["idempotency_key"], e["message_id"], e["job_id"]) for e in state["emails"]] == [
        ("invoice:42:email", message_id, "send-invoice-42")
    ]
    assert state["explanation"] == result["explanation"]


def test_a_crash_is_answered_and_the_workspace_clock_redelivers(client: FlaskClient) -> None:
    assert client.patch(f"{API}/settings", json={"crash_at": "after_effect"}).status_code == 200
    client.post(f"{API}/jobs", json=dict(EXAMPLE))
    crashed = client.post(f"{API}/work").get_json()
    assert (crashed["outcome"], crashed["crashed_at"]) == ("crashed", "after_effect")
    assert client.post(f"{API}/work").get_json()["outcome"] == "idle"
    assert client.post("/lab/q/api/clock", json={"advance_s": 31}).status_code == 200
    again = client.post(f"{API}/work").get_json()
    assert (again["outcome"], again["receive_count"]) == ("processed", 2)
    assert len(client.get(f"{API}/state").get_json()["emails"]) == 2  # no dedup: twice


def test_vietnamese_explanations(client: FlaskClient) -> None:
    client.post("/lab/q/language", data={"language": "vi"})
    client.post(f"{API}/jobs", json=dict(EXAMPLE))
    said = client.post(f"{API}/work", headers={"Accept-Language": "vi"}).get_json()["explanation"]
    assert "gửi email" in said[0]


def test_simulate(client: FlaskClient) -> None:
    body = {"mode": "at_least_once", "messages": 1000, "loss": 0.1, "ack_loss": 0.3, "seed": 5}
    first = client.post(f"{API}/simulate", json=body)
    assert first.status_code == 200
    fits(first.get_json(), "Simulation")
    assert first.get_json() == client.post(f"{API}/simulate", json=body).get_json()
    assert client.get(f"{API}/state").get_json()["simulation"] == first.get_json()


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("post", "jobs", {"id": "j"}, 422),
        ("post", "jobs", {"id": "j", "idempotency_key": "k", "payload": {"n": 1.0}}, 422),
        ("post", "jobs", b"{not json", 400),
        ("post", "jobs", b'{"id": "j", "id": "k", "idempotency_key": "k"}', 400),
        ("patch", "settings", {"max_attempts": 0}, 422),
        ("patch", "settings", {"delivery": "exactly_once"}, 422),
        ("patch", "settings", {"visibility_timeout_s": "30"}, 422),
        ("patch", "settings", ["dedup"], 422),
        ("post", "simulate", {"mode": "idempotent", "messages": 100_001}, 422),
        ("post", "simulate", {"mode": "idempotent", "messages": 10, "loss": 0.95}, 422),
    ],
)
def test_bad_input_is_a_problem(
    client: FlaskClient, method: str, path: str, body: Any, status: int
) -> None:
    kwargs: dict[str, Any] = (
        {"data": body, "content_type": "application/json"}
        if isinstance(body, bytes)
        else {"json": body}
    )
    response = getattr(client, method)(f"{API}/{path}", **kwargs)
    assert response.status_code == status
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["status"] == status
    state = client.get(f"{API}/state").get_json()
    assert state["messages"] == [] and state["settings"]["max_attempts"] == 5


def test_a_body_that_is_not_json_is_415(client: FlaskClient) -> None:
    response = client.post(f"{API}/jobs", data="id=j", content_type="text/plain")
    assert response.status_code == 415 and response.mimetype == "application/problem+json"


def test_a_get_changes_nothing(client: FlaskClient, app: Any) -> None:
    assert client.get("/lab/never-written/queue/api/state").status_code == 200
    assert app.extensions["labs"].find("never-written") is None


def test_every_operation_is_in_the_openapi_document() -> None:
    paths = {p for p in DOC["paths"] if "/queue/api/" in p}
    names = ("state", "settings", "jobs", "work", "simulate", "step")
    assert paths == {f"/lab/{{lab_id}}/queue/api/{name}" for name in names}
    assert DOC["paths"]["/lab/{lab_id}/queue/api/jobs"]["post"]["responses"]["201"]


def test_a_redis_that_went_away_is_a_503_problem() -> None:
    app = create_app({"TESTING": True, "REDIS_URL": "redis://127.0.0.1:1/0"})
    client = app.test_client()
    for response in (
        client.post(f"{API}/jobs", json=dict(EXAMPLE)),
        client.post(f"{API}/work"),
        client.get(f"{API}/state"),
    ):
        assert response.status_code == 503
        assert response.mimetype == "application/problem+json"
        assert response.get_json()["type"] == "/problems/broker-unavailable"
    # The payment lab of the same workspace is untouched.
    assert client.get("/lab/q/api/state").status_code == 200


def test_the_queue_lab_on_redis(redis_url: str) -> None:
    app = create_app({"TESTING": True, "REDIS_URL": redis_url})
    client = app.test_client()
    client.patch(f"{API}/settings", json={"dedup": True})
    client.post(f"{API}/jobs", json=dict(EXAMPLE))
    client.post(f"{API}/jobs", json=dict(EXAMPLE))
    outcomes = [client.post(f"{API}/work").get_json()["outcome"] for _ in range(3)]
    assert outcomes == ["processed", "duplicate_skipped", "idle"]
    state = client.get(f"{API}/state").get_json()
    assert state["broker"] == "redis" and len(state["emails"]) == 1
    assert all("-" in m["message_id"] for m in state["messages"])  # Redis stream ids
    client.post("/lab/q/api/reset")
    assert client.get(f"{API}/state").get_json()["messages"] == []


def test_step_mode_over_http(client: FlaskClient, lab_of: Any) -> None:
    import threading

    client.patch(f"{API}/settings", json={"step_mode": True})
    client.post(f"{API}/jobs", json=dict(EXAMPLE))
    answers: list[Any] = []
    worker = threading.Thread(target=lambda: answers.append(client.post(f"{API}/work")))
    worker.start()
    try:
        lab = lab_of("q").queue
        for _ in range(2000):  # until the work call stands at its first step
            if lab.stepper.paused() and lab.stepper.paused()[0]["waiting"]:
                break
            threading.Event().wait(0.005)
        paused = client.get(f"{API}/state").get_json()["paused"]
        assert [(p["step"], p["label"]) for p in paused] == [("receive", "A")]
        stepped = client.post(f"{API}/step", json={"request": paused[0]["request"]})
        assert stepped.status_code == 200
        assert stepped.get_json()["paused"][0]["step"] == "side effect"
        assert client.post(f"{API}/step", json={"request": 99}).status_code == 404
        assert client.post(f"{API}/step", json={"go": 1}).status_code == 422
    finally:
        client.post(f"{API}/step", json={"release_all": True})
        worker.join()
    assert answers[0].get_json()["outcome"] == "processed"


@pytest.mark.parametrize(
    ("body", "member", "says"),
    [
        (b'{"id": "j", "idempotency_key": "k", "payload": {"invoice_id": 1e400}}', "payload",
         "out of range"),
        (b'{"id": "j", "idempotency_key": "k"}', "payload", "is required"),
    ],
)  # fmt: skip
def test_a_job_is_refused_for_what_is_really_wrong(
    client: FlaskClient, body: bytes, member: str, says: str
) -> None:
    response = client.post(f"{API}/jobs", data=body, content_type="application/json")
    assert response.status_code == 422
    assert says in response.get_json()["errors"][member]
    assert client.get(f"{API}/state").get_json()["messages"] == []


def test_work_takes_no_body_but_none_or_an_empty_object(client: FlaskClient) -> None:
    assert client.post(f"{API}/work").get_json()["outcome"] == "idle"
    assert client.post(f"{API}/work", json={}).get_json()["outcome"] == "idle"
    client.post(f"{API}/jobs", json=dict(EXAMPLE))
    refused = client.post(f"{API}/work", json={"worker": 2})
    assert (refused.status_code, refused.mimetype) == (422, "application/problem+json")
    assert refused.get_json()["type"] == "/problems/invalid-work"
    assert client.post(f"{API}/work", data="x", content_type="text/plain").status_code == 415
    assert client.post(f"{API}/work", data="{", content_type="application/json").status_code == 400
    # Nothing was worked by a refused call: the job is still ready.
    assert [m["state"] for m in client.get(f"{API}/state").get_json()["messages"]] == ["ready"]
