"""The tracking pixel: a GET that counts a view, and the dedup window that tames it.

RFC 9110 §9.2.1 calls GET *safe*: the client asks for no change. A view counter behind an
``<img>`` changes something all the same, and browsers, prefetchers and chat apps that
unfurl a link repeat GETs freely: every reload, retry and prefetch counts again. That is
the pitfall this lab shows, on purpose. The fix is a short dedup window per (viewer,
post): the viewer is told apart by a first-party cookie, and a view within the window of
that viewer's last counted view of that post is not counted again. Its trade-off: two
real visits within the window count once too.

Plain Python, no web framework. Memory is bounded: :data:`MAX_POSTS` counters and
:data:`MAX_SEEN` (viewer, post) windows, the oldest window dropped first.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

from ..engine.clock import Clock
from ..engine.problems import Problem
from ..engine.text import N_, Text

MAX_POSTS = 50
"""Posts with a counter, at most; a pixel for one more post is answered 422."""

MAX_SEEN = 1000
"""(viewer, post) windows kept, at most; past it the oldest is forgotten (that viewer's
next view of that post counts again: a dedup window is a best effort, not a ledger)."""

MAX_WINDOW_S = 86400
"""The longest dedup window, in seconds (a day)."""

POST_PATTERN = r"^[1-9][0-9]{0,8}(?!\n)$"
"""A post id: a positive integer of 1-9 digits without leading zeros (``42``; not
``042`` or ``0``, so one post has one counter)."""
_POST = re.compile(POST_PATTERN)

VIEWER_PATTERN = r"^[A-Za-z0-9_-]{16}(?!\n)$"
"""A viewer id as the pixel's cookie carries it: 16 URL-safe characters, random."""
_VIEWER = re.compile(VIEWER_PATTERN)


def parse_post(value: object) -> str:
    """Check the pixel's ``post`` query value; returns it.

    :raises Problem: 422 unless it is one positive integer of 1-9 digits without leading
        zeros (a repeated ``post`` arrives here as a list: 422 too).
    """
    if not isinstance(value, str) or not _POST.match(value):
        raise Problem(
            422,
            "invalid-post",
            N_("Invalid post"),
            N_("post must be one positive whole number without leading zeros, e.g. ?post=42."),
            errors={"post": "must be one positive integer of 1-9 digits, no leading zero"},
        )
    return value


def parse_window(value: object) -> int:
    """Check a ``pixel_dedup_window_s`` value; returns it (seconds).

    :raises Problem: 422 unless it is an integer from 0 to 86400 (``true``, ``60.0`` are not).
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_WINDOW_S:
        raise Problem(
            422,
            "invalid-settings",
            N_("Invalid settings"),
            Text("pixel_dedup_window_s must be an integer from 0 to %(high)s.", high=MAX_WINDOW_S),
            errors={"pixel_dedup_window_s": f"must be an integer from 0 to {MAX_WINDOW_S}"},
        )
    return value


@dataclass(frozen=True)
class View:
    """What one pixel request did: the ``viewer`` id (new when ``new_viewer``), its
    ``viewer_no`` (1 for the first viewer the lab saw: what the page shows instead of the
    cookie), whether it was ``counted``, the post's ``views`` after it, and, when not
    counted, ``since_s``: seconds since the view the window counted."""

    post: str
    viewer: str
    viewer_no: int
    new_viewer: bool
    counted: bool
    views: int
    window_s: int
    since_s: float | None


class Pixel:
    """View counters per post with a per-(viewer, post) dedup window on ``clock`` (s).

    Thread-safe. ``window_s`` 0 counts every request: the pitfall.
    """

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.window_s = 0
        self._guard = threading.Lock()
        self.views: dict[str, int] = {}
        self._seen: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._viewers: OrderedDict[str, int] = OrderedDict()
        self._viewer_count = 0

    def view(self, post: str, viewer: str | None) -> View:
        """Count a view of ``post`` (checked by :func:`parse_post`) by ``viewer`` (the
        cookie's value; ``None`` or not a valid id: a new viewer, whose id the response
        should set as the cookie).

        :raises Problem: 422 when :data:`MAX_POSTS` posts have counters and ``post`` is
            another one.
        """
        with self._guard:
            if post not in self.views and len(self.views) >= MAX_POSTS:
                raise Problem(
                    422,
                    "too-many-posts",
                    N_("Too many posts"),
                    Text("This lab counts views of %(most)s posts at most.", most=MAX_POSTS),
                    errors={"post": f"at most {MAX_POSTS} posts have counters"},
                )
            new = viewer is None or not _VIEWER.match(viewer)
            who = secrets.token_urlsafe(12) if new or viewer is None else viewer
            now = self.clock()
            last = self._seen.get((who, post))
            counted = self.window_s == 0 or last is None or now - last >= self.window_s
            if counted:
                self.views[post] = self.views.get(post, 0) + 1
                self._seen[(who, post)] = now
                self._seen.move_to_end((who, post))
                while len(self._seen) > MAX_SEEN:
                    self._seen.popitem(last=False)
            return View(
                post,
                who,
                self._number(who),
                new,
                counted,
                self.views.get(post, 0),
                self.window_s,
                None if counted or last is None else now - last,
            )

    def _number(self, viewer: str) -> int:
        number = self._viewers.get(viewer)
        if number is None:
            self._viewer_count += 1
            number = self._viewer_count
        self._viewers[viewer] = number
        self._viewers.move_to_end(viewer)
        while len(self._viewers) > MAX_SEEN:
            self._viewers.popitem(last=False)
        return number

    def counts(self) -> dict[str, int]:
        """Views per post, e.g. ``{"42": 3}``."""
        with self._guard:
            return dict(self.views)

    def clear(self) -> None:
        """Forget every counter and window (the window setting stays)."""
        with self._guard:
            self.views.clear()
            self._seen.clear()
            self._viewers.clear()
            self._viewer_count = 0
