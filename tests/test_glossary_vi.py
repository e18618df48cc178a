"""The Vietnamese catalogue keeps its glossary: one term, one rendering, no word with a
wrong everyday meaning; the badges a hint quotes exist; a declined card and a refused key
read differently; step names keep their code name with a gloss."""

from __future__ import annotations

import re

import pytest
from babel.messages.pofile import read_po

from demo import create_app
from demo.engine.text import Text, translate
from demo.payments.step_names import step_name
from demo.web.i18n import MISSING, TRANSLATIONS

PO = TRANSLATIONS / "vi" / "LC_MESSAGES" / "messages.po"

# The "Avoid" column of the project's Vietnamese glossary (GLOSSARY-vi.md, kept beside
# the repository), copied here so the test needs nothing outside it. Each word has a
# wrong everyday meaning or is the second rendering of a term that must have one.
AVOID = {
    "khóa": "key (collides with lock)",
    "key cố định": "stable key: key ổn định",
    "dự định": "intent: ý định (dự định is a plan)",
    "tác dụng phụ": "side effect (a drug's side effect)",
    "khử trùng": "dedup: chống trùng (khử trùng is disinfect)",
    "nguyên tử": "atomic",
    "cổng thanh toán": "gateway",
    "máy chủ": "server",
    "khoản thu": "a charge: lần trừ tiền (khoản thu is revenue)",
    "in-flight": "in flight: đang xử lý / đang chờ (it splits as in-/flight on screen)",
    "sự cố sập": "crash: sập",
    "xung đột": "key reused: keep the HTTP name Conflict",
    "hóa đơn": "receipt e-mail: email biên lai (hóa đơn is an invoice)",
    "e-mail": "the article writes email",
    "giữ chỗ": "reserve key (giữ chỗ is seat booking)",
    "cài lỗi": "arm a fault: gài lỗi",
    "gỡ lỗi": "disarm: hủy lỗi đã gài (gỡ lỗi is debug)",
    "sổ cái": "ledger stays English as a label",
    "đã sửa: tắt": "fix OFF is not 'fixed: off'",
    "Bước %(label)s": "step a lane: chạy 1 bước (Bước A reads as a noun)",
    "response": "response: phản hồi",
}

# "phát lại" is only for replaying an exported history, never a response's replay.
EXPORTED_HISTORY = ("exported history", "Read-only replay", "Open the replay")


def catalogue() -> dict[str, str]:
    with PO.open("rb") as fh:
        po = read_po(fh)
    return {m.id: m.string for m in po if m.id and isinstance(m.id, str) and m.string}


@pytest.mark.parametrize("word", sorted(AVOID))
def test_no_avoided_word_in_any_msgstr(word: str) -> None:
    exact = word != word.lower()  # "Bước A" is the noun; "chạy 1 bước A" is right
    found = [i for i, s in catalogue().items() if word in (s if exact else s.lower())]
    assert found == [], f"{word!r} ({AVOID[word]}) in {found}"


def test_phat_lai_is_only_an_exported_history_replay() -> None:
    found = [
        i
        for i, s in catalogue().items()
        if "phát lại" in s.lower() and not any(w.lower() in i.lower() for w in EXPORTED_HISTORY)
    ]
    assert found == []


def test_the_avoid_list_is_checked_against_the_real_catalogue() -> None:
    # The test above could pass on an empty or unreadable catalogue: it must not.
    words = catalogue()
    assert len(words) > 300
    assert words["Ledger"] == "Ledger"


def test_a_declined_card_and_a_refused_key_read_differently() -> None:
    words = catalogue()
    declined = words["402 DECLINED"]
    refused = words["%(status)s REFUSED"]
    conflict = words["%(status)s CONFLICT"]
    assert "THẺ" in declined and "THẺ" not in refused
    assert "TỪ CHỐI" not in refused
    assert conflict == "%(status)s CONFLICT"  # the HTTP status name stays
    assert words["%(status)s CONFLICT — same key, different request"].startswith(
        "%(status)s CONFLICT — "
    )


def test_every_decline_says_the_card() -> None:
    # A bare "bị từ chối" must not stand for a declined card: it reads like a refused key.
    words = catalogue()
    declines = {i: s for i, s in words.items() if re.search(r"\bdeclin", i, re.I)}
    assert len(declines) >= 8
    assert [i for i, s in declines.items() if "thẻ" not in s.lower()] == []


def test_fix_badges_say_the_fix_not_fixed() -> None:
    words = catalogue()
    assert words["fix OFF"] != words["fix ON"]
    assert not words["fix OFF"].lower().startswith("đã sửa")


def _badges(words: dict[str, str]) -> tuple[set[str], set[str]]:
    """The badge texts in both languages: the catalogue's all-capitals entries (the
    outcome badges), without their leading status placeholder."""
    english, vietnamese = set(), set()
    for msgid, msgstr in words.items():
        if re.fullmatch(r"(%\(status\)s )?[A-Z0-9 ·]+", msgid) and re.search("[A-Z]{3}", msgid):
            english.add(msgid.removeprefix("%(status)s "))
            vietnamese.add(msgstr.removeprefix("%(status)s "))
    return english, vietnamese


def test_the_badges_a_hint_quotes_exist() -> None:
    words = catalogue()
    english, vietnamese = _badges(words)
    assert {"REPLAYED", "CHARGED", "402 DECLINED"} <= english
    quoted_en = {m for i in words for m in re.findall(r"the ([A-Z0-9 ]+[A-Z]) badge", i)}
    quoted_vi = {
        m
        for s in words.values()
        for m in re.findall(r"nhãn ([A-ZĐÃÁÀẢẠÊỆỀẾỂỄƯỪỨỰỬỮ0-9 ]+[A-ZĐÃÁÀẢẠÊỆỀẾỂỄƯỪỨỰỬỮ])", s)
    }
    assert "REPLAYED" in quoted_en and "ĐÃ REPLAY" in quoted_vi
    assert quoted_en <= english
    assert quoted_vi <= vietnamese


def test_labels_a_hint_quotes_exist() -> None:
    # “…” in a Vietnamese hint quotes an option or a button as the page shows it.
    words = catalogue()
    shown = set(words.values())
    quoted = {
        q
        for s in words.values()
        for q in re.findall(r"“([^”]+)”", s)
        if not re.fullmatch(r"%\(\w+\)s", q)  # a title filled in when shown
    }
    assert quoted, "no quoted label left to check"
    assert quoted <= shown


GLOSSED = ("lookup", "fingerprint check", "lock wait", "lock acquire", "gateway charge")


@pytest.mark.parametrize("step", GLOSSED)
def test_a_step_name_in_a_sentence_comes_with_its_gloss(step: str) -> None:
    words = catalogue()
    gloss = words[step]
    assert gloss.startswith(step + " (") and gloss.endswith(")")
    bare = [
        i for i, s in words.items() if i != step and re.search(rf"\b{step}\b", s) and gloss not in s
    ]
    assert bare == []


def test_the_paused_lane_shows_the_step_and_its_gloss() -> None:
    app = create_app({"TESTING": True, "I18N_MARK_MISSING": True})
    with app.test_request_context(headers={"Accept-Language": "vi"}):
        render = app.jinja_env.filters["step_name"]
        assert render("lookup") == "lookup (tra cứu)"
        assert render("no such step") == "no such step"
    with app.test_request_context(headers={"Accept-Language": "en"}):
        assert app.jinja_env.filters["step_name"]("lookup") == "lookup"


def test_a_crash_names_its_step_with_the_gloss() -> None:
    app = create_app({"TESTING": True, "I18N_MARK_MISSING": True})
    text = Text("✕ instance crashed after %(step)s", step=step_name("gateway charge"))
    assert str(text) == "✕ instance crashed after gateway charge"  # English: the code name
    with app.test_request_context(headers={"Accept-Language": "vi"}):
        words = translate(text)
    assert MISSING not in words
    assert words == "✕ instance bị sập sau gateway charge (gọi gateway trừ tiền)"
