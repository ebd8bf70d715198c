"""A model-free session for UI tests where the model is not what is tested: it replays a
recorded turn of real engine events.

It satisfies `ChatSession` (engine/interface.py; tests/typing_checks.py has the type
checker prove it). Each generate() replays the recording, retimed from now,
one round every `round_s` seconds so that a test can act mid-answer; a configuration
change shows in the rounds after it, as the engine's would.

The recording (tests/data/smollm2_turn.jsonl) is a trace of a real SmolLM2 turn, read
with spectui's own trace reader; models/test_fake_session.py checks it still matches the engine.
Re-record with: python -m tests.fake_session
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from spectui.engine.events import Event, Round, StopReason, Token, TurnEnd, TurnStart
from spectui.engine.interface import GenerationLimits, SessionStatus
from spectui.errors import UserError
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import Choice, SpecConfig, available_types, types_label
from spectui.spec_types import Spec
from spectui.trace import format as trace_format
from spectui.trace.format import Trace

RECORDING = Path(__file__).resolve().parent / "data" / "smollm2_turn.jsonl"
NAME = "Smollm2 135M 8k Lc100K Mix1 Ep2"  # the recorded model's general.name
PATH = "/fake/SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = "Write a python function that adds two numbers."
SPEC = SpecConfig(types=(Spec.DRAFT_SIMPLE,), draft_n_max=3)


def load_trace(path: Path = RECORDING) -> Trace:
    return trace_format.read(path)


def load_recording(path: Path = RECORDING) -> list[Event]:
    return list(_recorded_events(path))


@functools.cache
def _recorded_events(path: Path) -> tuple[Event, ...]:
    """Read once per run: every FakeSession replays it (its events are frozen dataclasses)."""
    return tuple(load_trace(path).turns[0].events)


class FakeSession:
    inspect = False  # replays recorded rounds, verdicts and all

    def __init__(
        self,
        events: list[Event] | None = None,
        spec: SpecConfig = SPEC,
        draft: bool = True,
        greedy: bool = True,
        n_ctx: int = 4096,
        round_s: float = 0.0,
    ):
        self.events = events if events is not None else load_recording()
        self._spec = spec
        self._draft = draft
        self.sampling = SamplingParams(temp=0.0 if greedy else 0.8)  # set_sampling() applies it at once
        self._n_ctx = n_ctx
        self._n_past = 0
        self.round_s = round_s
        self._cancel = threading.Event()
        self.closed = False
        self.resets = 0
        self.prompts: list[list[dict]] = []  # the messages of every generate() call

    @property
    def spec(self) -> SpecConfig:
        return self._spec

    def configure(self, spec: SpecConfig) -> None:
        for t in spec.types:
            if (t,) not in self.choices():
                raise UserError(
                    f"{t} is not available with these models; they allow {', '.join(map(types_label, self.choices()))}"
                )
        self._spec = spec

    def set_sampling(self, sampling: SamplingParams) -> None:
        self.sampling = sampling

    def choices(self) -> tuple[Choice, ...]:
        return tuple((t,) for t in available_types(Spec.DRAFT_SIMPLE if self._draft else None))

    def status(self) -> SessionStatus:
        return SessionStatus(
            target=NAME,
            target_path=PATH,
            draft=NAME if self._draft else None,
            n_ctx=self._n_ctx,
            n_past=self._n_past,
            greedy=self.sampling.greedy,
            spec=self._spec,
            choices=self.choices(),
            draft_path=PATH if self._draft else None,
        )

    def memory_text(self) -> str:
        return "GPU: none (CPU)\nRSS 100 MiB"

    def cancel(self) -> None:
        self._cancel.set()

    def reset(self) -> None:
        self.resets += 1
        self._n_past = 0

    def close(self) -> None:
        self.closed = True

    def generate(
        self, messages: list[dict] | None = None, tokens=None, limits: GenerationLimits = GenerationLimits()
    ) -> Iterator[Event]:
        """The recording, retimed from now; cancel() ends it after the current round."""
        self._cancel.clear()
        self.prompts.append(list(messages or []))
        shift = time.perf_counter() - self.events[0].t
        emitted: list[Token] = []
        for event in self.events:
            event = replace(event, t=event.t + shift)
            if isinstance(event, TurnStart):
                event = replace(event, config=self._spec.as_dict())
            elif isinstance(event, Round):
                if self._cancel.is_set():
                    yield self._end(StopReason.CANCELLED, emitted)
                    return
                time.sleep(self.round_s)
                spec = self._spec
                event = replace(event, t=time.perf_counter(), configured=spec.types, n_max=spec.draft_n_max)
                emitted.extend(event.tokens)
                self._n_past = event.n_past
            elif isinstance(event, TurnEnd):
                event = replace(event, t=time.perf_counter())
            yield event

    def _end(self, reason: StopReason, emitted: list[Token]) -> TurnEnd:
        return TurnEnd(
            t=time.perf_counter(),
            stop_reason=reason,
            text="".join(t.piece for t in emitted),
            n_generated=len(emitted),
            tokens=tuple(t.id for t in emitted),
        )


def record(path: Path = RECORDING) -> list[Event]:
    """One greedy SmolLM2 turn (drafting for itself, draft-simple n-max 3, 48 tokens), as a trace."""
    from rich.console import Console

    from spectui.cli.progress import ConsoleReport
    from spectui.config.embedded import resolve_model
    from spectui.config.resolve import resolve
    from spectui.engine.interface import chat_messages
    from spectui.engine.resources import memory_text
    from spectui.engine.session import Session
    from spectui.launch.environment import collect
    from spectui.llama.model import Model
    from spectui.llama.sampling import SamplingParams

    setup = replace(resolve("smollm2", {"temp": 0.0, "n_predict": 48}), spec=SPEC)
    model = Model(resolve_model("smollm2-135m-instruct-q4_1", ConsoleReport(Console(stderr=True))))
    session = Session(model, model, spec=SPEC, sampling=SamplingParams(temp=0.0))
    try:
        events = list(session.generate(chat_messages([("user", PROMPT)]), limits=GenerationLimits(n_predict=48)))
        environment = collect(session, setup, hash_files=False)
    finally:
        session.close()
        model.close()
    turn = trace_format.TraceTurn(PROMPT, events, memory=memory_text())
    Trace(trace_format.header("tests.fake_session", environment, setup.values()), [turn]).write(path)
    return events


if __name__ == "__main__":
    print(f"recorded {len(record())} events into {RECORDING}")
