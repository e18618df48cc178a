"""Static files: compressed on the way out, and cached by the browser as long as they can be.

- A file whose name carries its version (``htmx-2.0.11.min.js``) never changes: a year,
  ``immutable`` (RFC 8246).
- The lab's own ``app.js`` and ``app.css`` change with the code, so the page links them
  as ``/static/app.js?v=<hash of the content>``: a new version is a new URL, and the URL
  of the current content is cached for a year, ``immutable``, too. No build step and no
  renamed files; the hash is computed from the file itself.
- Anything else (an old ``?v=``, no ``v``) is ``no-cache``: the browser revalidates it
  with its ``ETag`` and gets a 304 while it has not changed.
- ``app.js`` is an ES module, and so are the modules it imports (``js/*.js``): they are
  served with their imports versioned the same way (:mod:`demo.web.js_modules`), and the
  version of a module is the hash of that served text.

Compression (gzip, Brotli, zstd, as the client accepts) is Flask-Compress's; it only
encodes the transfer: the bytes the app produced, stored records and replays included,
are what the client gets once decoded.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from flask import Flask, Response, current_app, request, url_for
from flask_compress import Compress
from werkzeug.security import safe_join

from demo.web import js_modules

YEAR_S = 365 * 24 * 3600
VERSIONED_NAME = re.compile(r"-\d+\.\d+\.\d+[.-]")
"""A file name that carries its version, e.g. ``htmx-2.0.11.min.js``."""

_hashes: dict[str, tuple[int, int, str]] = {}


def init(app: Flask) -> None:
    """Compress ``app``'s text responses and cache its static files (see the module)."""
    app.config.setdefault("COMPRESS_MIN_SIZE", 500)  # bytes; below it, gzip gains nothing
    Compress(app)
    app.add_template_global(static_url)
    app.after_request(_cache_static)  # runs before Compress's (after_request runs last first)
    send_file = app.view_functions["static"]

    def static(filename: str, **kwargs: Any) -> Any:
        """One of the lab's modules as served (:mod:`demo.web.js_modules`), else the file."""
        text = _module(filename)
        if text is None:
            return send_file(filename=filename, **kwargs)
        response = Response(text, mimetype="text/javascript")
        response.set_etag(js_modules.digest(text))  # the served text's, so a 304 is never stale
        return response.make_conditional(request)

    app.view_functions["static"] = static


def content_version(filename: str) -> str | None:
    """The first 12 hex digits of the SHA-256 of static file ``filename``, or ``None``
    if there is no such file. Recomputed only when the file's size or mtime changes. For
    one of the lab's modules, the hash of the text served (its imports versioned)."""
    text = _module(filename)
    if text is not None:
        return js_modules.digest(text)
    folder = current_app.static_folder
    path = safe_join(folder, filename) if folder else None
    if path is None:
        return None
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    known = _hashes.get(path)
    if known is None or known[:2] != (stat.st_mtime_ns, stat.st_size):
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
        known = _hashes[path] = (stat.st_mtime_ns, stat.st_size, digest)
    return known[2]


def _module(filename: str) -> bytes | None:
    """Static file ``filename`` as served if it is one of the lab's ES modules: a ``.js``
    file whose name carries no version (not htmx)."""
    folder = current_app.static_folder
    if folder is None or VERSIONED_NAME.search(filename):
        return None
    return js_modules.module_text(folder, filename)


def static_url(filename: str) -> str:
    """The URL of static file ``filename``, versioned by its content unless its name
    carries its version already."""
    if VERSIONED_NAME.search(filename):
        return url_for("static", filename=filename)
    return url_for("static", filename=filename, v=content_version(filename))


def _cache_static(response: Response) -> Response:
    if request.endpoint != "static" or response.status_code not in (200, 304):
        return response
    if response.is_streamed:
        # Read the (small) file now, so it is compressed whole, with a Content-Length,
        # and closed with the response instead of left to the garbage collector.
        response.direct_passthrough = False
        response.make_sequence()
    filename = (request.view_args or {}).get("filename", "")
    version = request.args.get("v")
    if VERSIONED_NAME.search(filename) or (
        version is not None and version == content_version(filename)
    ):
        response.cache_control.no_cache = None
        response.cache_control.public = True
        response.cache_control.max_age = YEAR_S
        response.cache_control.immutable = True
    else:
        response.cache_control.max_age = None
        response.cache_control.no_cache = True  # revalidate with the ETag: 304 if unchanged
    return response
