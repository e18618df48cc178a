"""The queue lab's six scenarios, as data: the settings, the clicks the page runs (the
same clicks :meth:`~.lab.QueueLab.play` runs), what the attendee should expect against
what happens, and the fix one click away."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.settings import fix_set_by_hand
from ..engine.text import N_
from .jobs import EXAMPLE
from .settings import Settings

POISON_JOB: Mapping[str, Any] = {
    "id": "send-invoice-x",
    "idempotency_key": "invoice:x:email",
    "payload": {"invoice_id": "x"},
}
"""A job no handler can do (its invoice id is not a number): a poison message."""

NEXT_JOB: Mapping[str, Any] = {
    "id": "send-invoice-43",
    "idempotency_key": "invoice:43:email",
    "payload": {"invoice_id": 43},
}

Click = tuple[str, Any]
"""One click: ``("enqueue", job)``, ``("producer_retry", None)``, ``("work", None)``,
``("advance", seconds)``, ``("settings", changes)`` or ``("simulate", body)``."""

PAST_TIMEOUT = ("advance", 31)
"""Move the clock past the default 30 s visibility timeout."""


@dataclass(frozen=True)
class Scenario:
    """One scenario.

    :param measure: what is counted after the clicks (see :meth:`~.lab.QueueLab.measure`):
        ``"emails_per_key"`` (the most e-mails any one key got), ``"lost"`` (jobs acked
        with no e-mail: lost), ``"dead"`` (messages dead-lettered) or
        ``"duplicate_effects"`` (the last simulation's).
    :param expected: the value the attendee expects; the fixed run gives it.
    """

    name: str
    title: str
    story: str
    settings: Mapping[str, Any]
    fix: Mapping[str, Any]
    fix_text: str
    clicks: tuple[Click, ...]
    measure: str
    expected: int
    expected_text: str
    fix_clicks: tuple[Click, ...] | None = None
    tags: tuple[str, ...] = field(default=())

    def clicks_for(self, fixed: bool) -> tuple[Click, ...]:
        """The clicks the scenario plays, with its fix or not."""
        return self.fix_clicks if fixed and self.fix_clicks else self.clicks

    def holds_fix(self, settings: Mapping[str, Any], simulation_mode: str | None = None) -> bool:
        """Whether ``settings`` hold every setting the fix changes, whatever else the fix
        does (its own clicks, a lab started afresh); or, for a case played on the
        simulator, whether ``simulation_mode`` (its last run's) is the mode the fix runs
        (the idempotent consumer, chosen there by hand)."""
        if simulation_mode and simulation_mode == self.fix_mode():
            return True
        return fix_set_by_hand(self.settings, self.fix, settings)

    def holds_case(self, settings: Mapping[str, Any]) -> bool:
        """Whether ``settings`` hold the case's value of every setting the fix changes
        (its own, or the lab's default): "fix OFF: at-most-once" is true of them. False
        once one was changed by hand to something else (at-least-once without dedup)."""
        case = {**Settings().as_dict(), **self.settings}
        return all(settings.get(k) == case.get(k) for k in self.fix)

    def fix_mode(self) -> str | None:
        """The simulator's mode the fix runs (``"idempotent"``), or ``None`` for a case not
        played there: the card's badge and steps follow the simulator's Mode as it moves."""
        clicks = self.fix_clicks or ()
        return next((arg["mode"] for kind, arg in clicks if kind == "simulate"), None)

    def fix_set_by_hand(self, settings: Mapping[str, Any]) -> bool:
        """Whether the lab's ``settings`` (as :meth:`~.settings.Settings.as_dict` gives
        them) already hold every setting the fix changes, the fix not applied: Dedup
        ticked by hand. Never for a fix made of other clicks (``fix_clicks``)."""
        return self.fix_clicks is None and self.holds_fix(settings)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            name="redelivery",
            title=N_("Redelivery after a crash"),
            story=N_(
                "The worker sends the e-mail, passes its record step (which records the key "
                "only with dedup on), and crashes before the ack. The clock passes the "
                "visibility timeout and the broker delivers the message again."
            ),
            settings={"crash_at": "after_record"},
            fix={"dedup": True},
            fix_text=N_(
                "Turn on the consumer's dedup table: the redelivery finds the key "
                "completed, acks and sends nothing."
            ),  # fmt: skip
            clicks=(("enqueue", EXAMPLE), ("work", None), PAST_TIMEOUT, ("work", None)),
            measure="emails_per_key",
            expected=1,
            expected_text=N_("One e-mail for invoice:42:email."),
        ),
        Scenario(
            name="duplicate-job",
            title=N_("The producer enqueues the same job twice"),
            story=N_(
                "The producer never saw the broker's answer and sends the job again: two "
                "messages, one job id."
            ),
            settings={},
            fix={"dedup": True},
            fix_text=N_(
                "Turn on dedup: the second message carries the same idempotency "
                "key, so it is acked and skipped."
            ),  # fmt: skip
            clicks=(("enqueue", EXAMPLE), ("producer_retry", None), ("work", None), ("work", None)),
            measure="emails_per_key",
            expected=1,
            expected_text=N_("One e-mail for invoice:42:email."),
        ),
        Scenario(
            name="at-most-once",
            title=N_("At-most-once: the job that vanished"),
            story=N_(
                "The broker acks on receive, before the work. The worker crashes: the "
                "message is gone, no e-mail was sent, and no error shows anywhere."
            ),
            settings={"delivery": "at_most_once", "crash_at": "after_receive"},
            fix={"delivery": "at_least_once", "dedup": True},
            fix_text=N_(
                "Ack after the work (at-least-once), with dedup: the crash means a "
                "redelivery, not a loss."
            ),  # fmt: skip
            clicks=(("enqueue", EXAMPLE), ("work", None), PAST_TIMEOUT, ("work", None)),
            measure="lost",
            expected=0,
            expected_text=N_("No job without its e-mail."),
        ),
        Scenario(
            name="outbox",
            title=N_("The crash window, and the outbox"),
            story=N_(
                "Dedup is on, and the worker crashes between the e-mail and its dedup "
                "record. The redelivery finds no record and sends again."
            ),
            settings={"dedup": True, "crash_at": "after_effect"},
            fix={"outbox": True, "provider_dedup": True},
            fix_text=N_(
                "Write the e-mail to the outbox in the same atomic step as the dedup "
                "record, and let the relay pass a stable message id the provider "
                "dedups on. The fix's run then crashes the relay too, after sending and "
                "before marking the row sent: still one e-mail."
            ),  # fmt: skip
            clicks=(("enqueue", EXAMPLE), ("work", None), PAST_TIMEOUT, ("work", None)),
            # The relay's crash only with the fix: without the outbox there is no relay.
            fix_clicks=(
                ("enqueue", EXAMPLE),
                ("work", None),
                PAST_TIMEOUT,
                ("work", None),
                ("settings", {"crash_at": "relay_after_send"}),
                ("enqueue", NEXT_JOB),
                ("work", None),
                ("work", None),
            ),  # fmt: skip
            measure="emails_per_key",
            expected=1,
            expected_text=N_("One e-mail per invoice."),
        ),
        Scenario(
            name="delivery-semantics",
            title=N_('Delivery semantics: what "exactly-once" is'),
            story=N_(
                "10,000 messages over a link that loses one message in five and one ack in five, "
                "at-least-once: nothing is lost, and every lost ack repeats a side effect."
            ),
            settings={},
            fix={"dedup": True},  # the idempotent consumer: the page's switch says so too
            fix_text=N_(
                "Exactly-once is at-least-once delivery plus an idempotent consumer: "
                "run it again with the idempotent consumer."
            ),  # fmt: skip
            clicks=(
                (
                    "simulate",
                    {
                        "mode": "at_least_once",
                        "messages": 10000,
                        "loss": 0.2,
                        "ack_loss": 0.2,
                        "seed": 42,
                    },
                ),
            ),  # fmt: skip
            fix_clicks=(
                (
                    "simulate",
                    {
                        "mode": "idempotent",
                        "messages": 10000,
                        "loss": 0.2,
                        "ack_loss": 0.2,
                        "seed": 42,
                    },
                ),
            ),  # fmt: skip
            measure="duplicate_effects",
            expected=0,
            expected_text=N_("No duplicate side effect, and no message lost."),
        ),
        Scenario(
            name="poison-message",
            title=N_("A poison message"),
            story=N_(
                "A job the handler can never do (its invoice id is not a number) fails on "
                "every delivery and comes back after every visibility timeout."
            ),
            settings={"max_attempts": 10},
            fix={"max_attempts": 3},
            fix_text=N_(
                "Let the broker give up after 3 receives: the message goes to the "
                "dead-letter queue, where someone can look at it."
            ),  # fmt: skip
            clicks=(
                ("enqueue", POISON_JOB),
                ("work", None),
                PAST_TIMEOUT,
                ("work", None),
                PAST_TIMEOUT,
                ("work", None),
                PAST_TIMEOUT,
                ("work", None),
            ),  # fmt: skip
            measure="dead",
            expected=1,
            expected_text=N_("The poison message in the dead-letter queue."),
        ),
    )
}
