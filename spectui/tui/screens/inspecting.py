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
    """A screen with a #transcript: `inspected` says which answer the inspector walks."""

    NO_DATA_HINT = ""  # how to record the inspector's data, for an answer given without it

    def inspected(self) -> tuple[Sequence[Round], AssistantMessage] | None:
        """The answer to inspect, its rounds and its widget; None, with a notice, when none."""
        raise NotImplementedError

    async def action_inspect(self, at_round: int | None = None) -> None:
        """Open the inspector on the answer, at its last token or at round `at_round`'s first."""
        found = self.inspected()
        if found is not None:
            rounds, answer = found
            (await self.inspector()).open(Cursor(rounds, at_round), answer, self.NO_DATA_HINT)

    def inspect_round(self, index: int | None) -> None:
        """f11's round list chose a round (None: closed without one)."""
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
    """The chat: the last answer given in this session (the one f11 lists)."""

    NO_DATA_HINT = "shift+f7 turns inspect on: the next answers record it"
    controller: ChatController  # the chat screen's

    def action_toggle_inspect(self) -> None:
        self.controller.toggle_inspect()

    def inspected(self) -> tuple[Sequence[Round], AssistantMessage] | None:
        turn = self.controller.turn
        if self.controller.last_rounds() is None or turn is None:  # the first says why not
            return None
        answer = next((w for w in self.query(AssistantMessage) if w.message is turn.message), None)
        if answer is None:
            self.notify("The last answer is not on screen.", severity="warning")
            return None
        if not answer.overlay:
            self.notify("The overlay is off (ctrl+o): the token under the cursor is not highlighted.", timeout=4)
        return turn.rounds, answer
