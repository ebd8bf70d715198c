"""What the stats panel shows, as the chat (or a replay) knows it: no widget in it."""

from __future__ import annotations

from dataclasses import dataclass, field

from spectui.engine.events import Event
from spectui.llama.spec_config import SpecConfig


@dataclass
class PanelState:
    """What the panel shows, from the session and the current turn."""

    spec: SpecConfig
    verify: str  # in force: "greedy" at temperature 0, else the configured mode
    events: list[Event] = field(default_factory=list)  # the current or the last turn
    baseline: float | None = None  # best recent `none` tok/s for this target model
    n_ctx: int = 0
    n_past: int | None = 0  # the chat's tokens in the context; None: counted at the next answer
    memory: str = ""
    width: int = 34  # usable columns
