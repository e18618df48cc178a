"""What the workspace needs of every lab: a name, scenarios, a reset, and its state.

A lab is one package beside ``demo/payments/`` (``demo/queue/``, ``demo/natural/``, …)
that satisfies :class:`Lab`. The workspace makes each lab with the clock the labs share
(:class:`~demo.engine.clock.VirtualClock`), a ``touch`` callback (called after every
change, so open pages catch up) and a ``finished`` callback (called when a request the
lab handled has ended, so the open lesson's checks run). A lab never imports another lab,
the workspace, the lessons or the web layer.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Lab(Protocol):
    """One lab of a workspace, as the workspace and the lessons path see it."""

    name: str
    """The lab's name: its key in the workspace's labs, its URL segment
    (``/lab/<id>/<name>``) and its lessons' ``Lesson.lab``."""

    @property
    def scenario(self) -> Any:
        """The open scenario (an object with ``name`` and ``title``), or ``None``."""

    def apply_scenario(self, name: str, *, fixed: bool = False) -> Any:
        """Start scenario ``name`` afresh (with its fix if ``fixed``); returns it.

        :raises ~demo.engine.problems.Problem: 404 for an unknown scenario name.
        """

    def leave_scenario(self) -> None:
        """Back to the free lab: default settings, results kept."""

    def reset(self) -> None:
        """Start afresh: empty logs and results; the settings stay."""

    def is_blank(self) -> bool:
        """True while the lab holds nothing a fresh one would not."""

    def state(self) -> dict[str, Any]:
        """Everything the lab holds, as JSON-ready values."""
