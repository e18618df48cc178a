"""English and Vietnamese: every marked string has a Vietnamese entry, the compiled
catalogue matches its source, and every page renders in both languages with no string
left untranslated."""

from __future__ import annotations

import gettext
import os
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po
from flask.testing import FlaskClient

from demo import create_app
from demo.lessons import PATH
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


def marked() -> set[str]:
    """Every msgid marked in the templates and the Python code, extracted now."""
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT), METHODS, keywords=KEYWORDS, directory_filter=_not_hidden
    ):
        found.add(message if isinstance(message, str) else message[0])
    return found


def _not_hidden(path: str) -> bool:
    """Walk every directory but hidden ones: templates/_partials too (Babel's default
    filter skips directories whose names start with "_")."""
    return not os.path.basename(path).startswith(".")


def test_the_partials_are_extracted() -> None:
    strings = marked()
    assert "Request timeline" in strings  # templates/_partials/timeline.html
    assert "No money has moved." in strings  # templates/_partials/ledger.html


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


# -- every state of the lab, in Vietnamese, with nothing left untranslated -----------

VI = {"Accept-Language": "vi"}
HX = {**VI, "HX-Request": "true"}
ORDER = {"order_id": "42", "amount": 100000}


def _charge(
    client: FlaskClient, lab: str, key: str, body: dict[str, object], action: str = "Pay"
) -> str:
    answer = client.post(
        f"/lab/{lab}/api/charges",
        json=body,
        headers={**HX, "Idempotency-Key": key, "X-Lab-Action": action},
    )
    return answer.get_data(as_text=True)


def _page(client: FlaskClient, lab: str) -> str:
    page = client.get(f"/lab/{lab}", headers=VI)
    assert page.status_code == 200
    return page.get_data(as_text=True)


def _settings(client: FlaskClient, lab: str, **changes: object) -> None:
    answer = client.patch(f"/lab/{lab}/api/settings", json=changes, headers=VI)
    assert answer.status_code == 200


def _clean(html: str) -> str:
    assert MISSING not in html
    return html


def test_a_charge_and_its_replay_are_told_in_vietnamese(marking: FlaskClient) -> None:
    charged = _clean(_charge(marking, "vi-pay", "k1", ORDER))
    assert "ĐÃ TRỪ TIỀN — ch_0001 cho đơn hàng 42" in charged
    assert ">Thanh toán</button>" in _clean(_page(marking, "vi-pay"))
    replayed = _clean(_charge(marking, "vi-pay", "k1", ORDER, "Retry"))
    assert "ĐÃ REPLAY — lại ch_0001, không trừ tiền mới" in replayed
    assert "#2 Thử lại" in replayed  # the action on the timeline
    _clean(_page(marking, "vi-pay"))


def test_a_409_is_told_in_vietnamese(marking: FlaskClient) -> None:
    _charge(marking, "vi-409", "k1", ORDER)
    html = _clean(_charge(marking, "vi-409", "k1", {**ORDER, "amount": 101000}, "Change amount"))
    assert "409 CONFLICT — cùng key, yêu cầu khác" in html
    assert "Idempotency key bị dùng lại cho một yêu cầu khác" in html  # on the timeline
    assert "409 CONFLICT" in _clean(_page(marking, "vi-409"))  # the HTTP name stays


def test_a_lost_response_is_told_in_vietnamese(marking: FlaskClient) -> None:
    _settings(marking, "vi-lost", fault="lose_response")
    _charge(marking, "vi-lost", "k1", ORDER)
    html = _clean(_page(marking, "vi-lost"))
    assert "KHÔNG CÓ PHẢN HỒI — đã trừ tiền chưa?" in html
    assert "ĐÃ TRỪ TIỀN · KHÔNG CÓ PHẢN HỒI" in html


def test_step_mode_is_told_in_vietnamese(marking: FlaskClient) -> None:
    _settings(marking, "vi-step", step_mode=True)
    html = _clean(_page(marking, "vi-step"))
    assert "Chạy từng bước" in html
    assert "# demo/payments/endpoint.py, ChargeEndpoint._charge: side effect" in html


@pytest.mark.parametrize("scenario", ["race", "crash-window", "profiles", "email-once"])
def test_a_scenario_page_is_told_in_vietnamese(marking: FlaskClient, scenario: str) -> None:
    opened = marking.post(f"/lab/vi-{scenario}?scenario={scenario}", headers=VI)
    assert opened.status_code == 303
    html = _clean(_page(marking, f"vi-{scenario}"))
    assert "Phòng lab lỗi" in html


def test_the_panels_fragment_and_the_diagram_are_in_vietnamese(marking: FlaskClient) -> None:
    _charge(marking, "vi-panels", "k1", ORDER)
    panels = marking.get("/lab/vi-panels/panels", headers=HX)
    html = _clean(panels.get_data(as_text=True))
    assert "Dòng thời gian yêu cầu" in html and "lookup (tra cứu): không có" in html
    svg = _clean(marking.get("/lab/vi-panels/sequence.svg", headers=VI).get_data(as_text=True))
    assert "#1 201 ĐÃ TRỪ TIỀN" in svg


def _script_strings(html: str) -> dict[str, str]:
    import json
    import re

    block = re.search(r'<script type="application/json" id="i18n-strings">(.*?)</script>', html)
    assert block is not None
    strings: dict[str, str] = json.loads(block.group(1))
    return strings


def test_the_words_of_app_js_come_with_the_page(marking: FlaskClient) -> None:
    vietnamese = _script_strings(_clean(_page(marking, "vi-js")))
    assert vietnamese["no_response"].startswith("Không có phản hồi — đã trừ tiền chưa?")
    english = _script_strings(marking.get("/lab/en-js", headers={"Accept-Language": "en"}).text)
    assert english["no_response"].startswith("No response — did it charge?")
    assert set(english) == set(vietnamese) and len(english) >= 6


def test_the_404_page_is_in_vietnamese(marking: FlaskClient) -> None:
    page = marking.get("/nowhere", headers={**VI, "Accept": "text/html"})
    assert page.status_code == 404 and page.mimetype == "text/html"
    html = _clean(page.get_data(as_text=True))
    assert "404 — Không tìm thấy" in html
    assert "Không có gì ở địa chỉ này." in html
    assert "Mở một phòng lab mới" in html


def test_a_409_problem_is_in_vietnamese(marking: FlaskClient) -> None:
    send = {**VI, "Idempotency-Key": "k1"}
    assert marking.post("/lab/vi-api/api/charges", json=ORDER, headers=send).status_code == 201
    answer = marking.post("/lab/vi-api/api/charges", json={**ORDER, "amount": 5}, headers=send)
    assert answer.status_code == 409 and answer.mimetype == "application/problem+json"
    body = answer.get_json()
    assert body["type"] == "/problems/key-mismatch"  # machine-readable: stays English
    assert body["title"] == "Idempotency key bị dùng lại cho một yêu cầu khác"
    assert body["detail"] == (
        "Key 'k1' đã được dùng lần đầu với một body khác. Ý định mới cần key mới."
    )


def test_a_bad_key_problem_is_in_vietnamese(marking: FlaskClient) -> None:
    answer = marking.post(
        "/lab/vi-api/api/charges", json=ORDER, headers={**VI, "Idempotency-Key": "x" * 256}
    )
    assert answer.status_code == 400
    body = answer.get_json()
    assert body["type"] == "/problems/bad-idempotency-key"
    assert body["title"] == "Header Idempotency-Key không hợp lệ"
    assert body["detail"] == "Key dài 256 ký tự; chỉ cho phép tối đa 255."
    english = marking.post(
        "/lab/vi-api/api/charges", json=ORDER, headers={"Idempotency-Key": "x" * 256}
    ).get_json()
    assert english["detail"] == "The key is 256 characters long; at most 255 are allowed."


def test_an_invalid_body_keeps_its_field_errors_in_english(marking: FlaskClient) -> None:
    answer = marking.post(
        "/lab/vi-api/api/charges", json={"order_id": 7}, headers={**VI, "Idempotency-Key": "k"}
    )
    assert answer.status_code == 422
    body = answer.get_json()
    assert body["title"] == "Yêu cầu trừ tiền không hợp lệ"
    assert body["detail"].startswith("Hãy sửa body: ")
    assert body["errors"]["amount"].startswith("is required")  # in English, for a machine


@pytest.mark.parametrize("lesson", [lesson.name for lesson in PATH])
def test_every_lesson_is_told_in_vietnamese(marking: FlaskClient, lesson: str) -> None:
    lab = f"vi-lesson-{lesson}"
    assert marking.post(f"/lab/{lab}?lesson={lesson}", headers=VI).status_code == 303
    for _ in range(3):  # every hint shown
        marking.post(f"/lab/{lab}/lessons/{lesson}/hint", headers=HX)
    html = _clean(_page(marking, lab))
    assert "Bài học:" in html and "Đã hoàn thành 0/10" in html
    assert marking.post(f"/lab/{lab}?scenario={lesson}&fixed=1", headers=VI).status_code == 303
    _clean(_page(marking, lab))


def test_an_achieved_lesson_and_the_instructor_view_in_vietnamese(marking: FlaskClient) -> None:
    marking.post("/lab/vi-done?lesson=decline", headers=VI)
    _charge(marking, "vi-done", "k1", ORDER)
    _charge(marking, "vi-done", "k1", ORDER, "Retry")
    marking.post("/lab/vi-done?scenario=decline&fixed=1", headers=VI)
    _charge(marking, "vi-done", "k1", ORDER)
    _charge(marking, "vi-done", "k1", ORDER, "Retry")
    assert "Đã hoàn thành bài học" in _clean(_page(marking, "vi-done"))
    token = marking.application.config["INSTRUCTOR_TOKEN"]
    room = _clean(marking.get(f"/instructor?token={token}", headers=VI).get_data(as_text=True))
    assert "Màn hình giảng viên" in room and "Bài học đã hoàn thành" in room
    refused = marking.get("/instructor", headers={**VI, "Accept": "application/json"})
    assert refused.status_code == 403
    assert refused.get_json()["title"] == "Chỉ dành cho giảng viên"


def test_a_replay_lab_and_a_bad_history_in_vietnamese(marking: FlaskClient) -> None:
    _charge(marking, "vi-export", "k1", ORDER)
    data = marking.get("/lab/vi-export/history.json").data
    opened = marking.post("/replay", data=data, content_type="application/json", headers=VI)
    assert opened.status_code == 303
    html = _clean(marking.get(opened.headers["Location"], headers=VI).get_data(as_text=True))
    assert "Bản phát lại chỉ đọc" in html
    bad = marking.post("/replay", json=[], headers={**VI, "Accept": "application/json"})
    assert bad.status_code == 422
    assert bad.get_json()["title"] == "Không phải lịch sử phòng lab"
    assert bad.get_json()["detail"].startswith("Không mở được tệp: format:")


def test_presenter_mode_is_told_in_vietnamese(marking: FlaskClient) -> None:
    marking.post("/lab/vi-present?present=1&lesson=race", headers=VI)
    html = _clean(_page(marking, "vi-present"))
    assert "Chế độ trình chiếu" in html and "Phím tắt" in html


def test_the_reasons_inside_a_422_are_translated_too(marking: FlaskClient) -> None:
    answer = marking.patch(
        "/lab/vi-422/api/settings",
        json={"lock": 3, "gateway_latency_ms": 9999, "nope": 1},
        headers={**VI, "Accept": "application/json"},
    )
    body = answer.get_json()
    assert answer.status_code == 422
    assert "must be" not in body["detail"] and "unknown setting" not in body["detail"]
    assert "lock phải là true hoặc false" in body["detail"]
    assert body["errors"]["lock"] == "must be true or false"  # the machine's member: English
    answer = marking.post(
        "/lab/vi-422/api/charges",
        json={"order_id": "42", "amount": 5.0},
        headers={**VI, "Accept": "application/json", "Idempotency-Key": "k"},
    )
    assert "amount phải là số nguyên" in answer.get_json()["detail"]


def test_amounts_use_the_language_s_digit_grouping(marking: FlaskClient) -> None:
    _charge(marking, "vi-money", "k1", ORDER)
    assert "100.000 VND" in _clean(_page(marking, "vi-money"))
    english = marking.get("/lab/vi-money", headers={"Accept-Language": "en"}).text
    assert "100,000 VND" in english  # the lab kept no language: Accept-Language decides
