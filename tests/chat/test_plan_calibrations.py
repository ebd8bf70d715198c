"""One plan cache file for f6 and `spectui plan`: each calibration under its prompts and
sampling, side by side, and the chat's card priced from the one for the sampling in force."""

from __future__ import annotations

import json

from spectui.chat import switcher
from spectui.chat.starters import PROMPTS
from spectui.chat.state import ChatState
from spectui.chat.updates import ConfigShown
from spectui.plan import cache, identity
from spectui.store import chat_types
from tests.conftest import RECORDED_CURVE
from tests.fake_session import FakeSession

DOC = json.loads(RECORDED_CURVE.read_text())


def _measured(setup) -> dict:
    """What `spectui plan` measures for `setup` (the recorded curve and answers, under its key)."""
    key = identity.calibration_key(setup, PROMPTS)
    return {"curve": DOC["curve"], "calibration": DOC["calibration"], "calibration_key": key}


def test_a_plan_at_other_sampling_keeps_the_calibration_it_did_not_measure(setup):
    chat, shell = setup.with_values({"temp": 0.7}), setup
    by_f6 = cache.with_calibrations(_measured(chat), None)
    by_shell = cache.with_calibrations(_measured(shell), by_f6)  # the shell's plan replaces the file
    for s in (chat, shell):  # neither measures the other's away
        assert cache.calibration_for(by_shell, identity.calibration_key(s, PROMPTS)) == DOC["calibration"]
    assert cache.calibrations(by_shell)[0]["key"] == identity.calibration_key(shell, PROMPTS)  # newest first
    assert "calibration" not in by_shell and "calibration_key" not in by_shell
    again = cache.with_calibrations(_measured(shell), by_shell)  # measured again: one entry per key
    assert len(cache.calibrations(again)) == 2
    third = setup.with_values({"temp": 0.2})
    assert cache.calibration_for(again, identity.calibration_key(third, PROMPTS)) is None


def test_the_card_reads_the_calibration_for_the_sampling_a_settings_change_brings(setup, monkeypatch):
    doc = cache.with_calibrations(_measured(setup.with_values({"temp": 0.7})), None)  # f6 measured at 0.7
    monkeypatch.setattr(switcher.loaded_pair, "cached_doc", lambda setup, status: (doc, True))
    updates: list = []
    state = ChatState(setup, updates.append, chat_types.new_chat("x"), None)
    part = switcher.SetupSwitcher(state)
    part.session_loaded(FakeSession(spec=setup.spec), setup, {})
    assert state.curve is not None and part.calibration is None  # none at this sampling
    updates.clear()
    part.apply_settings({"temp": 0.7})
    assert part.calibration is not None and ConfigShown() in updates  # the card now prices from it
    part.apply_settings({"temp": 0.3})
    assert part.calibration is None  # not a stale figure for other sampling
