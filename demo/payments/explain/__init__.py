"""Plain-language explanations of what just happened, computed from the lab's real log.

Each explanation answers *why*: why the retry replayed, why the 409, why two charges,
and what the lock changes. No web framework; the page only formats the result.

:func:`explain` picks the situation from the request's outcome; one module explains each:
``waiting`` (no answer yet), ``no_answer`` (a crash, a lost response), ``refused`` (invalid
input, a duplicate in flight, another body under the key), ``gateway_failures`` (a
decline, a failure, a timeout, a key in doubt), ``replayed`` (a replay, a recovery),
``charged`` (one charge) and ``doubles`` (two charges for one order).
"""

from .dispatch import explain
from .explanation import Explanation, Tone

__all__ = ["Explanation", "Tone", "explain"]
