"""The thin web layer: HTTP in, core call, HTTP out."""

from __future__ import annotations

import ipaddress

from flask import current_app, g, request
from werkzeug.exceptions import RequestEntityTooLarge

from ..engine.problems import Problem
from ..engine.text import N_, Text
from ..payments.charges import parse_json
from ..registry import LabRegistry
from ..workspace import Workspace


def labs() -> LabRegistry:
    """The app's registry of labs."""
    registry: LabRegistry = current_app.extensions["labs"]
    return registry


def lab_to_read(lab_id: str) -> Workspace:
    """For a GET: the lab if it exists (marked used), else a blank one that takes no slot.

    :raises Problem: 404 for a bad lab id.
    """
    return labs().view(lab_id)


def lab_to_write(lab_id: str) -> Workspace:
    """For a write: the lab, created if needed, on behalf of :func:`client_source`.

    :raises Problem: 404 for a bad lab id; 503 with ``Retry-After`` when no slot is free.
    """
    return labs().get(lab_id, source=client_source())


def client_source() -> str:
    """Who is asking, for the lab slots' fair share: the client's IPv4 address, or its
    IPv6 /64 (one host usually holds a whole /64, RFC 4291 §2.5.4)."""
    address = request.remote_addr or ""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip)


def current_lab() -> Workspace | None:
    """The existing lab this request addresses, if any; never creates one."""
    lab: Workspace | None = g.get("lab")  # the API's views have it already
    lab_id = (request.view_args or {}).get("lab_id", g.get("lab_id"))
    if lab is None and isinstance(lab_id, str):
        lab = labs().peek(lab_id)
    return lab


READ_ONLY_SAFE = frozenset({"shell.set_language"})
"""What a replay still accepts besides presenter mode: the language switch. Both are view
choices: they change how the replay is shown, never what it shows (a hint would)."""


def refuse_writes_to_replays() -> None:
    """``before_request``: a read-only replay answers 409 to anything that would run or
    change it: any write (hints included), and ``?scenario=`` or ``?lesson=`` links. The
    language and presenter mode stay free: projecting a replay is what it is for.

    :raises Problem: 409 ``read-only-replay``.
    """
    lab = current_lab()
    if lab is None or not lab.read_only or request.endpoint in READ_ONLY_SAFE:
        return
    params = set(request.values)
    if request.endpoint == "shell.open_link" and params <= {"present"}:
        return
    if request.method not in SAFE_METHODS or {"scenario", "lesson"} & set(request.args):
        raise read_only_problem()


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""RFC 9110 §9.2.1: the client asks for no change, so they never change a lab."""


def refuse_cross_site_writes() -> None:
    """``before_request``: a request that may change something (any method but GET, HEAD
    and OPTIONS) sent by another site's page is refused, so no page elsewhere can drive
    an attendee's lab through their browser. A browser says where a request comes from
    in ``Sec-Fetch-Site`` (W3C Fetch Metadata; ``cross-site`` is refused, ``same-origin``,
    ``same-site`` and ``none`` pass) and ``Origin`` (RFC 6454; it must name this host).
    ``Origin: null`` tells nothing: the page's own forms send it, because the lab's
    ``Referrer-Policy`` is ``no-referrer`` (Fetch standard), so ``Sec-Fetch-Site`` decides.
    A client that sends neither, such as curl, is not a browser and passes.

    :raises Problem: 403 ``cross-site-request``.
    """
    if request.method in SAFE_METHODS:
        return
    # Repeated header lines arrive joined with commas: any one saying cross-site refuses.
    sites = {s.strip().lower() for s in request.headers.get("Sec-Fetch-Site", "").split(",")}
    origin = request.headers.get("Origin")
    foreign = origin is not None and origin.strip() != "null" and not _same_host(origin)
    if "cross-site" in sites or foreign:
        raise Problem(
            403,
            "cross-site-request",
            N_("Cross-site request refused"),
            N_("Another site's page tried to change this lab. Use the lab's own page, "
               "or a client such as curl."),
        )  # fmt: skip


def _same_host(origin: str) -> bool:
    """True when ``origin`` (``scheme://host[:port]``) names the host this request was
    sent to (``Host``)."""
    scheme, _, host = origin.strip().partition("://")
    return scheme.lower() in ("http", "https") and host.lower() == request.host.lower()


def is_htmx() -> bool:
    """True when htmx sent the request (``HX-Request: true``): answer with fragments."""
    return request.headers.get("HX-Request") == "true"


def read_only_problem() -> Problem:
    """409: a replay of an exported history shows what happened and runs nothing."""
    return Problem(
        409,
        "read-only-replay",
        N_("Read-only replay"),
        N_("This lab replays an exported history: it shows what happened and runs nothing. "
           "Open a new lab to try things."),
    )  # fmt: skip


JSON_TYPES = ("application/json", "application/merge-patch+json")
"""The media types the labs' APIs read as JSON: a PATCH may say merge-patch (RFC 7396)."""


def json_body(types: tuple[str, ...] = JSON_TYPES) -> bytes:
    """The raw request body, once its media type is one of ``types``.

    :raises Problem: 415 for another media type, none, or a ``charset`` other than UTF-8
        (JSON is UTF-8, RFC 8259 §8.1; the body would be read as UTF-8 regardless).
    :raises RequestEntityTooLarge: 413 past ``MAX_CONTENT_LENGTH``.
    """
    if request.mimetype not in types:
        given = request.headers.get("Content-Type", "").strip()
        detail: str | Text
        if request.mimetype:
            detail = Text("Send the body as application/json, not %(type)s.", type=request.mimetype)
        elif given:
            detail = Text(
                "The Content-Type header (%(given)s) names no media type: send the body as "
                "application/json.",
                given=given[:100],
            )
        else:
            detail = N_(
                "The request has no Content-Type header: send the body as application/json."
            )
        raise Problem(415, "unsupported-media-type", N_("Unsupported Media Type"), detail)
    charset = request.mimetype_params.get("charset")
    if charset is not None and charset.strip().lower() not in ("utf-8", "utf8"):
        raise Problem(
            415, "unsupported-media-type", N_("Unsupported Media Type"),
            Text("JSON is UTF-8 (RFC 8259 §8.1): send the body as UTF-8, not charset=%(charset)s.",
                 charset=charset),
        )  # fmt: skip
    return read_body(request.max_content_length)


def no_body(problem_type: str, title: str, detail: str) -> None:
    """Refuse a body other than none or ``{}``: a member sent to an endpoint that takes none
    would be silently ignored, and its sender would believe it took effect.

    :raises Problem: 422 ``problem_type`` for a body with members; 400 for one that is not
        JSON and 415 for another media type, as everywhere (:func:`json_body`).
    """
    if not request.content_length and request.headers.get("Transfer-Encoding") is None:
        return  # no body at all: the page's and the README's call
    if parse_json(json_body()) != {}:
        raise Problem(422, problem_type, title, detail)


def read_body(limit: int | None) -> bytes:
    """The raw request body, at most ``limit`` bytes.

    :raises RequestEntityTooLarge: 413 past ``limit``, chunked bodies too.
    """
    if request.content_length is not None or limit is None:
        return request.get_data(cache=False)  # Content-Length was checked against the limit
    # A chunked body has no length up front: read one byte past the limit ourselves, so
    # a body over it is refused rather than silently cut short.
    stream, parts, size = request.environ["wsgi.input"], [], 0
    while size <= limit:
        part = stream.read(limit + 1 - size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    if size > limit:
        raise RequestEntityTooLarge()
    return b"".join(parts)
