"""The lab's ES modules as served: each relative import carries the version of the module
it names, so every module can be cached for a year and none is ever stale.

A module's ``import { x } from "./x.js";`` is a URL like any other, which the browser
caches by itself, and the file cannot know the version of ``x.js`` it needs. So the lab
serves the file with ``"./x.js?v=<version>"`` written into it, where the version is the
hash of ``x.js`` *as served*: it covers the modules ``x.js`` imports, all the way down.
A deploy that changes one module changes the URL of every module above it, up to the
``app.js`` the page links; the unchanged ones keep their URL and their cache. No build
step: the text is derived from the files when served, and again when one of them changes.

A module in an import cycle, or that leads to one, cannot be hashed with the modules it
imports: it is imported by its plain URL, revalidated by the browser on each load (and
loaded under that one URL only, as a cycle needs).
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from pathlib import Path

from werkzeug.security import safe_join

RELATIVE_IMPORT = re.compile(r'^(import\s[^;]*?\sfrom\s+")(\.\.?/[^"?]+\.js)(";)', re.M)
"""A static ``import … from "./x.js";`` at the start of a line, without a version."""

Stamp = tuple[int, int] | None
"""A file's ``(mtime in ns, size in bytes)``, or ``None`` when there is no such file."""

_served: dict[str, tuple[tuple[tuple[str, Stamp], ...], bytes]] = {}
"""Path of a module -> the stamps of the files its text derives from, and the text. Only
files that exist are kept, so its size is bounded by the static folder's."""


def digest(data: bytes) -> str:
    """The version of ``data``: the first 12 hex digits of its SHA-256."""
    return hashlib.sha256(data).hexdigest()[:12]


def module_text(folder: str, filename: str) -> bytes | None:
    """Module ``filename`` (a path in static ``folder`` ending in ``.js``) as served, with
    its relative imports versioned; ``None`` if there is no such file. Derived again
    only when one of the files it derives from has changed (size or mtime)."""
    path = safe_join(folder, filename)
    if path is None or not filename.endswith(".js"):
        return None
    known = _served.get(path)
    if known is not None and all(_stamp(folder, name) == stamp for name, stamp in known[0]):
        return known[1]
    modules = _Modules(folder)
    text = modules.served(filename)
    if text is not None:
        _served[path] = (tuple(modules.stamps.items()), text)
    return text


def _stamp(folder: str, filename: str) -> Stamp:
    path = safe_join(folder, filename)
    try:
        stat = Path(path).stat() if path else None
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size) if stat else None


class _Modules:
    """One reading of the modules in a static folder: each file read once."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.stamps: dict[str, Stamp] = {}  # every file read, as it was read
        self._sources: dict[str, str | None] = {}
        self._texts: dict[str, bytes | None] = {}
        self._acyclic: set[str] = set()  # modules known to lead to no cycle

    def source(self, filename: str) -> str | None:
        if filename not in self._sources:
            self.stamps[filename] = _stamp(self.folder, filename)
            path = safe_join(self.folder, filename)
            try:
                text = Path(path).read_text("utf-8") if path else None
            except (OSError, UnicodeDecodeError):
                text = None
            self._sources[filename] = text
        return self._sources[filename]

    def imports(self, filename: str) -> list[str]:
        """The files module ``filename`` imports by a relative URL."""
        source = self.source(filename) or ""
        folder = posixpath.dirname(filename)
        return [
            posixpath.normpath(posixpath.join(folder, match[2]))
            for match in RELATIVE_IMPORT.finditer(source)
        ]

    def leads_to_no_cycle(self, filename: str, chain: tuple[str, ...] = ()) -> bool:
        """Whether no import cycle can be reached from ``filename`` (depth first)."""
        if filename in self._acyclic:
            return True
        if filename in chain:
            return False
        if not all(self.leads_to_no_cycle(t, (*chain, filename)) for t in self.imports(filename)):
            return False
        self._acyclic.add(filename)
        return True

    def served(self, filename: str) -> bytes | None:
        """Module ``filename`` with each import of a module that leads to no cycle
        versioned; ``None`` if there is no such file."""
        if filename in self._texts:
            return self._texts[filename]
        source = self.source(filename)
        folder = posixpath.dirname(filename)

        def versioned(match: re.Match[str]) -> str:
            target = posixpath.normpath(posixpath.join(folder, match[2]))
            text = self.served(target) if self.leads_to_no_cycle(target) else None
            if text is None:  # a cycle, or no such module (the browser gets its 404)
                return match[0]
            return f"{match[1]}{match[2]}?v={digest(text)}{match[3]}"

        text = None if source is None else RELATIVE_IMPORT.sub(versioned, source).encode("utf-8")
        self._texts[filename] = text
        return text
