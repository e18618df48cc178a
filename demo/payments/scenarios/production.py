"""What production adds: a crash between the charge and the record, a duplicate still in
flight, the field's profiles, TTL expiry, several instances, declines and gateway
timeouts, a client-side guard, and the receipt e-mail sent twice."""

from __future__ import annotations

from ...engine.text import N_
from ..preset import Scenario

PRODUCTION: tuple[Scenario, ...] = (
    Scenario(
        "crash-window",
        N_("Crash between the charge and the record"),
        N_("The instance dies after the gateway charged and before the record was saved."),
        (
            N_("Press Pay: the gateway charges, then the instance crashes; the connection drops."),
            N_("Press Retry: it sends the same key again."),
        ),
        N_(
            "The record never reached the completed state, so the retry charged again. The "
            "in-progress record told the retry a request had started, not that it had charged."
        ),
        N_(
            "Pass the idempotency key on to the gateway (Crash recovery: key to gateway). "
            "The gateway deduplicates on it, so the retry gets the first charge back."
        ),
        ("Pay", "Retry"),
        settings={"fault": "crash_after_charge"},
        fix={"fault": "crash_after_charge", "recovery": "downstream_key"},
        fix_badges=(N_("fix OFF: no key to gateway"), N_("fix ON: key to gateway")),
    ),
    Scenario(
        "in-flight",
        N_("Duplicate while the first is in flight"),
        N_("Compare waiting for the first request with rejecting the duplicate at once."),
        (N_("Press Double-submit with in-flight set to reject."),),
        N_(
            "The second request found the key in progress and was turned away at once with 409 "
            "and Retry-After (Stripe and the IETF draft do this). The client must retry later."
        ),
        N_(
            "Set Duplicate in flight to wait, replay: the duplicate waits for the per-key "
            "lock, then replays the result."
        ),
        ("Double-submit",),
        settings={"in_flight": "reject"},
        fix={"in_flight": "wait"},
        fix_badges=(
            N_("fix OFF: a duplicate is rejected (409)"),
            N_("fix ON: a duplicate waits, then replays"),
        ),
    ),
    Scenario(
        "profiles",
        N_("How public APIs answer"),
        N_("See the same mistake answered in three dialects."),
        (
            N_("Press Pay."),
            N_("Press Change amount & resend."),
            N_("Switch the profile and resend."),
        ),
        N_(
            "Same key with another body: the seed answers 409, the IETF draft 422, and Stripe "
            "400 with idempotency_error. A client must handle the one its API uses."
        ),
        N_(
            "There is no single right answer: handle the one your API uses. With the fix the "
            "lab speaks Stripe's dialect (400 idempotency_error); the table shows all three."
        ),
        ("Pay", "Change amount"),
        settings={"profile": "ietf", "require_key": True},
        fix={"profile": "stripe", "require_key": True},
        defence=True,
    ),
    Scenario(
        "ttl-expiry",
        N_("TTL expiry"),
        N_("Retry after the record has expired."),
        (
            N_("Press Pay."),
            N_("Press +25 h: the lab's clock jumps past the 24 h TTL."),
            N_("Press Retry."),
        ),
        N_(
            "The record expired, so the retry was a new intent to the store and charged again: "
            "the TTL must cover the client's retry horizon."
        ),
        N_("Keep keys longer than the retry horizon (here: TTL 72 h)."),
        ("Pay", "+25 h", "Retry"),
        fix={"ttl_s": 72 * 3600},
        fix_badges=(N_("fix OFF: TTL 24 h"), N_("fix ON: TTL 72 h")),
        fix_steps=(
            N_("Press Pay."),
            N_("Press +25 h: the lab's clock jumps a day ahead, still within the 72 h TTL."),
            N_("Press Retry."),
        ),
    ),
    Scenario(
        "multi-instance",
        N_("Several instances, each with its own store"),
        N_("Retry through a round-robin balancer whose instances keep records in memory."),
        (
            N_("Press Pay: instance i1 serves it."),
            N_(
                "Press Retry: the load balancer takes turns (round robin), so instance i2 "
                "serves it."
            ),
        ),
        N_(
            "i2 had never seen the key: dedup only in process memory does not survive a second "
            "instance. (The instances live in one process here; the lab says which one served "
            "each request.)"
        ),
        N_(
            "Share one store between the instances, like Redis or a database table (Store: "
            "shared, in the Failure lab)."
        ),
        ("Pay", "Retry"),
        settings={"instances": 2, "store_scope": "per_instance"},
        fix={"instances": 2, "store_scope": "shared"},
        fix_badges=(N_("fix OFF: a store per instance"), N_("fix ON: one shared store")),
    ),
    Scenario(
        "decline",
        N_("Decline vs transport failure"),
        N_("A declined card is an answer; a dropped connection is not."),
        (
            N_("Press Pay: the gateway declines (402)."),
            N_("Press Retry: the same 402 is replayed."),
        ),
        N_(
            "A decline is a business result: it is stored and replayed, so retrying it is "
            "pointless. A transport failure (502) releases the key, so a retry runs again."
        ),
        N_(
            "Switch to a transport failure: the gateway fails once before charging, then the "
            "retry charges. By hand: untick Gateway declines cards, press New order, then "
            "Gateway error in the Failure lab."
        ),
        ("Pay", "Retry"),
        settings={"gateway_decline": True},
        fix={"gateway_decline": False, "fault": "gateway_error"},
        fix_steps=(
            N_("Press Pay: the gateway fails before charging (502), and the key is released."),
            N_("Press Retry: the same key runs again and charges once."),
        ),
        fix_note=N_(
            "This 502 came before the charge, so releasing the key was safe. A timeout, "
            "or a 502 after the gateway may have charged, is ambiguous: the money may "
            "have moved. See it for yourself in"
        ),
        fix_link="gateway-timeout",
        fix_goal=N_("See a transport failure (502) release the key: the retry charges once."),
        defence=True,
    ),
    Scenario(
        "gateway-timeout",
        N_("Timeout after the charge"),
        N_("The gateway takes the money, and its answer never comes: did it pay?"),
        (
            N_(
                "Press Pay: the gateway charges, then its answer times out (504). The key "
                "is kept, marked in doubt."
            ),
            N_("Press Retry: the key is in doubt, so nothing runs again (409)."),
        ),
        N_(
            "A timeout (or a 502) is ambiguous: the charge may have gone through. Releasing "
            "the key, as after a failure before the charge, would let the retry charge "
            "again; so the server keeps the key in doubt, and the client is left without "
            "an answer."
        ),
        N_(
            "Pass the key on to the gateway (Crash recovery: key to gateway), as in the "
            "crash lesson: a re-run is then safe either way, and the gateway returns the "
            "first charge."
        ),
        ("Pay", "Retry"),
        settings={"fault": "gateway_timeout"},
        fix={"fault": "gateway_timeout", "recovery": "downstream_key"},
        fix_badges=(N_("fix OFF: the key is kept in doubt"), N_("fix ON: key to gateway")),
        fix_steps=(
            N_(
                "Press Pay: the gateway charges, then its answer times out (504). The key "
                "went on to the gateway, so it is released."
            ),
            N_("Press Retry: the charge runs again, and the gateway returns the first one."),
        ),
    ),
    Scenario(
        "client-guard",
        N_("Client-side guard"),
        N_("Disable the button while a request is in flight, and see what it does not stop."),
        (
            N_("Press Double-submit: the guard lets only one request out."),
            N_(
                "Press New order, then open a second tab on this lab (a tab already open "
                "holds the old order: reload it), and press Pay in both tabs within 2 s."
            ),
        ),
        N_(
            "The guard stops a double click in one tab. It does not stop a second tab, a "
            "retry after a lost response, or a proxy's retry: with the lock off, those still "
            "charge twice. The server needs idempotency anyway."
        ),
        N_("Switch the per-key Lock on: duplicates from anywhere then replay."),
        ("Double-submit", "New order", "Pay from two tabs"),
        settings={"lock": False, "gateway_latency_ms": 2000},
        client={"guard": True},
        fix={"lock": True, "gateway_latency_ms": 2000},
        fix_client={"guard": True},
    ),
    Scenario(
        "email-once",
        N_("Send the receipt e-mail once"),
        N_("The money is safe after a crash; is the e-mail?"),
        (
            N_(
                "Press Pay: the gateway charges and the receipt e-mail goes out, then the "
                "instance crashes."
            ),
            N_("Press Retry."),
        ),
        N_(
            "The gateway deduplicated the charge on the key passed on to it, but the e-mail "
            "is our own side effect: the retry ran the handler again and sent it again."
        ),
        N_(
            "Write the e-mail to an outbox in the same atomic step as the idempotency record, "
            "and send it once per key, email_sent(key) (Receipt e-mail: outbox, in the "
            "Failure lab)."
        ),
        ("Pay", "Retry"),
        settings=dict(fault="crash_after_charge", recovery="downstream_key", email="inline"),
        fix={"fault": "crash_after_charge", "recovery": "downstream_key", "email": "outbox"},
        fix_badges=(N_("fix OFF: e-mail sent inline"), N_("fix ON: an outbox")),
        fix_steps=(
            N_(
                "Press Pay: the gateway charges, then the instance crashes before the record "
                "and its outbox e-mail are saved: no e-mail goes out."
            ),
            N_(
                "Press Retry: the gateway returns the first charge, the record and the outbox "
                "e-mail are saved together, and the e-mail goes out once."
            ),
        ),
    ),
)
