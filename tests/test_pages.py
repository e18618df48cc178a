"""The page and the fragments htmx swaps, rendered by Flask's test client."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

ROOT = Path(__file__).resolve().parent.parent
HTMX = ROOT / "static" / "htmx-2.0.11.min.js"
# sha256 of dist/htmx.min.js in the npm package htmx.org@2.0.11
HTMX_SHA256 = "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"

HX = {"HX-Request": "true"}
BODY = {"order_id": "42", "amount": 100000}


def hx_pay(
    client: FlaskClient, key: str = "k1", body: dict[str, object] = BODY, action: str = "Pay"
):
    return client.post(
        "/lab/p1/api/charges",
        json=body,
        headers={**HX, "Idempotency-Key": key, "X-Lab-Action": action},
    )


def test_vendored_htmx_matches_the_npm_package() -> None:
    assert hashlib.sha256(HTMX.read_bytes()).hexdigest() == HTMX_SHA256
    assert (ROOT / "static" / "htmx-2.0.11.LICENSE").read_text().startswith("Zero-Clause BSD")


def test_page_has_the_buttons_and_controls(client: FlaskClient) -> None:
    html = client.get("/lab/p1").get_data(as_text=True)
    for label in (
        "Pay",
        "Retry",
        "Double-submit",
        "Change amount &amp; resend",
        "New order",
        "Reset",
    ):
        assert re.search(rf"<button[^>]*>\s*{re.escape(label)}\s*</button>", html), label
    assert 'id="lock"' in html and 'name="gateway_latency_ms"' in html
    # The key field is a textarea that wraps a long key (issue 10): its text is the key.
    assert re.search(r'<textarea id="idempotency-key"[^>]*>t1:u7:pay:order-42:v1</textarea>', html)
    assert "htmx-2.0.11.min.js" in html
    assert "<script>" not in html  # no inline script: the CSP forbids it
    assert "cdn" not in html.lower()


def test_htmx_charge_returns_panels_with_the_real_status(client: FlaskClient) -> None:
    first = hx_pay(client)
    assert first.status_code == 201 and first.mimetype == "text/html"
    assert "HX-Request" in first.headers["Vary"]
    html = first.get_data(as_text=True)
    assert 'id="panels"' in html and "CHARGED" in html and "charged 1" in html

    retry = hx_pay(client, action="Retry")
    html = retry.get_data(as_text=True)
    assert retry.status_code == 201
    assert "REPLAYED" in html and "Idempotent-Replayed: true" in html and "charged 1" in html

    conflict = hx_pay(client, body={**BODY, "amount": 101000}, action="Change amount")
    html = conflict.get_data(as_text=True)
    assert conflict.status_code == 409
    assert "409 CONFLICT" in html and "first used with another body" in html


def test_invalid_request_is_explained_in_the_panels(client: FlaskClient) -> None:
    response = hx_pay(client, body={"order_id": "42", "amount": "lots"})
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert "refused before anything ran" in html and "Invalid charge request" in html


def test_problem_outside_the_lab_tells_htmx_not_to_swap(client: FlaskClient) -> None:
    response = client.post(
        "/lab/p1/api/charges", data=b"x=1", content_type="text/plain", headers=HX
    )
    assert response.status_code == 415
    assert response.headers["HX-Reswap"] == "none"
    assert json.loads(response.headers["HX-Trigger"])["lab-problem"]["status"] == 415


def test_user_strings_are_escaped(client: FlaskClient) -> None:
    evil = "<img src=x onerror=alert(1)>"
    hx_pay(client, key=evil, body={"order_id": evil, "amount": 1}, action=evil)
    html = client.get("/lab/p1").get_data(as_text=True)
    assert evil not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_panels_poll_is_204_until_something_changes(client: FlaskClient) -> None:
    html = client.get("/lab/p1/panels").get_data(as_text=True)
    version = re.search(r'data-version="(\d+)"', html).group(1)  # type: ignore[union-attr]
    assert client.get(f"/lab/p1/panels?since={version}").status_code == 204
    hx_pay(client)
    assert client.get(f"/lab/p1/panels?since={version}").status_code == 200


def test_settings_patch_from_htmx_returns_panels_out_of_band(client: FlaskClient) -> None:
    response = client.patch("/lab/p1/api/settings", json={"lock": False}, headers=HX)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'hx-swap-oob="true"' in html and "Lock is <strong>OFF</strong>" in html


def test_new_order_gives_a_new_key(client: FlaskClient) -> None:
    hx_pay(client, key="t1:u7:pay:order-42:v1")
    html = client.post("/lab/p1/new-order", data={"order_id": "42", "amount": "5000"}).get_data(
        as_text=True
    )
    assert 'value="43"' in html and 'value="5000"' in html
    assert ">t1:u7:pay:order-43:v1</textarea>" in html


def test_refresh_keeps_the_current_order(client: FlaskClient) -> None:
    hx_pay(client, key="t1:u7:pay:order-77:v1", body={"order_id": "77", "amount": 5})
    html = client.get("/lab/p1").get_data(as_text=True)
    assert ">t1:u7:pay:order-77:v1</textarea>" in html


@pytest.mark.parametrize("lock", [True, False])
def test_explanation_of_an_overlapping_double_submit(client: FlaskClient, lock: bool) -> None:
    """Two real concurrent requests through the app: the explanation names what happened."""
    import threading

    client.patch("/lab/p1/api/settings", json={"lock": lock, "gateway_latency_ms": 200})
    start = threading.Barrier(2)
    pages: list[str] = []

    def send() -> None:
        start.wait(5)
        pages.append(hx_pay(client, key="dup").get_data(as_text=True))

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    last = client.get("/lab/p1/panels").get_data(as_text=True)
    if lock:
        assert "charged 1" in last and "waited" in last and "REPLAYED" in last
    else:
        assert "charged 2" in last and "DOUBLE CHARGE" in last and "TOCTOU" in last


def test_sequence_diagram_shows_the_race_in_the_order_it_happened(client: FlaskClient) -> None:
    import threading
    import xml.etree.ElementTree as ET

    client.patch("/lab/p1/api/settings", json={"lock": False, "gateway_latency_ms": 200})
    start = threading.Barrier(2)

    def send() -> None:
        start.wait(5)
        hx_pay(client, key="dup")

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    response = client.get("/lab/p1/sequence.svg")
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    texts = [t.text for t in ET.fromstring(response.data).iter("{http://www.w3.org/2000/svg}text")]
    assert {"Client", "Instance i1", "Store", "Gateway"} <= set(texts)
    svg = "{http://www.w3.org/2000/svg}"
    # Each arrow is a group titled with its whole label (its text may wrap over lines).
    groups = ET.fromstring(response.data).iter(f"{svg}g")
    order = [g.findtext(f"{svg}title") or "" for g in groups]
    lookups = [i for i, t in enumerate(order) if "lookup: miss" in t]
    saves = [i for i, t in enumerate(order) if "save record" in t]
    assert len(lookups) == 2 and max(lookups) < min(saves)  # both missed before either saved
    assert sum("DOUBLE CHARGE" in t for t in order) == 1  # the repeat, not the first charge
    download = client.get("/lab/p1/sequence.svg?download=1")
    assert "attachment" in download.headers["Content-Disposition"]


def test_sequence_diagram_escapes_keys(client: FlaskClient) -> None:
    hx_pay(client, key="<script>x</script>")
    svg = client.get("/lab/p1/sequence.svg").get_data(as_text=True)
    assert "<script>" not in svg and "&lt;script&gt;" in svg


def test_an_answer_from_before_a_reset_does_not_explain_the_fresh_lab(app: Any) -> None:
    import threading

    client = app.test_client()
    client.patch("/lab/p1/api/settings", json={"gateway_latency_ms": 300})
    pages: list[str] = []
    thread = threading.Thread(target=lambda: pages.append(hx_pay(client).get_data(as_text=True)))
    thread.start()
    import time

    lab = app.extensions["labs"].get("p1")
    deadline = time.monotonic() + 5
    while (
        not any(e.step("validate") for e in lab.payments.requests()) and time.monotonic() < deadline
    ):
        time.sleep(0.005)  # until the request is under way, at the gateway
    app.test_client().post("/lab/p1/api/reset")
    thread.join(5)
    assert "Nothing sent yet" in pages[0] and "charged 0" in pages[0]


def test_a_rounded_duration_never_puts_the_charge_before_the_reservation() -> None:
    from demo.engine.timeline import Step
    from demo.web.payments.timeline import _begin_times

    steps = [
        Step("lookup", 0.1, {"hit": False}),
        Step("reserve", 0.3, {}),
        Step("gateway charge", 300.6, {"ms": 300.4}),  # began at 0.2 by its rounded duration
        Step("record save", 300.7, {}),
    ]
    times = _begin_times(steps)
    assert times == sorted(times)
    assert times[2] == 0.3


def test_crash_recovery_tells_the_gateway_call_before_its_replayed_answer(
    client: FlaskClient,
) -> None:
    """Issue 10 §4: "gateway returned ch_0001 again" came before "gateway call"."""
    import xml.etree.ElementTree as ET

    client.patch(
        "/lab/p1/api/settings", json={"fault": "crash_after_charge", "recovery": "downstream_key"}
    )
    hx_pay(client, key="crash-1")
    html = hx_pay(client, key="crash-1", action="Retry").get_data(as_text=True)
    lane = html[html.index('data-request="2"') :]
    assert lane.index("gateway charge: no new money") < lane.index("gateway returned ch_0001 again")
    svg = client.get("/lab/p1/sequence.svg").data
    texts = [t.text or "" for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]
    mine = [t for t in texts if t.startswith("#2 ")]
    assert mine.index("#2 charge") < mine.index("#2 same charge again")


def test_double_submit_lanes_read_a_then_b_in_arrival_order(client: FlaskClient) -> None:
    """The first of a pair to arrive is A, whatever letter its element carried."""
    for action in ("Double-submit B", "Double-submit A"):
        headers = {**HX, "X-Lab-Action": action}
        html = client.post("/lab/p1/api/charges", json=BODY, headers=headers).get_data(as_text=True)
    assert "#1 Double-submit A" in html and "#2 Double-submit B" in html
    assert "#1 Double-submit B" not in html


def test_a_request_without_a_key_is_not_tagged_with_the_lock(client: FlaskClient) -> None:
    client.post("/lab/p1/api/charges", json=BODY, headers=HX)
    html = client.get("/lab/p1").get_data(as_text=True)
    lane = html[
        html.index('data-request="1"') : html.index("</article>", html.index('data-request="1"'))
    ]
    assert "lock on" not in lane and "lock off" not in lane and "no key" in lane


def test_per_instance_stores_get_one_store_lifeline_each_and_say_the_lock_is_theirs(
    client: FlaskClient,
) -> None:
    import xml.etree.ElementTree as ET

    client.patch("/lab/p1/api/settings", json={"instances": 2, "store_scope": "per_instance"})
    hx_pay(client, key="k-inst")
    hx_pay(client, key="k-inst", action="Retry")
    root = ET.fromstring(client.get("/lab/p1/sequence.svg").data)
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert {"Store i1", "Store i2"} <= set(texts) and "Store" not in texts
    assert any("per-key lock cover only the requests of its own instance" in t for t in texts)
    client.patch("/lab/p1/api/settings", json={"store_scope": "shared"})
    hx_pay(client, key="k-inst")
    root = ET.fromstring(client.get("/lab/p1/sequence.svg").data)
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "Store" in texts and "Store i1" not in texts
    assert any("per-key lock span every instance" in t for t in texts)


def test_a_long_key_wraps_between_the_lifelines_with_its_whole_label_as_tooltip(
    client: FlaskClient,
) -> None:
    import xml.etree.ElementTree as ET

    from demo.web.payments.sequence import CHAR_W

    key = "tenant-with-a-long-name:actor-007:payment:order-000000042:v1"
    hx_pay(client, key=key)
    svg = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(client.get("/lab/p1/sequence.svg").data)
    for group in root.iter(f"{svg}g"):
        line = group.find(f"{svg}line")
        assert line is not None
        gap = abs(float(line.get("x2", 0)) - float(line.get("x1", 0)))
        for text in group.iter(f"{svg}text"):
            assert len(text.text or "") * CHAR_W <= gap, text.text  # inside its two lifelines
    titles = [g.findtext(f"{svg}title") or "" for g in root.iter(f"{svg}g")]
    assert f"#1 POST /charges {key}" in titles
    request = next(g for g in root.iter(f"{svg}g") if key in (g.findtext(f"{svg}title") or ""))
    assert (
        "".join(t.text or "" for t in request.iter(f"{svg}text"))
        .replace(" ", "")
        .endswith(key.replace(" ", ""))
    )


def test_the_store_panel_opens_a_records_stored_response(client: FlaskClient) -> None:
    html = hx_pay(client, key="k-stored").get_data(as_text=True)
    store = html[html.index('id="store"') :]
    details = store[store.index("<details>") : store.index("</details>")]
    assert "HTTP 201" in details and "Content-Type: application/json" in details
    assert "&#34;id&#34;:&#34;ch_0001&#34;" in details or '"id":"ch_0001"' in details


@pytest.mark.parametrize("mode", ["inline", "outbox"])
def test_the_mailbox_panel_lists_each_receipt_with_its_key_and_sender(
    client: FlaskClient, mode: str
) -> None:
    """Issue 10 §4: lesson 10 showed only a counter, not what was sent, for which key, when."""
    client.patch("/lab/p1/api/settings", json={"email": mode})
    hx_pay(client, key="k-mail")
    html = hx_pay(client, key="k-mail", action="Retry").get_data(as_text=True)
    panel = html[html.index('id="mailbox"') : html.index("</section>", html.index('id="mailbox"'))]
    rows = panel.count("<tr>") - 1  # minus the header row
    assert rows == 1  # one receipt: the retry replayed, and a replay sends nothing
    assert "em_0001" in panel and "k-mail" in panel and "ch_0001" in panel and " ago" in panel
    assert ("by the outbox relay" if mode == "outbox" else "by the handler") in panel
    assert "Outbox: nothing waiting" in panel


def test_no_mailbox_panel_while_e_mail_is_off_and_none_was_sent(client: FlaskClient) -> None:
    assert 'id="mailbox"' not in hx_pay(client).get_data(as_text=True)
