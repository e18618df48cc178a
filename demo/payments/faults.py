"""What goes wrong in the payment lab, and the problem each failure answers with: the
injected crash, the gateway's failures, a full store, a missing key."""

from __future__ import annotations

from ..engine.problems import Problem
from ..engine.text import N_, Text
from .gateway import GatewayError
from .requests import RequestEntry
from .store import Response


class InstanceCrash(BaseException):
    """The instance serving a request died at a step boundary (a fault the lab injects).

    A ``BaseException``, like ``SystemExit``: no ``except Exception`` clean-up runs, as
    none would in a process that died.
    """

    def __init__(self, step: str) -> None:
        super().__init__(step)
        self.step = step


def gateway_failed(exc: GatewayError) -> Response:
    problem = Problem(
        502,
        "gateway-error",
        N_("Payment gateway failed"),
        Text(
            "The gateway failed before charging (%(why)s). "
            "The key was released: retry with the same key.",
            why=Text(str(exc)),  # the reason was marked where it was raised
        ),
    )
    return Response.of_problem(problem)


def gateway_timed_out(entry: RequestEntry) -> Response:
    """504: the gateway may have charged. What a retry does depends on the key's fate."""
    if entry.key is None:
        detail = N_(
            "The gateway did not answer in time, after the charge had left: it may have "
            "charged. No key was sent, so nothing stops a retry from charging again."
        )
    else:
        detail = timed_out_with_key(entry.step("release") is not None)
    return Response.of_problem(
        Problem(504, "gateway-timeout", N_("Payment gateway timed out"), detail)
    )


def timed_out_with_key(released: bool) -> str:
    return (
        N_(
            "The gateway did not answer in time, after the charge had left: it may have "
            "charged. The key went on to the gateway, so it was released: a retry with the "
            "same key gets the first charge back, never a second one."
        )
        if released
        else N_(
            "The gateway did not answer in time, after the charge had left: it may have "
            "charged. The key is kept, marked in doubt: a retry with it charges nothing until "
            "the outcome is known."
        )
    )


def store_full() -> Problem:
    return Problem(
        503,
        "store-full",
        N_("Idempotency store full"),
        N_(
            "Every record of this lab's store is a request still in progress. Retry with the "
            "same key once the oldest one's deadline has passed."
        ),
    )


def internal_error() -> Problem:
    return Problem(
        500,
        "internal-error",
        N_("Internal error"),
        N_("Something went wrong in the lab itself."),
    )


def missing_key() -> Problem:
    return Problem(
        400,
        "missing-idempotency-key",
        N_("Idempotency-Key required"),
        N_(
            "This endpoint requires an Idempotency-Key header (IETF draft: 400 when it is missing)."
        ),
    )


def no_response() -> Response:
    """What a server without a socket to close sends instead of no response at all."""
    problem = Problem(
        502,
        "no-response",
        N_("No response"),
        N_("The connection closed before any response: the client cannot tell whether it charged."),
    )
    return Response.of_problem(problem)


def card_declined() -> Response:
    """402: the gateway declined the card, a final business answer (stored, replayed)."""
    declined = Problem(
        402,
        "card-declined",
        N_("Card declined"),
        N_("The gateway declined the card. Retrying will not change the answer."),
        code="card_declined",
    )
    return Response.of_problem(declined)
