"""Compression is transport only, and static files are cached as long as they can be."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from pathlib import Path
from urllib.parse import urljoin

import brotli
import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo import create_app
from demo.web.assets import content_version

GZIP = {"Accept-Encoding": "gzip"}
CHARGE = {"Content-Type": "application/json", "Idempotency-Key": "pay-1"}
BODY = b'{"order_id": "42", "amount": 100000}'


def gunzip(response: object) -> bytes:
    assert response.headers["Content-Encoding"] == "gzip"  # type: ignore[attr-defined]
    return gzip.decompress(response.data)  # type: ignore[attr-defined]


def test_the_lab_page_is_gzipped_and_decompresses_to_the_same_page(client: FlaskClient) -> None:
    plain = client.get("/lab/gz-page")
    packed = client.get("/lab/gz-page", headers=GZIP)
    assert plain.status_code == packed.status_code == 200
    assert "Content-Encoding" not in plain.headers
    assert gunzip(packed) == plain.data
    assert len(packed.data) < len(plain.data) / 3
    assert "Accept-Encoding" in packed.headers["Vary"]


def test_an_htmx_fragment_is_gzipped_and_keeps_its_htmx_headers(client: FlaskClient) -> None:
    htmx = {"HX-Request": "true"}
    plain = client.get("/lab/gz-frag/panels", headers=htmx)
    packed = client.get("/lab/gz-frag/panels", headers={**htmx, **GZIP})
    assert gunzip(packed) == plain.data
    assert packed.headers["Content-Type"] == plain.headers["Content-Type"]


def test_the_json_api_is_gzipped_and_problems_stay_plain_json(client: FlaskClient) -> None:
    client.post("/lab/gz-api/api/charges", data=BODY, headers=CHARGE)  # a state over 500 bytes
    plain = client.get("/lab/gz-api/api/state")
    packed = client.get("/lab/gz-api/api/state", headers=GZIP)
    first, second = plain.get_json(), json.loads(gunzip(packed))
    first.pop("clock"), second.pop("clock")  # the lab's clock moves between the two reads
    assert first == second
    problem = client.post("/lab/gz-api/api/charges", data=b"{", headers={**CHARGE, **GZIP})
    assert problem.status_code == 400
    assert problem.headers["Content-Type"] == "application/problem+json"
    assert problem.get_json()["type"] == "/problems/malformed-json"


def test_the_history_download_is_gzipped_and_still_re_imports(client: FlaskClient) -> None:
    client.post("/lab/gz-hist/api/charges", data=BODY, headers=CHARGE)
    plain = client.get("/lab/gz-hist/history.json")
    packed = client.get("/lab/gz-hist/history.json", headers=GZIP)
    assert packed.headers["Content-Disposition"] == plain.headers["Content-Disposition"]
    assert json.loads(gunzip(packed)) == plain.get_json()
    opened = client.post(
        "/replay", data=gzip.decompress(packed.data), content_type="application/json"
    )
    assert opened.status_code == 303


def test_a_replay_is_byte_identical_to_the_stored_response_whatever_the_encoding() -> None:
    app: Flask = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0, "COMPRESS_MIN_SIZE": 0})
    client = app.test_client()
    first = client.post("/lab/gz-replay/api/charges", data=BODY, headers={**CHARGE, **GZIP})
    again = client.post("/lab/gz-replay/api/charges", data=BODY, headers={**CHARGE, **GZIP})
    bare = client.post("/lab/gz-replay/api/charges", data=BODY, headers=CHARGE)
    assert first.status_code == again.status_code == bare.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Content-Encoding" not in bare.headers
    (record,) = app.extensions["labs"].get("gz-replay").payments.store.records()
    assert record.response is not None
    assert gunzip(first) == gunzip(again) == bare.data == record.response.body


@pytest.mark.parametrize("name", ["app.js", "app.css", "htmx-2.0.11.min.js"])
def test_static_files_are_compressed_for_a_browser(client: FlaskClient, name: str) -> None:
    plain = client.get(f"/static/{name}")
    packed = client.get(f"/static/{name}", headers={"Accept-Encoding": "gzip, deflate, br"})
    assert packed.headers["Content-Encoding"] == "br"
    assert brotli.decompress(packed.data) == plain.data
    plain.close(), packed.close()


def test_the_page_links_its_own_scripts_and_styles_by_content_hash(client: FlaskClient) -> None:
    html = client.get("/lab/gz-links").text
    links = dict(re.findall(r'"/static/([^"?]+)(?:\?v=([0-9a-f]+))?"', html))
    assert links["htmx-2.0.11.min.js"] == ""  # its name carries its version
    for name in ("app.js", "app.css"):
        import hashlib

        content = client.get(f"/static/{name}")
        assert links[name] == hashlib.sha256(content.data).hexdigest()[:12]
        content.close()


def test_versioned_static_files_are_cached_for_a_year_the_rest_revalidated(
    client: FlaskClient,
) -> None:
    html = client.get("/lab/gz-cache").text
    for url in re.findall(r'"(/static/(?:app\.js|app\.css|htmx-[^"]+)[^"]*)"', html):
        answer = client.get(url)
        assert answer.headers["Cache-Control"] == "public, max-age=31536000, immutable", url
        answer.close()
    for url in ("/static/app.js", "/static/app.js?v=0123456789ab"):  # unversioned, stale
        answer = client.get(url)
        assert answer.headers["Cache-Control"] == "no-cache", url
        etag = answer.headers["ETag"]
        answer.close()
        again = client.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 304
        again.close()


# -- the page script's modules ------------------------------------------------------

IMPORT_FROM = re.compile(r'^import\s[^;]*?\sfrom\s+"([^"]+)";', re.M)
"""A static ``import … from "specifier";`` at the start of a line (how the modules import)."""


def _module_graph(client: FlaskClient, entry: str) -> dict[str, list[str]]:
    """Every module URL reachable from ``entry`` -> the URLs its imports resolve to,
    as the browser resolves them (relative to the importing module's URL)."""
    graph: dict[str, list[str]] = {}
    todo = [entry]
    while todo:
        url = todo.pop()
        if url in graph:
            continue
        answer = client.get(url)
        assert answer.status_code == 200, url
        # A module script needs a JavaScript MIME type (the page sends nosniff).
        assert answer.mimetype in ("text/javascript", "application/javascript"), url
        graph[url] = [urljoin(url, spec) for spec in IMPORT_FROM.findall(answer.text)]
        answer.close()
        todo.extend(graph[url])
    return graph


def test_every_module_of_the_page_script_is_linked_by_its_content_hash(
    client: FlaskClient, app: Flask
) -> None:
    html = client.get("/lab/gz-modules").text
    (entry,) = re.findall(r'<script type="module" src="(/static/app\.js\?v=[0-9a-f]{12})">', html)
    graph = _module_graph(client, entry)
    imported = {url for imports in graph.values() for url in imports}
    assert app.static_folder is not None
    on_disk = {p.name for p in (Path(app.static_folder) / "js").glob("*.js")}
    assert {re.sub(r"^/static/js/|\?.*$", "", url) for url in imported} == on_disk
    for url in sorted(graph):
        path, version = re.fullmatch(r"(/static/[a-z/-]+\.js)\?v=([0-9a-f]{12})", url).groups()  # type: ignore[union-attr]
        answer = client.get(url)
        assert hashlib.sha256(answer.data).hexdigest()[:12] == version, url
        assert answer.headers["Cache-Control"] == "public, max-age=31536000, immutable", url
        assert answer.data == client.get(path).data  # the same text, whatever the URL
        answer.close()


def _static_folder(app: Flask, folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    app.static_folder = str(folder)


def _deploy(path: Path, text: str) -> None:
    path.write_text(text)
    later = path.stat().st_mtime + 60  # a deploy's file is newer
    os.utime(path, (later, later))


def test_a_deploy_that_changes_one_module_changes_the_url_of_every_module_above_it(
    app: Flask, tmp_path: Path
) -> None:
    _static_folder(
        app,
        tmp_path,
        {
            "app.js": 'import * as a from "./js/a.js";\nimport * as c from "./js/c.js";\n',
            "js/a.js": 'import { b } from "./b.js";\nexport const a = b;\n',
            "js/b.js": "export const b = 1;\n",
            "js/c.js": "export const c = 1;\n",
        },
    )
    client = app.test_client()
    with app.app_context():
        before = {
            name: content_version(name) for name in ("app.js", "js/a.js", "js/b.js", "js/c.js")
        }
        assert before["js/b.js"] == hashlib.sha256(b"export const b = 1;\n").hexdigest()[:12]
        served = client.get("/static/js/a.js")
        assert (
            served.text
            == f'import {{ b }} from "./b.js?v={before["js/b.js"]}";\nexport const a = b;\n'
        )
        etag = served.headers["ETag"]
        served.close()
        _deploy(tmp_path / "js" / "b.js", "export const b = 2;\n")
        after = {name: content_version(name) for name in before}
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {"app.js", "js/a.js", "js/b.js"}  # c.js stays cached
    html = client.get("/lab/gz-deploy").text
    assert f"/static/app.js?v={after['app.js']}" in html
    # A browser that revalidates a.js under its old ETag gets the new text, not a 304.
    again = client.get("/static/js/a.js", headers={"If-None-Match": etag.strip('"')})
    assert again.status_code == 200
    assert f'"./b.js?v={after["js/b.js"]}"' in again.text
    again.close()
    unchanged = client.get("/static/js/c.js", headers={"If-None-Match": before["js/c.js"]})
    assert unchanged.status_code == 304
    unchanged.close()


def test_modules_in_an_import_cycle_are_imported_without_a_version(
    app: Flask, tmp_path: Path
) -> None:
    # A cycle cannot be hashed bottom-up: its modules keep one plain URL each (a module
    # loaded under two URLs would run twice) and are revalidated; what lies below the
    # cycle is still versioned.
    _static_folder(
        app,
        tmp_path,
        {
            "app.js": 'import * as a from "./js/a.js";\n',
            "js/a.js": 'import { b } from "./b.js";\nimport { c } from "./c.js";\n',
            "js/b.js": 'import { a } from "./a.js";\nexport const b = 2;\n',
            "js/c.js": "export const c = 3;\n",
        },
    )
    client = app.test_client()
    served = {name: client.get(f"/static/{name}").text for name in ("app.js", "js/a.js", "js/b.js")}
    assert served["app.js"] == 'import * as a from "./js/a.js";\n'
    assert 'from "./b.js";' in served["js/a.js"]
    assert re.search(r'from "\./c\.js\?v=[0-9a-f]{12}";', served["js/a.js"])
    assert served["js/b.js"] == 'import { a } from "./a.js";\nexport const b = 2;\n'
