"""The operations lab's scenarios: one card each, with expected vs actual and the fix one
click away. ``expected`` and ``actual`` are read from what the lab really ran
(:meth:`~demo.natural.lab.NaturalLab.state`); the card only says what to look at.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.text import N_

SWITCHES = {"dedup": ("#ops-dedup", "checked"), "conditional": ("#lost-conditional", "checked")}
"""The page's box for each fix sent along with a request (``Scenario.fix``)."""


@dataclass(frozen=True)
class Scenario:
    """One card of the operations lab.

    :param name: the scenario's (and its lesson's) name, e.g. ``"set-vs-add"``.
    :param steps: what to click, without the fix and with it (``fix_steps``).
    :param fix_text: the fix, in a sentence; ``fix`` names what applying it switches on:
        ``"dedup"`` (the page's dedup switch), ``"conditional"`` (``If-Match``) or
        ``"window"`` (a 1800 s pixel dedup window).
    """

    name: str
    title: str
    goal: str
    steps: tuple[str, ...]
    why: str
    fix_text: str
    fix: str
    fix_steps: tuple[str, ...]
    script: tuple[str, ...] = ()
    """The steps as the page's buttons, by ``data-action``: what Next step (".") presses."""
    fix_script: tuple[str, ...] = ()
    """The same with the fix on, when they differ (empty: ``script``)."""

    def steps_for(self, fixed: bool) -> tuple[str, ...]:
        """The steps the card lists, with the fix applied or not."""
        return self.fix_steps if fixed else self.steps

    def clicks(self, fixed: bool) -> tuple[str, ...]:
        """The buttons Next step presses, with the fix applied or not."""
        return (self.fix_script or self.script) if fixed else self.script

    def switch_control(self) -> tuple[str, str] | None:
        """The page's box that holds the fix, as the card's badge follows it (templates/
        _partials/fix_state.html): ``(selector, "checked")``; ``None`` for the pixel's
        dedup window, a setting the server keeps."""
        return SWITCHES.get(self.fix)


FIX_WINDOW_S = 1800
"""The pixel dedup window the tracking-pixel scenario's fix sets, in seconds (30 min)."""

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "set-vs-add",
            N_("SET survives a retry, += does not"),
            N_("Retry SET balance = 100 and balance += 100 three times each, and compare."),
            (
                N_(
                    "Press Retry it on “SET balance = 100” once: it runs as many times as "
                    "Attempts says, and the balance ends at 100."
                ),
                N_(
                    "Press Retry it on “balance += 100” once: each attempt adds 100 (3 "
                    "attempts: 300)."
                ),
            ),
            N_(
                "SET names the final value, so a second SET lands on the same state. += names "
                "a change, and every retry applies it again."
            ),
            N_(
                "Put an “applied for key X?” dedup record in front: the retries find the key "
                "and get the first answer back."
            ),
            "dedup",
            (
                N_(
                    "With dedup on, press Retry it on “balance += 100” once: however many "
                    "attempts, the balance ends at 100."
                ),
            ),
            script=("Retry set_balance", "Retry add_balance"),
            fix_script=("Retry add_balance",),
        ),
        Scenario(
            "which-are-natural",
            N_("Which operations are naturally idempotent?"),
            N_("Retry every operation without dedup and sort them: natural, or needs a record."),
            (
                N_(
                    "Press Retry them all once (dedup off): each operation runs as many times "
                    "as Attempts says."
                ),
                N_("Look at DELETE /items/7: the retry answers 404, the state is the same."),
            ),
            N_(
                "A full PUT, a DELETE by id and setting a value name the final state. A "
                "transfer, an e-mail and an invoice number each do something new every time. "
                "Same state is not same response: the retried DELETE is idempotent and still "
                "answers 404."
            ),
            N_(
                "The ones that need a record get a dedup table in front: the retry replays the "
                "first answer (the DELETE's 204 too)."
            ),
            "dedup",
            (
                N_(
                    "With dedup on, press Retry them all once: every state stays as after one "
                    "attempt."
                ),
            ),
            script=("Retry them all",),
        ),
        Scenario(
            "lost-update",
            N_("A late retry undoes a newer write"),
            N_("A sets 100, B sets 50, then A's delayed retry arrives: what is the balance?"),
            (N_("Press Run the three writes, with If-Match off."),),
            N_(
                "SET balance = 100 is naturally idempotent, but only against itself: arriving "
                "after B's write, A's duplicate overwrites it. A lost update."
            ),
            N_(
                "A conditional write: each write carries If-Match with the ETag its client "
                "read; the late one's is stale and gets 412 (RFC 9110 §13.1.1)."
            ),
            "conditional",
            (N_("Press Run the three writes, with If-Match on: the late write gets 412."),),
            script=("Run the three writes",),
        ),
        Scenario(
            "tracking-pixel",
            N_("The GET that counts twice"),
            N_("Reload, prefetch and unfurl the article: how many views does one reader make?"),
            (
                N_("Press Reload the article, then Prefetch it: each request counts a view."),
                N_("Press Unfurl in a chat app: a request without the cookie is a new viewer."),
            ),
            N_(
                "GET is meant to be safe, but a view counter changes state on every GET, and "
                "browsers, prefetchers and chat apps repeat GETs freely."
            ),
            N_(
                "A dedup window per (viewer, post), the viewer told apart by a first-party "
                "cookie: repeated GETs within 30 minutes count once. The trade-off: two real "
                "visits within the window count once too."
            ),
            "window",
            (
                N_(
                    "With the 30 minutes window, press Unfurl in a chat app: its view counts "
                    "(no cookie: another viewer)."
                ),
                N_(
                    "Press Reload the article, then Prefetch it: the reader's views count "
                    "once, or not at all when the reader was counted in the last 30 minutes "
                    "(the first case too)."
                ),
                N_(
                    "Press +10 min on the clock, then Reload the article: a real second "
                    "visit, not counted either (the window's trade-off)."
                ),
            ),
            script=("Reload the article", "Prefetch it", "Unfurl in a chat app"),
            # The same GETs as the case's, so "with the fix" is the same number before and
            # after it; then the window's price.
            fix_script=(
                "Unfurl in a chat app",
                "Reload the article",
                "Prefetch it",
                "+10 min on the clock",
                "Reload the article",
            ),
        ),
    )
}
"""Every scenario of the operations lab, in the chapter's order."""
