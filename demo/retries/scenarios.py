"""The retry lab's scenarios, as data: the policy and fault plan (or the storm) each sets,
the clicks that show the pitfall, what the fix changes, and what should be seen with it.

``script`` names the page's buttons by their ``data-action``: ``"run"`` (one charge through
the retrying client) and ``"storm"`` (the simulator). :meth:`Scenario.expected` is the
expected-vs-actual pair the card shows, computed from the lab's last run or storm.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.text import N_, Text
from .policy import MISTAKES, SAFE_TO_RETRY


@dataclass(frozen=True)
class Scenario:
    """One card of the retry lab.

    :param policy: the policy's members this scenario sets (on the defaults).
    :param faults: the fault plan of each run.
    :param storm: the storm request (see :mod:`.storm_input`), for a storm scenario.
    :param fix_policy: the policy's members the fix changes; ``fix_storm`` the storm's,
        ``fix_faults`` the fault plan (empty: the same plan).
    :param fix_steps: the steps with the fix on (empty: ``steps``): they describe the lab
        as it is then.
    :param watch: with ``"strategy": "all"``, the strategy whose numbers the card reads;
        ``watch_steps`` the steps once it alone is chosen by hand (it holds the fix).
    :param expect: what the card checks, e.g. ``{"charges": 1}``, and ``fix_expect``
        with the fix; see :meth:`expected`.
    """

    name: str
    title: str
    goal: str
    steps: tuple[str, ...]
    why: str
    fix_text: str
    script: tuple[str, ...]
    policy: Mapping[str, Any] = field(default_factory=dict)
    faults: tuple[str | int, ...] = ()
    storm: Mapping[str, Any] = field(default_factory=dict)
    fix_policy: Mapping[str, Any] = field(default_factory=dict)
    fix_storm: Mapping[str, Any] = field(default_factory=dict)
    expect: Mapping[str, Any] = field(default_factory=dict)
    fix_expect: Mapping[str, Any] = field(default_factory=dict)
    fix_faults: tuple[str | int, ...] = ()
    fix_steps: tuple[str, ...] = ()
    watch: str = ""
    watch_steps: tuple[str, ...] = ()

    def steps_for(self, fixed: bool, watched: bool = False) -> tuple[str, ...]:
        """The steps, as the lab is with the fix applied or not; ``watched``: the watched
        strategy chosen by hand in its place (``watch_steps``, when the case has them)."""
        if watched and not fixed and self.watch_steps:
            return self.watch_steps
        return (self.fix_steps or self.steps) if fixed else self.steps

    def faults_for(self, fixed: bool) -> tuple[str | int, ...]:
        """The fault plan, with the fix applied or not (empty: the lab's default)."""
        return (self.fix_faults or self.faults) if fixed else self.faults

    def policy_for(self, fixed: bool) -> dict[str, Any]:
        """The policy members to set, with the fix applied or not."""
        return {**self.policy, **(self.fix_policy if fixed else {})}

    def storm_for(self, fixed: bool) -> dict[str, Any]:
        """The storm request, with the fix applied or not (empty: not a storm scenario)."""
        return {**self.storm, **(self.fix_storm if fixed else {})} if self.storm else {}

    def holds_fix(
        self, policy: Mapping[str, Any], storm: Mapping[str, Any], *, exact: bool = False
    ) -> bool:
        """Whether the lab's ``policy`` and last ``storm`` request hold what the fix
        changes, applied or set by hand (the card's badge says which). A retry budget
        counts whatever its numbers; a list (``retry_on``) when it leaves out what the fix
        takes away and the case's fault plan answers (its 400; the other 4xx codes the
        case never meets, as its checks do not). ``exact``: the fix's own storm only, not
        the watched strategy alone (the fix's steps describe its side-by-side charts)."""
        wanted = [(self._met(k, v), policy.get(k)) for k, v in self.fix_policy.items()]
        wanted += [(v, storm.get(k)) for k, v in self.fix_storm.items()]
        # The fix's Strategy "all" storms the watched one among the rest: chosen alone by
        # hand, that one holds the fix too (the lesson's check counts it either way).
        return bool(wanted) and all(
            _same(want, have) or (not exact and want == "all" and have == self.watch)
            for want, have in wanted
        )

    def switch(self) -> str:
        """The form's switch that holds the fix, for the page to follow as it moves:
        ``"same_key=on"`` (the box ticked), ``"retry_on=!400"`` (that box cleared), the
        storm's Strategy menu (``"strategy=all|full_jitter"``: the fix's choice, or the
        watched one alone, as :meth:`holds_fix` counts them) or its retry budget box
        (``"budget=on"``); empty for a fix of several members."""
        if not self.fix_policy and list(self.fix_storm) == ["budget"]:
            return "budget=on"
        if not self.fix_policy and list(self.fix_storm) == ["strategy"]:
            return "strategy=" + "|".join(filter(None, (self.fix_storm["strategy"], self.watch)))
        if len(self.fix_policy) != 1:
            return ""
        ((member, want),) = self.fix_policy.items()
        if want is True:
            return f"{member}=on"
        removed = self._met(member, want)
        if isinstance(removed, frozenset) and len(removed) == 1:
            return f"{member}=!{next(iter(removed))}"
        return ""

    def switch_control(self) -> tuple[str, str] | None:
        """The form's control that :meth:`switch` names, as the page finds it:
        ``(selector, "checked" | "unchecked")``, the state that holds the fix, or a menu's
        choices that do (``"all|full_jitter"``); ``None`` when there is no one switch."""
        member, _, want = self.switch().partition("=")
        if not member:
            return None
        form = "#storm-form" if member in self.fix_storm else "#policy-form"
        if member == "strategy":
            return f"{form} select[name='{member}']", want
        if want.startswith("!"):
            return f"{form} input[name='{member}'][value='{want[1:]}']", "unchecked"
        return f"{form} input[name='{member}']", "checked"

    def case_changed(self, policy: Mapping[str, Any], storm: Mapping[str, Any]) -> bool:
        """Whether the lab's ``policy`` or last ``storm`` request lost one of the case's own
        members by hand (the storm's clients: "the same 100 clients" then says what no
        longer is). The fix's members are the badge's business, not this."""
        case_policy = {k: v for k, v in self.policy.items() if k not in self.fix_policy}
        case_storm = {k: v for k, v in self.storm.items() if k not in self.fix_storm}
        return any(policy.get(k) != v for k, v in case_policy.items()) or any(
            storm.get(k) != v for k, v in case_storm.items()
        )

    def _met(self, member: str, want: Any) -> Any:
        """What of the fix's ``member`` the case can show: for a list, the items it takes
        away that the fault plan holds (as a set of items to leave out)."""
        if not isinstance(want, (list, tuple)):
            return want
        removed = set(self.policy.get(member, ())) - set(want)
        return frozenset(removed & set(self.faults) or removed)

    def expected(
        self, fixed: bool, run: Mapping[str, Any] | None, storm: Mapping[str, Any] | None
    ) -> list[dict[str, Any]]:
        """Each expected value next to the actual one: ``{"what", "expected", "actual",
        "met"}`` (``actual`` ``None`` before the first run or storm). ``what`` names a
        run member (``charges``, ``outcome``, ``attempts``), ``max_wait_ms`` (the longest
        wait of the run, at least the expected), or a storm member (``calls``,
        ``peak_load``: at most the expected)."""
        rows = []
        for what, want in (self.fix_expect if fixed else self.expect).items():
            got = _actual(what, run, storm)
            rows.append(
                {"what": what, "expected": want, "actual": got, "met": _met(what, want, got)}
            )
        return rows


def _actual(what: str, run: Mapping[str, Any] | None, storm: Mapping[str, Any] | None) -> Any:
    if what in ("calls", "peak_load"):
        return None if storm is None else storm.get(what)
    if run is None:
        return None
    if what == "attempts":
        return len(run["attempts"])
    if what == "max_wait_ms":
        return max((a["waited_ms"] for a in run["attempts"]), default=0)
    return run.get(what)


def _met(what: str, want: Any, got: Any) -> bool:
    if got is None:
        return False
    if what == "max_wait_ms":
        return bool(got >= want)
    if what in ("calls", "peak_load"):
        return bool(got <= want)
    return bool(got == want)


_ALL_SAFE = list(SAFE_TO_RETRY)

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "retry-policy",
            N_("Retrying what cannot succeed"),
            N_("See a 400 retried for nothing, and why a declined card is final."),
            (N_("Press Run: the server answers 400 to every attempt, and the client retries it."),),
            N_(
                "A 400 says the request itself is wrong, and a 402 that the card was declined: "
                "the same request gets the same answer, so each retry is wasted work."
            ),
            N_("Retry only what may succeed next time: a network error, 408, 429 and 5xx."),
            ("run",),
            policy={"retry_on": [*_ALL_SAFE, *MISTAKES], "strategy": "exponential"},
            faults=(400, 400, 400, 400),
            fix_policy={"retry_on": _ALL_SAFE},
            fix_steps=(
                N_(
                    "The fix retries only what may succeed, on the same plan: press Run, and "
                    "the client stops at the first 400, a final error."
                ),
                N_(
                    "If you like (the lesson does not check it): a declined card is final too; "
                    "pick 402 in the fault plan and press Run again: one attempt."
                ),
            ),
            expect={"attempts": 1, "outcome": "final_error"},
            fix_expect={"attempts": 1, "outcome": "final_error"},
        ),
        Scenario(
            "lost-response-retry",
            N_("A retry after a lost response"),
            N_("The charge happened, the answer was lost: is the retry safe?"),
            (
                N_(
                    "Press Run: the first attempt charges and its answer is lost; the client "
                    "retries with a new key."
                ),
            ),
            N_(
                "A new key is a new intent to the server: the retry charges again. The client "
                "could not know the first attempt had charged."
            ),
            N_("Keep the same key for every attempt: the server replays the first charge."),
            ("run",),
            policy={"same_key": False},
            faults=("lose_response", "ok"),
            fix_policy={"same_key": True},
            fix_steps=(
                N_(
                    "Press Run: the first attempt charges and its answer is lost; the client "
                    "retries with the same key, and the server replays the first charge."
                ),
            ),
            expect={"charges": 1},
            fix_expect={"charges": 1, "outcome": "replayed"},
        ),
        Scenario(
            "retry-after",
            N_("Retry-After ignored"),
            N_("The server said when to come back: does the client listen?"),
            (
                N_(
                    "Press Run: the server answers 429 with Retry-After: 3, and refuses again "
                    "any retry that comes sooner."
                ),
            ),
            N_(
                "The client waits only its own backoff and comes back before the server asked "
                "it to: each early retry is refused with 429 again, until the attempts run "
                "out and the client gives up."
            ),
            N_("Respect Retry-After: wait at least the seconds the server gave."),
            ("run",),
            policy={"respect_retry_after": False},
            faults=(429, "ok"),
            fix_policy={"respect_retry_after": True},
            fix_steps=(
                N_(
                    "Press Run: the server answers 429 with Retry-After: 3; the client waits "
                    "those 3 s, and the retry is served."
                ),
            ),
            expect={"max_wait_ms": 3000, "outcome": "charged"},
            fix_expect={"max_wait_ms": 3000, "outcome": "charged"},
        ),
        Scenario(
            "jitter",
            N_("Backoff without jitter"),
            N_("100 clients retry against one record: see the synchronised waves."),
            (
                N_(
                    "Press Storm: 100 clients contend, retrying with exponential backoff (the "
                    "storm form's own Strategy, under the policy: the policy's is one client's)."
                ),
            ),
            N_(
                "Clients that failed together back off by the same amounts and collide again, "
                "round after round: most of their calls are wasted."
            ),
            N_(
                "Add full jitter: a random wait up to the backoff spreads the clients out. "
                "The fix storms every strategy at once, so their charts sit side by side."
            ),
            ("storm",),
            storm={"model": "contention", "clients": 100, "strategy": "exponential", "seed": 1},
            fix_storm={"strategy": "all"},
            fix_steps=(
                N_(
                    "Press Storm: the same 100 clients with every strategy side by side, on "
                    "the same scales: exponential backoff in waves, full jitter spread out."
                ),
            ),
            watch="full_jitter",
            watch_steps=(
                N_(
                    "Press Storm: the same 100 clients with full jitter, as the storm form's "
                    "Strategy now holds: a random wait up to each backoff spreads them out, "
                    "no waves."
                ),
            ),
            expect={"calls": 1000},
            fix_expect={"calls": 1000},
        ),
        Scenario(
            "retry-budget",
            N_("A retry storm during an outage"),
            N_("The server is down for 10 s; 1,000 clients retry at once on every failure."),
            (N_("Press Storm: the clients retry without any wait until the server is back."),),
            N_(
                "Every failure is retried at once, so the load on a server that is already "
                "down is many times the real demand."
            ),
            N_(
                "Add a retry budget: when its tokens run out, the client gives up and the "
                "error goes back to the caller (Gave up counts them); a level above decides "
                "when to try again. The budget sheds load: the peak falls."
            ),
            ("storm",),
            storm={
                "model": "outage",
                "clients": 1000,
                "strategy": "none",
                "capacity_per_s": 100,
                "outage_s": 10,
                "seed": 1,
            },
            fix_storm={"budget": {"burst": 10, "per_s": 5}},
            fix_steps=(
                N_(
                    "Press Storm: the same outage, with one retry budget shared by all the "
                    "clients (the fix sets 10 tokens and 5 more a second): the retries stop "
                    "when the tokens run out."
                ),
            ),
            expect={"peak_load": 1000},
            fix_expect={"peak_load": 1000},
        ),
    )
}


def scenario_names() -> tuple[str, ...]:
    """The scenarios' names, in the chapter's order."""
    return tuple(SCENARIOS)


UNKNOWN = Text("Scenarios are: %(names)s.", names=", ".join(SCENARIOS))


def _same(want: Any, have: Any) -> bool:
    if isinstance(want, Mapping):
        return isinstance(have, Mapping)
    if isinstance(want, frozenset):  # items to leave out
        return isinstance(have, (list, tuple)) and not want & set(have)
    return bool(want == have)
