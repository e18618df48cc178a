"""The retry lab's page: its forms run the real client against the real payment lab, its
panels show what happened, the storm chart is drawn from the storm's answer, and every
string is in both languages."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.datastructures import MultiDict

from demo import create_app
from demo.web.i18n import MISSING
from demo.web.retries.chart import PANEL_H, storm_chart
from demo.web.retries.code import client_lines
from demo.web.retries.forms import FAULT_PRESETS, faults_from, policy_from, storm_from
from demo.workspace import Workspace

LAB = "/lab/rp1"
HTMX = {"HX-Request": "true"}
POLICY = {
    "max_attempts": "4",
    "strategy": "full_jitter",
    "base_ms": "200",
    "cap_ms": "5000",
    "retry_on": ["network", "408", "429", "500", "502", "503", "504"],
    "respect_retry_after": "on",
    "same_key": "on",
}
LOST_THEN_OK = str(
    next(i for i, (p, _) in enumerate(FAULT_PRESETS) if p == ("lose_response", "ok"))
)


def preset(*plan: str | int) -> str:
    return str(next(i for i, (p, _) in enumerate(FAULT_PRESETS) if p == plan))


def run(client: FlaskClient, lab: str = LAB, **form: Any) -> Any:
    return client.post(f"{lab}/retries/run", data={**POLICY, **form}, headers=HTMX)


def storm_form(**form: Any) -> dict[str, Any]:
    base = {
        "model": "contention",
        "strategy": "all",
        "clients": "100",
        "seed": "1",
        "base_ms": "10",
        "cap_ms": "2000",
        "capacity_per_s": "100",
        "outage_s": "10",
        "budget_burst": "10",
        "budget_per_s": "5",
    }
    return {**base, **form}


def charges_of(client: FlaskClient, order_id: str, lab: str = LAB) -> int:
    charges = client.get(f"{lab}/api/state").get_json()["charges"]
    return sum(1 for c in charges if c["order_id"] == order_id)


def order_in(html: str) -> str:
    match = re.search(r"<code>(retry-[0-9a-f-]+)</code>", html)
    assert match, html
    return match.group(1)


def test_the_page_shows_and_a_get_creates_no_lab(
    client: FlaskClient, lab_of: Callable[[str], Workspace]
) -> None:
    page = client.get(f"{LAB}/retries")
    assert page.status_code == 200
    html = page.text
    assert 'id="policy-form"' in html and 'id="storm-form"' in html
    assert 'aria-current="page">Retries<' in html  # the lab switcher marks this lab
    assert "No run yet" in html and "No storm yet" in html
    assert client.application.extensions["labs"].peek("rp1") is None


def test_same_key_after_a_lost_answer_replays_one_charge(client: FlaskClient) -> None:
    answer = run(client, faults_choice=LOST_THEN_OK)
    assert answer.status_code == 200
    html = answer.text
    assert 'data-outcome="replayed"' in html and 'data-charges="1"' in html
    assert "DOUBLE CHARGE" not in html
    assert charges_of(client, order_in(html)) == 1


def test_a_new_key_per_attempt_charges_twice_in_the_payment_lab(client: FlaskClient) -> None:
    form = {k: v for k, v in POLICY.items() if k != "same_key"}  # the box unticked
    answer = client.post(
        f"{LAB}/retries/run", data={**form, "faults_choice": LOST_THEN_OK}, headers=HTMX
    )
    html = answer.text
    assert 'data-charges="2"' in html and "DOUBLE CHARGE" in html and "NEW KEY" in html
    assert charges_of(client, order_in(html)) == 2  # in the payment lab's own ledger


@pytest.mark.parametrize("status", [400, 402])
def test_a_final_answer_is_one_attempt(client: FlaskClient, status: int) -> None:
    html = run(client, faults_choice=preset(status)).text
    assert 'data-outcome="final_error"' in html
    assert 'data-attempt="1"' in html and 'data-attempt="2"' not in html


def test_the_free_list_is_the_plan(client: FlaskClient) -> None:
    html = run(client, faults_choice="custom", faults="502, 502, 502, 502, 502",
               max_attempts="3").text  # fmt: skip
    assert 'data-outcome="gave_up"' in html
    assert 'data-attempt="3"' in html and 'data-attempt="4"' not in html


def test_bad_input_is_a_422_and_changes_nothing(
    client: FlaskClient, lab_of: Callable[[str], Workspace]
) -> None:
    run(client, faults_choice=LOST_THEN_OK)
    before = lab_of("rp1").retries.state()
    for form in (
        {"max_attempts": "many"},
        {"max_attempts": "11"},
        {"strategy": "forever"},
        {"faults_choice": "custom", "faults": "teapot"},
        {"faults_choice": "custom", "faults": "[503,"},
    ):
        answer = run(client, **form)
        assert answer.status_code == 422, form
        assert answer.mimetype == "application/problem+json"
        assert answer.headers["HX-Reswap"] == "none"
    bad_storm = client.post(f"{LAB}/retries/storm", data=storm_form(clients="0"), headers=HTMX)
    assert bad_storm.status_code == 422
    assert lab_of("rp1").retries.state() == before


def test_without_a_script_a_post_comes_back_to_the_page(client: FlaskClient) -> None:
    answer = client.post(f"{LAB}/retries/run", data={**POLICY, "faults_choice": LOST_THEN_OK})
    assert answer.status_code == 303
    assert answer.headers["Location"].endswith(f"{LAB}/retries")
    assert 'data-outcome="replayed"' in client.get(f"{LAB}/retries").text


def test_the_storm_chart_draws_every_strategy_on_the_same_scales(client: FlaskClient) -> None:
    html = client.post(f"{LAB}/retries/storm", data=storm_form(), headers=HTMX).text
    assert html.count('<g class="panel') == 6
    for strategy in ("none", "exponential", "full_jitter", "decorrelated_jitter"):
        assert f'data-strategy="{strategy}"' in html
    assert "<script" not in html  # drawn on the server
    rows = dict(re.findall(r'<tr data-strategy="(\w+)".*?class="num calls">([\d,]+)<', html))
    assert len(rows) == 6
    calls = {strategy: int(n.replace(",", "")) for strategy, n in rows.items()}
    assert calls["full_jitter"] < calls["exponential"]  # the blog's result, shown


def test_the_chart_geometry() -> None:
    answer = {
        "model": "outage",
        "clients": 3,
        "seed": 1,
        "bucket_s": 0.5,
        "results": [
            {"strategy": "none", "calls": 6, "completion_s": 1.0, "peak_load": 40.0,
             "series": [{"t_s": 0.0, "calls": 5}, {"t_s": 0.5, "calls": 1}]},
            {"strategy": "full_jitter", "calls": 3, "completion_s": 1.4, "peak_load": 20.0,
             "series": [{"t_s": 0.0, "calls": 0}, {"t_s": 0.5, "calls": 2},
                        {"t_s": 1.0, "calls": 1}]},
        ],
    }  # fmt: skip
    chart = storm_chart(answer)
    assert chart.x_max == 2.0 and chart.y_max == 10.0  # 1.5 s → 2 s; 10 calls/s → 10
    none, jitter = chart.panels
    assert [b.per_s for b in none.bars] == [10.0, 2.0]
    assert none.bars[0].h == PANEL_H  # the busiest bucket fills the panel
    assert 0 < none.bars[1].h < PANEL_H / 2  # log10(2) / log10(10) of it
    assert [b.t_s for b in jitter.bars] == [0.5, 1.0]  # an empty bucket draws nothing
    assert jitter.fewest and not none.fewest
    assert none.y == jitter.y and jitter.x > none.x  # side by side


def test_the_forms_read_into_the_api_requests() -> None:
    form = MultiDict([*POLICY.items(), ("retry_on", "400"), ("faults_choice", "custom"),
                      ("faults", '["lose_response", 503, "ok"]')])  # fmt: skip
    form.setlist("retry_on", ["network", "503", "400"])
    policy = policy_from(form)
    assert policy["retry_on"] == ["network", 503, 400] and policy["max_attempts"] == 4
    assert policy["same_key"] is True and policy["respect_retry_after"] is True
    assert faults_from(form) == ["lose_response", 503, "ok"]
    form["faults"] = "lose_response 503,ok"
    assert faults_from(form) == ["lose_response", 503, "ok"]
    storm = storm_from(MultiDict({**storm_form(), "budget": "on"}))
    assert storm["budget"] == {"burst": 10, "per_s": 5} and storm["clients"] == 100


def test_the_code_view_is_the_running_source() -> None:
    import inspect

    from demo.retries import client

    text = "\n".join(line.text for line in client_lines())
    assert inspect.getsource(client.charge_with_retries).rstrip() in text
    assert "Retrying(" in text and "def backoff_ms(" in text


def test_the_page_in_vietnamese_misses_no_translation() -> None:
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0, "I18N_MARK_MISSING": True})
    client = app.test_client()
    vi = {"Accept-Language": "vi"}
    lab = "/lab/rp-vi"
    client.post(f"{lab}/retries/run", data={**POLICY, "faults_choice": LOST_THEN_OK},
                headers={**HTMX, **vi})  # fmt: skip
    client.post(f"{lab}/retries/storm", data=storm_form(), headers={**HTMX, **vi})
    client.post("/lab/rp-vi?lesson=lost-response-retry")
    html = client.get(f"{lab}/retries", headers=vi).text
    assert '<html lang="vi">' in html and "Lần chạy gần nhất" in html
    assert 'id="lesson"' in html
    assert MISSING not in html


def test_a_link_lands_on_the_retry_page(client: FlaskClient) -> None:
    """A link's scenario or presenter mode, given on the retry page without ``lab``: sent
    on with ``lab=retries`` (a GET changes nothing), and its POST lands back here."""
    answer = client.get(f"{LAB}/retries?scenario=jitter&fixed=1")
    assert answer.status_code == 303
    assert "lab=retries" in answer.headers["Location"]
    assert "scenario=jitter" in answer.headers["Location"]
    assert client.application.extensions["labs"].peek("rp1") is None
    applied = client.post(f"{LAB}?scenario=jitter&fixed=1&lab=retries")
    assert applied.headers["Location"].endswith(f"{LAB}/retries")
    assert client.get(f"{LAB}/retries?scenario=no-such").status_code == 404
    assert client.get("/lab/bad%20id/retries?present=1").status_code == 404


def test_reset_forgets_the_runs_and_keeps_the_policy(
    client: FlaskClient, lab_of: Callable[[str], Workspace]
) -> None:
    run(client, faults_choice=LOST_THEN_OK, max_attempts="5")
    client.post(f"{LAB}/retries/storm", data=storm_form(), headers=HTMX)
    answer = client.post(f"{LAB}/retries/reset", headers=HTMX)
    assert answer.status_code == 200
    assert "No run yet" in answer.text and "No storm yet" in answer.text
    retries = lab_of("rp1").retries
    assert retries.last_run is None and retries.last_storm is None and not retries.runs()
    assert retries.policy.max_attempts == 5
    assert len(lab_of("rp1").payments.gateway.ledger()) == 1  # the payment lab keeps its own
