"""``explain()``: find the request to explain, read its outcome, and hand it to the module
that explains that situation."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..gateway import LedgerSummary
from ..requests import RequestEntry
from ..settings import Settings
from .charged import charged
from .explanation import Explanation
from .gateway_failures import gateway_failure
from .no_answer import crashed, lost_response
from .refused import in_use, invalid, other_body
from .replayed import recovered, replayed
from .waiting import waiting


def explain(
    entries: Sequence[RequestEntry],
    summary: LedgerSummary,
    focus: RequestEntry | None = None,
    settings: Settings | None = None,
    emails: int = 0,
    first_click: str = "Pay",
    *,
    in_scenario: bool = False,
    order_now: str | None = None,
    kept_keys: Collection[str] | None = None,
    now_s: float | None = None,
) -> Explanation:
    """Explain ``focus`` (default: the latest finished request) among ``entries``.

    :param entries: the lab's request log, oldest first.
    :param summary: the ledger summary, to name double charges.
    :param settings: the lab's settings now (TTL, store scope), to name causes.
    :param emails: receipt e-mails sent so far.
    :param first_click: the open lesson's first button (``data-action`` name), which
        the hint before any request names.
    :param in_scenario: a scenario's card is open: the hint before any request points to
        its steps, which name each button.
    :param order_now: the order the page's form holds now (after New order).
    :param kept_keys: the keys with a live record in a store (none expired among them),
        and ``now_s`` the lab's clock (s, as :attr:`RequestEntry.at`). They keep the
        advice on the next click true; ``None``: not known.
    """
    settings = settings or Settings()
    if focus is None:
        focus = next((e for e in reversed(entries) if e.finished is not None), None)
    if focus is None or focus.finished is None:
        return waiting(focus, entries, settings, first_click, in_scenario=in_scenario)
    answered = _answered(focus, entries, summary, settings, emails, order_now)
    if answered is None:
        return charged(
            focus,
            entries,
            summary,
            settings,
            order_now=order_now,
            kept_keys=kept_keys,
            now_s=now_s,
        )
    return answered


def _answered(
    focus: RequestEntry,
    entries: Sequence[RequestEntry],
    summary: LedgerSummary,
    settings: Settings,
    emails: int,
    order_now: str | None = None,
) -> Explanation | None:
    """A finished request, by its outcome; ``None`` when it charged (see :func:`charged`).
    A crash comes first: nothing was delivered."""
    if focus.outcome == "crashed":
        return crashed(focus, summary.doubled)
    if not focus.delivered:
        return lost_response(focus)
    if focus.outcome == "in_use":
        return in_use(focus, focus.settings or settings)
    if focus.outcome == "invalid":
        return invalid(focus)
    if focus.outcome == "conflict":
        return other_body(focus, entries)
    if focus.outcome in ("declined", "error", "in_doubt"):
        return gateway_failure(focus)
    if focus.outcome == "replayed":
        return replayed(focus, entries, summary, order_now)
    if focus.outcome == "recovered":
        return recovered(focus, entries, summary, settings, emails)
    return None
