"""Replaying an A/B trace: the two sides as the A/B view showed them, then the verdict."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Footer, Header, Static

from spectui.chat.turn import LiveTurn
from spectui.engine.ab import compare
from spectui.spec_config import SpecConfig
from spectui.trace.format import Trace
from spectui.trace.timeline import Step
from spectui.tui.screens.replay import ReplayScreen, finished, spec_in_force
from spectui.tui.widgets.side_pane import HORIZONTAL_BREAKPOINTS, VERTICAL_BREAKPOINTS, SidePane, Sides, VerdictBox
from spectui.tui.widgets.verdict import render_verdict


class ABReplayScreen(ReplayScreen):
    """An A/B trace: each prompt's A and B side by side, then the verdict."""

    HORIZONTAL_BREAKPOINTS = HORIZONTAL_BREAKPOINTS
    VERTICAL_BREAKPOINTS = VERTICAL_BREAKPOINTS
    DEFAULT_CSS = """
    #ab-prompt {
        height: auto;
        padding: 0 1;
        border: round $accent 50%;
    }
    ABReplayScreen.-short Header {
        display: none;
    }
    ABReplayScreen.-short #ab-prompt {
        height: 1;
        border: none;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, trace: Trace, speed: float, playing: bool, show_rejected: bool):
        super().__init__(trace, speed, playing, show_rejected)
        self.pairs = pairs(trace)
        self._shown = (-1, 0)

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Static(id="ab-prompt")
        with Sides(id="ab-sides"):
            for side in ("A", "B"):
                turn = next((t for t in self.trace.turns if t.side == side), None)
                spec = spec_in_force(turn, []) if turn else SpecConfig()  # a trace of one side only
                yield SidePane(side, (spec.types,), spec.types, spec.draft_n_max, self.show_rejected, recorded=True)
        yield VerdictBox()
        yield Static(id="status")
        yield Footer()

    @on(events.Mount)
    def _titled(self) -> None:
        """Before ReplayScreen's on_mount, which Textual calls next by itself (calling it from
        here too started a second timer, and two replays raced)."""
        self.title = "replay · A/B"

    async def show_step(self, step: Step, rebuild: bool = False) -> None:
        pair = self.pairs[step.turn]
        shown_turn, shown_n = self._shown
        panes = list(self.query(SidePane))
        if (
            rebuild
            or pair != self.pairs.get(shown_turn)
            or step.turn < shown_turn
            or (step.turn == shown_turn and step.n_events < shown_n)
        ):
            self.query_one("#ab-prompt", Static).update(
                Content.assemble(("prompt ", "$text-muted"), self.trace.turns[step.turn].prompt)
            )
            for pane in panes:
                pane.show_rejected = self.show_rejected
                await pane.clear()
            for i in pair:
                if i <= step.turn:
                    await self._feed(panes, i, 0, step.n_events if i == step.turn else None)
        else:  # forward in the same run: the rest of each side up to the step
            for i in range(shown_turn, step.turn + 1):
                await self._feed(panes, i, shown_n if i == shown_turn else 0, step.n_events if i == step.turn else None)
        self._shown = (step.turn, step.n_events)
        self._verdict(pair, step)

    async def _feed(self, panes: list[SidePane], i: int, start: int, stop: int | None) -> None:
        turn = self.trace.turns[i]
        pane = panes[0 if turn.side == "A" else 1]
        if start == 0:
            await pane.start(LiveTurn(spec_in_force(turn, [])))
        live = pane.turn
        assert live is not None  # started above, or by the step that showed the side's start
        await pane.show_events(live.extend(turn.events[start:stop]))

    def _verdict(self, pair: tuple[int, ...], step: Step) -> None:
        verdict = self.query_one("#ab-verdict", Static)
        turns = [self.trace.turns[i] for i in pair]
        done = len(turns) == 2 and step.turn == pair[-1] and step.n_events == len(turns[-1].events)
        if done:
            labels = [finished(t).message.config_label for t in turns]
            verdict.update(render_verdict(compare(turns[0].events, turns[1].events), labels, live=False))
        else:
            side = self.trace.turns[step.turn].side
            verdict.update(
                Content.styled(
                    f"replaying {side}…" if len(turns) == 2 else "this run has one side only: no verdict", "$accent"
                )
            )


def pairs(trace: Trace) -> dict[int, tuple[int, ...]]:
    """Turn index -> the indices of its A/B run: an A turn and the B turn after it."""
    out: dict[int, tuple[int, ...]] = {}
    i = 0
    while i < len(trace.turns):
        if trace.turns[i].side == "A" and i + 1 < len(trace.turns) and trace.turns[i + 1].side == "B":
            out[i] = out[i + 1] = (i, i + 1)
            i += 2
        else:
            out[i] = (i,)
            i += 1
    return out
