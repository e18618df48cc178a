"""English and Vietnamese: every marked string has a Vietnamese entry, the compiled
catalogue matches its source, and every page renders in both languages with no string
left untranslated."""

from __future__ import annotations

import gettext
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po
from flask.testing import FlaskClient

from demo import create_app
from demo.web.i18n import MISSING, TRANSLATIONS

ROOT = Path(__file__).resolve().parent.parent
PO = TRANSLATIONS / "vi" / "LC_MESSAGES" / "messages.po"
MO = PO.with_suffix(".mo")
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None, "Text": None}
METHODS = [
    ("demo/**.py", "python"),
    ("templates/**.html", "jinja2"),
    ("templates/**.svg", "jinja2"),
]


def _searched(dirpath: str) -> bool:
    # Babel skips "_*" directories by default; templates/_partials holds most of the text.
    name = Path(dirpath).name
    return not name.startswith(".") and name not in ("__pycache__", "node_modules")


def marked() -> set[str]:
    """Every msgid marked in the templates and the Python code, extracted now."""
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT), METHODS, keywords=KEYWORDS, directory_filter=_searched
    ):
        found.add(message if isinstance(message, str) else message[0])
    return found


def catalogue() -> dict[str, str]:
    with PO.open("rb") as fh:
        po = read_po(fh)
    return {m.id: m.string for m in po if m.id and not m.fuzzy and isinstance(m.id, str)}


def test_every_marked_string_has_a_vietnamese_entry() -> None:
    strings = marked()
    assert len(strings) > 3
    translated = catalogue()
    missing = sorted(s for s in strings if not translated.get(s))
    assert missing == []


def test_the_compiled_catalogue_matches_its_source() -> None:
    with MO.open("rb") as fh:
        compiled = gettext.GNUTranslations(fh)
    for msgid, msgstr in catalogue().items():
        assert compiled.gettext(msgid) == msgstr, f"run pybabel compile: {msgid!r}"


def test_placeholders_survive_translation() -> None:
    import re

    for msgid, msgstr in catalogue().items():
        names = sorted(re.findall(r"%\((\w+)\)s", msgid))
        assert sorted(re.findall(r"%\((\w+)\)s", msgstr)) == names, msgid


@pytest.fixture
def marking() -> FlaskClient:
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0, "I18N_MARK_MISSING": True})
    return app.test_client()


def test_the_marker_shows_for_a_string_without_a_translation(marking: FlaskClient) -> None:
    from demo.web.i18n import t

    with marking.application.test_request_context(headers={"Accept-Language": "vi"}):
        assert t("A string nobody translated") == MISSING + "A string nobody translated"
        assert t("Language") == "Ngôn ngữ"


@pytest.mark.parametrize("language", ["en", "vi"])
def test_the_lab_page_renders_without_missing_translations(
    marking: FlaskClient, language: str
) -> None:
    page = marking.get("/lab/i18n-page", headers={"Accept-Language": language})
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert MISSING not in html
    assert f'<html lang="{language}">' in html


def test_the_accept_language_header_picks_vietnamese(client: FlaskClient) -> None:
    html = client.get("/lab/i18n-vi", headers={"Accept-Language": "vi-VN,vi;q=0.9"}).text
    assert "Ngôn ngữ" in html
    html = client.get("/lab/i18n-en", headers={"Accept-Language": "en-GB"}).text
    assert "Ngôn ngữ" not in html and ">Language<" in html


def test_the_switch_keeps_the_language_in_the_lab(client: FlaskClient) -> None:
    answer = client.post("/lab/i18n-switch/language", data={"language": "vi"})
    assert answer.status_code == 303
    # An English browser still gets the lab's chosen language.
    html = client.get("/lab/i18n-switch", headers={"Accept-Language": "en"}).text
    assert '<html lang="vi">' in html
    client.post("/lab/i18n-switch/language", data={"language": "en"})
    html = client.get("/lab/i18n-switch", headers={"Accept-Language": "vi"}).text
    assert '<html lang="en">' in html


def test_an_unknown_language_is_a_problem_in_the_request_language(client: FlaskClient) -> None:
    answer = client.post(
        "/lab/i18n-bad/language",
        data={"language": "xx"},
        headers={"Accept-Language": "vi", "Accept": "application/json"},
    )
    assert answer.status_code == 422
    assert answer.mimetype == "application/problem+json"
    body = answer.get_json()
    assert body["title"] == "Ngôn ngữ không có"
    assert body["detail"] == "Phòng lab có các ngôn ngữ: en, vi."
