"""Every error leaves as ``application/problem+json`` (RFC 9457): never a 500 page or a
traceback. htmx requests also get ``HX-Reswap: none`` and an ``HX-Trigger`` event, so the
page shows the problem without swapping JSON into a panel."""

from __future__ import annotations

import json

from flask import Flask, Response, current_app, g, render_template, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from ..engine.problems import PROBLEM_JSON, Problem
from ..engine.text import N_, Text
from . import is_htmx
from .nav import PAGES

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

SUBRESOURCE_TYPES = frozenset({"text/javascript", "application/javascript", "text/css"})
"""Types a browser only runs or applies inside a page, under that page's policy."""

_SLUGS = {
    400: "bad-request",
    404: "not-found",
    405: "method-not-allowed",
    413: "body-too-large",
    415: "unsupported-media-type",
}

_TITLES = {
    400: N_("Bad Request"),
    404: N_("Not Found"),
    405: N_("Method Not Allowed"),
    413: N_("Request too large"),  # Werkzeug's "Request Entity Too Large" read as jargon
    415: N_("Unsupported Media Type"),
}
"""Werkzeug's names of the errors the lab meets, marked for translation."""


def register(app: Flask) -> None:
    """Install the problem+json error handlers and the security headers on ``app``."""
    app.register_error_handler(Problem, problem_response)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(Exception, _unexpected)
    app.after_request(_security_headers)


def problem_response(problem: Problem) -> Response:
    """The response for ``problem``: problem+json, or an HTML page for a browser's navigation."""
    # A browser's navigation (a link, or a form such as the history upload) gets a page.
    if not is_htmx() and _wants_html():
        html = render_template("error.html", problem=problem.to_dict(), back=_back_to_lab())
        response = Response(html, problem.status, mimetype="text/html")
    else:
        response = Response(problem.body(), problem.status, mimetype=PROBLEM_JSON)
    if problem.retry_after_s is not None:
        response.headers["Retry-After"] = str(problem.retry_after_s)
    if is_htmx():
        body = problem.to_dict()
        event = {"title": body["title"], "detail": body["detail"], "status": problem.status}
        response.headers["HX-Reswap"] = "none"
        response.headers["HX-Trigger"] = json.dumps({"lab-problem": event})
    return response


def _back_to_lab() -> str | None:
    """The page of the lab a refused navigation came from (``/lab/<id>/queue?lesson=nope``:
    ``/lab/<id>/queue``, which a GET shows unchanged), when that lab exists; ``None``
    otherwise. "Open a fresh lab" alone led away from the attendee's own lab (run L). A
    refused replay file names its lab in ``?from=`` (run P: no way back but the browser's)."""
    # Some blueprints move lab_id from the view's arguments to g.lab_id.
    lab_id = (request.view_args or {}).get("lab_id") or g.get("lab_id")
    if request.endpoint == "workshop.replay":
        lab_id = request.args.get("from")
    if not isinstance(lab_id, str) or current_app.extensions["labs"].peek(lab_id) is None:
        return None
    for page in PAGES.values():
        if request.endpoint == page.endpoint and request.method == "GET":
            return request.path
    return PAGES["payments"].url(lab_id)


def _http_error(exc: HTTPException) -> Response:
    code = exc.code or 500
    details: dict[int, str | Text] = {
        404: N_("There is nothing at this address."),
        405: Text("%(method)s is not allowed here.", method=request.method),
        413: Text(
            "The request is larger than %(limit)s bytes (16 KiB), the most the lab takes: "
            "nothing was run or changed.",
            limit=request.max_content_length,
        ),
        415: N_("Send the body as application/json."),
    }
    detail = details.get(code, exc.description or exc.name)
    title = _TITLES.get(code, exc.name)
    response = problem_response(Problem(code, _SLUGS.get(code, "http-error"), title, detail))
    if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
        # RFC 9110 §15.5.6: a 405 lists the methods the resource allows.
        response.headers["Allow"] = ", ".join(sorted(exc.valid_methods))
    return response


def _unexpected(exc: Exception) -> Response:
    # A bug of ours: log it here, and show the client no traceback.
    from flask import current_app

    current_app.logger.exception("unexpected error")
    return problem_response(
        Problem(
            500,
            "internal-error",
            N_("Internal error"),
            N_("Something went wrong in the lab itself."),
        )
    )


def _wants_html() -> bool:
    best = request.accept_mimetypes.best_match(["application/json", PROBLEM_JSON, "text/html"])
    return best == "text/html"


def _security_headers(response: Response) -> Response:
    # A policy comes with a document or a worker (CSP Level 3 §4.2, integration with
    # HTML): a script or style sheet runs under the page's, and one of its own would be
    # ignored (the page starts no worker). Opened by itself, it is shown as text, never
    # sniffed (nosniff). So none is sent: ~200 bytes less for each first-load file.
    if response.mimetype not in SUBRESOURCE_TYPES:
        response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    return response
