"""Header field values as RFC 9110 §5.5 defines them: without the spaces and tabs around."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..payments.charges import OWS

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def strip_field_values(app: WsgiApp) -> WsgiApp:
    """Wrap a WSGI ``app`` so that every request header it reads (``HTTP_*``,
    ``CONTENT_TYPE``, ``CONTENT_LENGTH``) has the spaces and tabs around its value removed
    (RFC 9110 §5.5: optional whitespace is no part of the value). Werkzeug's servers keep
    them (waitress strips each line already); inner spaces, quoted or not, stay."""

    def stripped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        for name, value in list(environ.items()):
            header = name.startswith("HTTP_") or name in ("CONTENT_TYPE", "CONTENT_LENGTH")
            if header and isinstance(value, str):
                environ[name] = value.strip(OWS)
        return app(environ, start_response)

    return stripped
