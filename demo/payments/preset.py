"""A scenario preset: what one lesson card holds (:class:`Scenario`).

The presets themselves, one per pitfall, are in :mod:`demo.payments.scenarios`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.settings import fix_set_by_hand
from ..engine.text import N_
from .settings import Settings

PAGE_BUTTONS = {
    "Pay": N_("Pay"),
    "Retry": N_("Retry"),
    "Retry with a new key": N_("Retry with a new key"),
    "Change amount": N_("Change amount & resend"),
    "Double-submit": N_("Double-submit"),
}
"""The order form's buttons that send a charge: their ``data-action`` (the request's
``X-Lab-Action``, a Double-submit's lane cut off) to their labels (untranslated): the
order form draws them from here."""

LOCK_BADGES = (N_("fix OFF: Lock off"), N_("fix ON: Lock on"))
"""The badge of every case the per-key Lock fixes (the race, step mode, the client guard)."""


@dataclass(frozen=True)
class Scenario:
    """One lesson card.

    :param settings: lab settings on top of the defaults (the failure switched on).
    :param client: the page's client switches: ``key_strategy`` (``"stable"``,
        ``"random"`` or ``"none"``) and ``guard`` (bool).
    :param script: the buttons to click, by their ``data-action`` names.
    :param fix: the settings (and ``fix_client``: the client switches) that fix it;
        ``fix_script`` the clicks with the fix, when they differ.
    """

    name: str
    title: str
    goal: str
    steps: tuple[str, ...]
    why: str
    fix_text: str
    script: tuple[str, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)
    client: Mapping[str, Any] = field(default_factory=dict)
    fix: Mapping[str, Any] = field(default_factory=dict)
    fix_client: Mapping[str, Any] = field(default_factory=dict)
    fix_script: tuple[str, ...] = ()
    fix_steps: tuple[str, ...] = ()
    fix_note: str = ""
    """A "go further" note shown after the fixed steps, not numbered as a step."""
    fix_link: str = ""
    """The scenario the note leads to, by name: the card links it by its title."""
    fix_goal: str = ""
    """The goal once the fix (or a defence's second case) is on, when it is another one."""
    fix_badges: tuple[str, ...] = ()
    """The badge's words off and on, when "fix OFF" would read as a server setting failing
    (lesson 1's fix is the client's key, while the Lock beside it reads ON)."""
    defence: bool = False
    """The point is that the defence works (a refusal, a replayed decline): the card
    frames it as "what protects you", with "the other case" in place of a fix."""

    def clicks(self, fixed: bool) -> tuple[str, ...]:
        """The buttons to click, with the fix applied or not."""
        return (self.fix_script or self.script) if fixed else self.script

    def fix_set_by_hand(self, settings: Mapping[str, Any]) -> bool:
        """Whether the lab's ``settings`` (as :meth:`Settings.as_dict` gives them) already
        hold every setting the fix changes, the fix not applied: the attendee ticked it
        by hand (lesson 4's Lock). Never for a fix of the client's switches or clicks,
        which the server does not see."""
        if self.fix_client or self.fix_script:
            return False
        return fix_set_by_hand(self.settings, self.fix, settings)

    def toward_fix(self, settings: Mapping[str, Any]) -> bool:
        """Whether every case setting the lab's ``settings`` lost by hand now holds the
        fix's value: the fix (a defence's second case) being set by hand, one switch at a
        time (run AA: lesson 9's Gateway declines unticked, as its second case says)."""
        lost = [k for k, v in self.settings.items() if k != "fault" and settings.get(k) != v]
        return bool(lost) and all(k in self.fix and self.fix[k] == settings.get(k) for k in lost)

    def goal_for(self, fixed: bool, goal: str) -> str:
        """The goal the card shows: ``goal`` (the lesson's or the scenario's), or the fixed
        run's own goal when it has one."""
        return self.fix_goal if fixed and self.fix_goal else goal

    def badge_for(self, fixed: bool) -> str:
        """The fix badge's words, with the fix applied or not (untranslated): its own,
        else the Lock's when the fix is the Lock, else a bare "fix ON"/"fix OFF"."""
        badges = self.fix_badges
        if not badges and self.settings.get("lock") is False and self.fix.get("lock"):
            badges = LOCK_BADGES
        if len(badges) == 2:
            return badges[1 if fixed else 0]
        return N_("fix ON") if fixed else N_("fix OFF")

    def pressed_first(self, actions: Iterable[str]) -> tuple[str, str] | None:
        """``(step, pressed)``: the button the case's steps begin with and the one the lab's
        first request came from, as labels (untranslated), when they differ (lesson 2:
        Retry with a new key before Pay took the lost response, and Pay replayed it).
        ``None`` when they match, or the request came from no page button (the API)."""
        first = next(iter(actions), "").removesuffix(" A").removesuffix(" B")
        step = self.script[0] if self.script else ""
        if first == step or first not in PAGE_BUTTONS or step not in PAGE_BUTTONS:
            return None
        return PAGE_BUTTONS[step], PAGE_BUTTONS[first]

    def steps_for(self, fixed: bool) -> tuple[str, ...]:
        """The steps the card lists, with the fix applied or not."""
        return (self.fix_steps or self.steps) if fixed else self.steps

    def fault_to_arm(
        self, settings: Settings, ran: Iterable[Settings | None], by_hand: bool = True
    ) -> Any:
        """The case's fault (``"crash_after_charge"`` …) when the lab's ``settings`` no longer
        arm it and none of the requests that ``ran`` (their settings on arrival) met it
        (``by_hand``: met it with the fix set by hand): it fires once, so a fix set by hand
        on a lab whose fault has fired, or a lab emptied by Reset after it fired, needs it
        armed again before its steps. ``None`` otherwise."""
        fault = self.settings.get("fault")
        if fault is None or settings.fault == fault:
            return None
        met = (
            s and s.fault == fault and (not by_hand or self.fix_set_by_hand(s.as_dict()))
            for s in ran
        )
        return None if any(met) else fault

    def case_changed(self, settings: Mapping[str, Any], fixed: bool) -> bool:
        """Whether the lab's ``settings`` (as :meth:`Settings.as_dict` gives them) lost one
        of the case's own (with ``fixed``, the fix's) by hand: lesson 9's Gateway declines
        unticked, whose steps then say "the gateway declines (402)" of a Pay that charges.
        A fix set by hand (:meth:`fix_set_by_hand`) and a one-shot fault that fired (it
        returns to ``"none"``) are not this: the card says those its own way."""
        if not fixed and self.fix_set_by_hand(settings):
            return False
        wanted = {**self.settings, **(self.fix if fixed else {})}
        return any(settings.get(k) != v for k, v in wanted.items() if k != "fault")
