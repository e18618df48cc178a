"""The operations lab's HTTP API: ``/lab/<lab_id>/natural/api/…`` (JSON) and the tracking
pixel ``/lab/<lab_id>/natural/pixel.gif``. An htmx request gets the page's fragment that
shows the answer instead of JSON (``Vary: HX-Request``)."""

from __future__ import annotations

import base64
from typing import Any

from flask import Response, g, jsonify, request

from ...natural.lab import NaturalLab
from ...natural.pixel import parse_post
from ...payments.charges import parse_json
from .. import is_htmx, json_body, lab_to_read, lab_to_write, read_only_problem
from . import bp
from .views import fragment

PIXEL_GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
"""A transparent 1×1 GIF (42 bytes)."""

VIEWER_COOKIE = "natural_viewer"
"""The first-party cookie that tells one viewer from another (a random id, no more)."""

VIEWER_COOKIE_MAX_AGE_S = 30 * 24 * 3600
"""How long a browser keeps the viewer cookie, in s (30 days)."""


def natural_lab(write: bool) -> NaturalLab:
    """The operations lab of the request's workspace (made by a write, else only read)."""
    workspace = lab_to_write(g.lab_id) if write else lab_to_read(g.lab_id)
    g.lab = workspace
    lab: NaturalLab = workspace.natural
    return lab


def _answer(payload: dict[str, Any], part: str) -> Response:
    response = fragment(g.lab, part) if is_htmx() else jsonify(payload)
    response.vary.add("HX-Request")
    return response


@bp.post("/api/apply")
def apply() -> Response:
    """Apply an operation once, then retry it ``times - 1`` times:
    ``{"operation", "times": 1-10, "dedup": bool, "key"?}`` → 200 with the attempts, the
    final state and ``natural``; 400 (not JSON), 415, 422 (a bad member)."""
    body = parse_json(json_body())
    run = natural_lab(write=True).apply(body)
    return _answer(run.as_dict(), "operations")


@bp.post("/api/delayed-duplicate")
def delayed_duplicate() -> Response:
    """The lost update: ``{"conditional": bool}`` → 200 with the three writes and
    ``final_balance`` (100 unconditional; 50 with If-Match, the late write answered 412)."""
    body = parse_json(json_body())
    lab = natural_lab(write=True)
    lab.delayed(body)
    entry = lab.last("delayed-duplicate")
    assert entry is not None
    return _answer(entry.result, "lost_update")


@bp.get("/api/state")
def state() -> Response:
    """``{"views": {"42": n}, "settings": {"pixel_dedup_window_s": s}, "scenario", "fixed",
    "requests"}``: what the lab holds. Changes nothing."""
    response = jsonify(natural_lab(write=False).state())
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.patch("/api/settings")
def update_settings() -> Response:
    """``{"pixel_dedup_window_s": 0-86400}`` (s): 200 with the settings, or 400/415/422."""
    changes = parse_json(json_body())
    settings = natural_lab(write=True).update_settings(changes)
    return _answer(settings, "pixel")


@bp.get("/pixel.gif")
def pixel() -> Response:
    """The tracking pixel: counts a view of ``?post=<id>`` and answers a 1×1 GIF
    (``Cache-Control: no-store``). **This GET changes state, on purpose**: it is the
    pitfall the lab teaches (RFC 9110 §9.2.1 asks a GET to be safe; a view counter is
    not), and the only GET of the lab that changes anything, or makes a lab.

    The viewer is the ``natural_viewer`` cookie (HttpOnly, SameSite=Lax, its path the
    lab's); without a valid one the request is a new viewer, and the answer sets one.
    ``Sec-Purpose: prefetch`` (or ``Purpose: prefetch``) is logged, and counted like any
    other GET. 422 for a bad ``post`` (not one positive integer without leading zeros,
    or given twice); 409 in a read-only replay. A HEAD is answered like the GET and
    counts nothing (RFC 9110 §9.3.2).
    """
    posts = request.args.getlist("post")
    post: object = posts[0] if len(posts) == 1 else posts  # ?post=1&post=2: 422
    if request.method == "HEAD":
        # HEAD is safe (RFC 9110 §9.3.2): the GET's answer, nothing counted or made.
        parse_post(post)
        return _gif()
    workspace = lab_to_write(g.lab_id)
    if workspace.read_only:
        raise read_only_problem()
    g.lab = workspace
    lab: NaturalLab = workspace.natural
    viewer = request.cookies.get(VIEWER_COOKIE)
    purpose = f"{request.headers.get('Sec-Purpose', '')} {request.headers.get('Purpose', '')}"
    view = lab.view_pixel(post, viewer, prefetch="prefetch" in purpose)
    response = _gif()
    response.headers["Cache-Control"] = "no-store"
    if view.new_viewer:
        response.set_cookie(
            VIEWER_COOKIE,
            view.viewer,
            max_age=VIEWER_COOKIE_MAX_AGE_S,
            path=f"/lab/{workspace.id}/natural",
            httponly=True,
            samesite="Lax",
        )
    return response


def _gif() -> Response:
    response = Response(PIXEL_GIF, 200, mimetype="image/gif")
    response.headers["Cache-Control"] = "no-store"
    return response
