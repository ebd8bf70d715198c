"""The chat without its screens, as the model-free tests drive it: `Screen` stands in for the
chat screen (it keeps every update and runs each answer's job as the llama thread would), `make`
builds a controller on the replaying fake session, `state_of` a part's shared state alone."""

from __future__ import annotations

from spectui.chat.controller import ChatController
from spectui.chat.state import ChatState
from spectui.chat.updates import Generate
from spectui.config.settings import Settings
from spectui.engine.events import TurnEnd
from spectui.engine.interface import ChatSession
from spectui.store import chat_types
from tests.fake_session import FakeSession, load_recording

QUIET = Settings(record_traces=False)  # the app's settings, as a test's chat reads them


class Screen:
    """Stands in for the chat screen: keeps every update, runs each `Generate` job as the
    llama thread would, one event at a time (`between(controller, event)` may act mid-answer)."""

    def __init__(self):
        self.updates: list = []
        self.done = 0  # the Generate jobs run so far

    def __call__(self, update) -> None:
        self.updates.append(update)

    def of(self, kind) -> list:
        return [u for u in self.updates if isinstance(u, kind)]

    def run(self, controller: ChatController, between=lambda c, e: None) -> None:
        """Run the pending jobs, and those their ends start (queued messages), to the last."""
        while len(jobs := self.of(Generate)) > self.done:
            job = jobs[self.done].job
            self.done += 1
            for event in job.session.generate(messages=job.messages, limits=job.limits):
                if job.stop.is_set():
                    job.session.cancel()
                controller.conversation.add_events([event])
                between(controller, event)


FAKE = object()  # make(): a FakeSession on the setup's speculation


def make(setup, session: ChatSession | None | object = FAKE) -> tuple[ChatController, Screen]:
    screen = Screen()
    session = FakeSession(spec=setup.spec) if session is FAKE else session
    return ChatController(setup, QUIET, screen, session=session), screen


def state_of(setup, session: ChatSession | None) -> tuple[ChatState, list]:
    """The shared state alone, for one part on its own; its updates in the list."""
    updates: list = []
    return ChatState(setup, updates.append, chat_types.new_chat(setup.preset), session), updates


def answer_text() -> str:
    """The recorded answer, as every replayed turn ends."""
    return next(e for e in load_recording() if isinstance(e, TurnEnd)).text
