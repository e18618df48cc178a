"""Problem details (RFC 9457): the one shape every error of the lab takes.

Plain Python, no web framework: the core raises :class:`Problem`, and the web
layer turns it into an ``application/problem+json`` response.
"""

from __future__ import annotations

import json
from typing import Any

from .text import Text, translate

PROBLEM_JSON = "application/problem+json"


class Problem(Exception):
    """An error with an HTTP status and a body in RFC 9457 form.

    :param status: the HTTP status code, 4xx or 5xx.
    :param slug: the last part of the problem ``type``, e.g. ``"key-mismatch"``;
        the type is the relative URI ``/problems/<slug>``.
    :param title: a short, fixed summary of the problem type (marked with ``N_``).
    :param detail: what went wrong with *this* request, in a plain sentence: a marked
        literal or a :class:`~demo.engine.text.Text` with parameters. Both are translated into
        the request's language when the body is built.
    :param retry_after_s: when to try again, in seconds: sent as ``Retry-After``.
    :param extra: extension members, e.g. ``errors`` (a list of field errors).
    """

    def __init__(
        self,
        status: int,
        slug: str,
        title: str,
        detail: str | Text,
        *,
        retry_after_s: int | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(str(detail))
        self.retry_after_s = retry_after_s
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.extra = extra

    def to_dict(self) -> dict[str, Any]:
        """The body as a dict: ``type``, ``title``, ``status``, ``detail`` and extensions."""
        return {
            "type": f"/problems/{self.slug}",
            "title": translate(self.title),
            "status": self.status,
            "detail": translate(self.detail),
            **self.extra,
        }

    def body(self) -> bytes:
        """The body as canonical JSON bytes (sorted keys, no spaces)."""
        return canonical_json(self.to_dict())


def canonical_json(value: Any) -> bytes:
    """Serialise ``value`` the one way the lab always does: sorted keys, no spaces, UTF-8.

    The fingerprint and every stored response use it, so equal values give equal bytes.
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()
