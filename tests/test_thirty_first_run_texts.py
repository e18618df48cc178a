"""The thirty-first new-user run: what the cards and the explanation say once a setting
changes after the request they speak of."""

from __future__ import annotations

from test_eighth_run_texts import _said
from test_failures import BODY, KEY, make


def test_a_double_charge_keeps_the_cause_it_ran_under_after_the_ttl_changes() -> None:
    """Lesson 7: Pay, +25 h, Retry ("after the key expired … (TTL 24 h)"); then Key TTL set
    to 72 h turned the same request's cause into "a new key per click", 1 h into "TTL 1 h"."""
    lab = make(ttl_s=24 * 3600)
    lab.payments.create_charge(KEY, BODY)
    lab.advance(25 * 3600)
    assert lab.payments.create_charge(KEY, BODY)[1].outcome == "charged"
    before = _said(lab)
    assert "after the key expired" in before and "(TTL 24 h)" in before
    for ttl_s in (72 * 3600, 3600):
        lab.payments.update_settings({"ttl_s": ttl_s})
        assert _said(lab) == before


def test_a_double_charge_on_another_instance_keeps_its_cause_once_the_store_is_shared() -> None:
    """Lesson 8: the retry on another instance's store, then Store set to shared: the same
    request's cause became "never per click"."""
    lab = make(instances=2, store_scope="per_instance")
    lab.payments.create_charge(KEY, BODY)
    lab.payments.create_charge(KEY, BODY)
    before = _said(lab)
    assert "on another instance" in before
    lab.payments.update_settings({"store_scope": "shared"})
    assert _said(lab) == before
