"""What every session speaks: the local `Session`, a llama-server's `ServerSession` and
`ServerPool`, and the tests' replaying fake. The chat, `run`, the bench and the A/B view
are written against `ChatSession`, never against one of them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from spectui.engine.events import Event
from spectui.engine.server_metrics import ServerWide
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import Choice, SpecConfig


@dataclass(frozen=True)
class SessionStatus:
    """All a UI reads of a session: names, context use, speculation in force."""

    target: str  # the target model's name
    target_path: str  # the target's file: what a speed baseline belongs to
    draft: str | None  # the draft model's name, None without one
    n_ctx: int
    n_past: int  # tokens in the target's KV cache
    greedy: bool  # temperature 0: verification keeps the target's argmax
    spec: SpecConfig
    choices: tuple[Choice, ...]  # the --spec-type choices the loaded models (or the servers) allow
    draft_path: str | None = None  # the draft's file, None without one
    cpu_bound: bool = False  # llama.cpp's threads take every core: other work in this process slows it
    server: ServerWide | None = None  # a llama-server's own counters (all its slots); None: local
    devices: tuple[str, ...] = ()  # the GPU devices the target's layers are on (llama.cpp's names)

    @property
    def verify(self) -> str:
        """The verification that runs: greedy, or the configured match/rejection."""
        return "greedy" if self.greedy else self.spec.verify


@dataclass(frozen=True)
class GenerationLimits:
    n_predict: int = -1  # -1: until end of generation or context full
    # The benchmark's fixed output length: as llama.cpp's --ignore-eos, the target never
    # chooses an end-of-generation token (logit -inf), and the answer goes on
    ignore_eos: bool = False


def chat_messages(turns: Sequence[tuple[str, str]], system: str | None = None) -> list[dict]:
    """Chat-template messages from (role, content) pairs, the system prompt first."""
    return ([{"role": "system", "content": system}] if system else []) + [
        {"role": role, "content": content} for role, content in turns
    ]


class ChatSession(Protocol):
    """A loaded pair (or a server) that answers turns as events. `configure` takes effect
    at the next round, `set_sampling` at the next turn, `cancel` after this round; all
    three may be called from any thread. `inspect` True (between turns): each Round carries
    its Verdicts, where the session can see them (a llama-server's rounds carry none)."""

    inspect: bool

    @property
    def spec(self) -> SpecConfig: ...

    def choices(self) -> tuple[Choice, ...]: ...

    def configure(self, spec: SpecConfig) -> None: ...

    def set_sampling(self, sampling: SamplingParams) -> None: ...

    def status(self) -> SessionStatus: ...

    def memory_text(self) -> str: ...

    def generate(
        self,
        messages: list[dict] | None = None,
        tokens: Sequence[int] | None = None,
        limits: GenerationLimits = GenerationLimits(),
    ) -> Iterator[Event]: ...

    def cancel(self) -> None: ...

    def reset(self) -> None: ...

    def close(self) -> None: ...
