"""The token inspector on a screen: which answer it walks (the chat's last, or a round chosen
in f11's list; the replay's answer on screen), and its panel under the transcript."""

from __future__ import annotations

from collections.abc import Sequence

from textual.css.query import NoMatches
from textual.screen import Screen

from spectui.chat.controller import ChatController
from spectui.chat.inspector import Cursor
from spectui.engine.events import Round
from spectui.tui.widgets.inspector import InspectorPanel
from spectui.tui.widgets.message import AssistantMessage


class InspectsAnswers(Screen):
    """A screen with a #transcript: `rounds_by_message` says which answers have rounds."""

    NO_DATA_HINT = ""  # how to record the inspector's data, for an answer given without it
    NONE_YET = "No answer to inspect yet."

    def rounds_by_message(self) -> dict[int, Sequence[Round]]:
        """The rounds of each answer that has them, by id() of its history message."""
        raise NotImplementedError

    def answers(self) -> list[tuple[Sequence[Round], AssistantMessage]]:
        """The answers on screen the inspector can walk, first to last, with their rounds."""
        rounds = self.rounds_by_message()
        return [(rounds[id(w.message)], w) for w in self.query(AssistantMessage) if id(w.message) in rounds]

    async def action_inspect(self, at_round: int | None = None) -> None:
        """Open the inspector on the last answer, at its last token or at round `at_round`'s first."""
        answers = self.answers()
        if not answers:
            self.notify(self.NONE_YET, severity="warning")
            return
        await self._open(*answers[-1], at_round)

    async def _open(self, rounds: Sequence[Round], answer: AssistantMessage, at_round: int | None = None) -> None:
        if not answer.overlay:
            self.notify("The overlay is off (ctrl+o): the token under the cursor is not highlighted.", timeout=4)
        (await self.inspector()).open(Cursor(rounds, at_round), answer, self.NO_DATA_HINT)

    async def on_inspector_panel_other_answer(self, event: InspectorPanel.OtherAnswer) -> None:
        """Page up / page down in the panel: the previous / next answer."""
        answers = self.answers()
        at = next((i for i, (_, w) in enumerate(answers) if w is event.answer), None)
        if at is None or not 0 <= at + event.step < len(answers):
            self.notify(f"No {'earlier' if event.step < 0 else 'later'} answer to inspect.", timeout=2)
            return
        await self._open(*answers[at + event.step])

    def inspect_round(self, index: int | None) -> None:
        """f11's round list chose a round of the last answer (None: closed without one)."""
        if index is not None:
            self.call_later(self.action_inspect, index)

    async def inspector(self) -> InspectorPanel:
        """The panel, mounted under the transcript the first time it is asked for."""
        try:
            return self.query_one(InspectorPanel)
        except NoMatches:
            panel = InspectorPanel()
            await self.query_one("#chat").mount(panel, after="#transcript")
            return panel

    def close_inspector(self) -> None:
        for panel in self.query(InspectorPanel):
            if panel.is_open:
                panel.close()


class InspectsChat(InspectsAnswers):
    """The chat: the answers given since the chat was opened (a reopened chat's earlier
    answers kept their text, not their rounds)."""

    NO_DATA_HINT = "shift+f7 turns inspect on: the next answers record it"
    NONE_YET = "No answer to inspect yet: the inspector walks the answers given since this chat was opened."
    controller: ChatController  # the chat screen's

    def action_toggle_inspect(self) -> None:
        self.controller.switcher.toggle_inspect()

    def rounds_by_message(self) -> dict[int, Sequence[Round]]:
        conversation = self.controller.conversation
        turns = [*conversation.answered, *([conversation.turn] if conversation.turn else [])]
        return {id(t.message): t.rounds for t in turns if t.rounds}
