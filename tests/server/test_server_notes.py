"""What the chat says of a llama-server that does not speculate: the line, once, and why
ctrl+t has nothing to switch to (on the replaying fake session; the server is not tested here)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spectui.chat.updates import Notice
from spectui.engine.server_metrics import NO_METRICS, ServerWide, not_speculating
from spectui.spec_config import Choice, SpecConfig
from spectui.spec_types import Spec
from tests.chat.fake_screen import make
from tests.fake_session import FakeSession

pytestmark = pytest.mark.usefixtures("dirs")  # own data and config dirs (conftest.py)
URL = "http://127.0.0.1:8080"
IDLE = not_speculating(URL, ("none",)) or ""


class IdleServer(FakeSession):
    """One llama-server without speculation (given -md, not --spec-type) nor --metrics."""

    def choices(self) -> tuple[Choice, ...]:
        return ((Spec.NONE,),)

    def status(self):
        return replace(super().status(), server=ServerWide(URL, 1, None, IDLE, NO_METRICS.format(url=URL)))


def test_the_chat_says_each_server_note_once_and_why_ctrl_t_does_nothing(setup):
    controller, screen = make(setup, IdleServer(spec=SpecConfig()))
    for text in ("first", "second"):
        controller.conversation.submit(text)
        screen.run(controller)
    said = [n.text for n in screen.of(Notice)]
    assert said.count(IDLE) == 1 and said.count(NO_METRICS.format(url=URL)) == 1
    controller.switcher.cycle_spec_type(1)
    assert screen.of(Notice)[-1].text == IDLE and controller.state.setup.spec.label == "none"
    assert controller.conversation.panel_state().server is not None
