"""What the stats panel shows, as the chat (or a replay) knows it: no widget in it."""

from __future__ import annotations

from dataclasses import dataclass, field

from spectui.chat.turn import Baseline
from spectui.engine.events import Event
from spectui.spec_config import SpecConfig


@dataclass
class PanelState:
    """What the panel shows, from the session and the current turn."""

    spec: SpecConfig
    verify: str  # in force: "greedy" at temperature 0, else the configured mode
    events: list[Event] = field(default_factory=list)  # the current or the last turn
    baseline: Baseline | None = None  # what recent `none` turns measured on this target model
    n_ctx: int = 0
    n_past: int | None = 0  # the chat's tokens in the context; None: counted at the next answer
    memory: str = ""
    width: int = 34  # usable columns
    replay: bool = False  # a replay's panel: its advice cannot be a key to press


def speedup_reading(
    tok_s: float | None, n_rounds: int, n_drafted: int, baseline: Baseline | None, replay: bool
) -> tuple[str, str]:
    """The panel's speedup, (headline, detail), never more certain than the data: nothing
    before the first round; nothing to compare where nothing was drafted; no figure without
    a `none` turn; an unknown noise from one `none` turn; "no measurable difference" within
    what `none` varied itself."""
    if n_rounds == 0:
        return "-", "waiting for the first round"
    if n_drafted == 0:
        return "-", "drafted nothing: no speedup"
    if baseline is None or tok_s is None:
        return "-", ("no none answer before this one" if replay else "measure: none (ctrl+t), ask")
    x = tok_s / baseline.tok_s
    if baseline.spread is None:
        return f"×{x:.2f}?", "1 none answer: noise unknown"
    if abs(x - 1) <= baseline.spread:
        return "no measurable diff.", f"×{x:.2f}, within none's {baseline.spread:.0%}"
    return f"×{x:.2f}", f"none varied {baseline.spread:.0%} over {baseline.n} answers"
