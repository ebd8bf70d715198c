"""Speculation under concurrency: `c` requests at once against llama-servers started with
`-np N`, to see whether speculation still pays when several people share one server.

A level is one burst: `c` clients (one ServerSession each: a session serves one request at
a time) send their requests together and each receives exactly `n_predict` tokens of a
prompt of the bench's set, rotated so that consecutive requests differ. Every request
starts cold (no prompt cache) at temperature 0, as the bench's runs do. Times are the
client's clock at each streamed round's arrival, so TTFT and inter-token latency are what
a user of the shared server waits; the statistics are engine.stats' (summarize()).

Order: one warm-up burst per server at the largest level (not recorded), then `repeat`
passes; a pass runs every level from the lowest up, each with every server in turn, the
server that goes first rotating from pass to pass (as protocol.rotated), so drift hits both.
A server that fails a request ends the measurement (marked failed); Ctrl+C ends it
(marked partial); either way the bursts already measured are kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from spectui.bench.prompts import Prompt
from spectui.bench.protocol import rotated
from spectui.engine.events import Event, PromptDone, StopReason, TurnEnd, TurnStart
from spectui.engine.interface import GenerationLimits, chat_messages
from spectui.engine.server_metrics import Impossible
from spectui.engine.stats import rounds_of, summarize, token_latencies
from spectui.errors import UserError

MAX_LEVEL = 1024  # concurrent requests; more is a typo, not a plan (llama-server's -np is far smaller)


@dataclass(frozen=True)
class Request:
    """One request of a burst, on the client's clock."""

    prompt: str  # the prompt's id
    start: float  # the request sent
    end: float  # its last chunk received
    n_generated: int
    n_drafted: int  # the server's timings.draft_n for the request
    n_accepted: int  # timings.draft_n_accepted
    ttft_s: float | None
    tok_per_s: float | None  # generated tokens / (last round - first token), as llama.cpp's predicted_per_second
    itl: tuple[float, ...]  # one sample per token (engine.stats.token_latencies)
    stop_reason: str
    error: str

    @classmethod
    def from_events(cls, prompt: str, events: list[Event]) -> Request:
        summary = summarize(events)
        start = next(e for e in events if isinstance(e, TurnStart))
        end = next(e for e in events if isinstance(e, TurnEnd))
        done = next((e.t for e in events if isinstance(e, PromptDone)), None)
        return cls(
            prompt,
            start.t,
            end.t,
            summary.n_generated,
            summary.n_drafted,
            summary.n_accepted,
            summary.timing.ttft_s,
            summary.timing.tok_per_s,
            tuple(token_latencies(rounds_of(events), done)),
            end.stop_reason.value,
            end.error,
        )

    @classmethod
    def failed(cls, prompt: str, start: float, error: str) -> Request:
        now = time.perf_counter()
        return cls(prompt, start, now, 0, 0, 0, None, None, (), StopReason.ERROR.value, error)


@dataclass(frozen=True)
class Burst:
    """One level on one server in one pass: `level` requests at once."""

    server: str  # the server's label (its speculation)
    level: int
    repeat: int  # pass index from 0
    requests: tuple[Request, ...]
    counters: dict | None  # server-wide counters over the burst (SpecCounters.as_dict()), None without --metrics
    counters_note: str = ""  # why the counters were not kept though the server gives them: they cannot be true

    @property
    def wall_s(self) -> float:
        return max(r.end for r in self.requests) - min(r.start for r in self.requests)

    @property
    def error(self) -> str:
        return next((r.error for r in self.requests if r.error), "")


@dataclass(frozen=True)
class Target:
    """A server under test: its label, URL and one client session per concurrent request
    (ServerSession); the first also reads the server-wide counters around each burst."""

    label: str
    url: str
    clients: list

    def counters(self):
        """The server's counters now (engine.server_metrics.SpecCounters), None without --metrics."""
        return self.clients[0].counters()


@dataclass(frozen=True)
class Protocol:
    levels: tuple[int, ...]
    n_predict: int
    ignore_eos: bool = True
    repeat: int = 3
    warmup: int = 1
    system: str | None = None


@dataclass
class Measurement:
    bursts: list[Burst] = field(default_factory=list)
    partial: bool = False
    interrupted: str | None = None  # where Ctrl+C or the failure came
    failed: bool = False


def check_slots(levels: tuple[int, ...], url: str, slots: int) -> None:
    """A level above the server's slots (/props total_slots) would queue requests, not run
    them at once: refused."""
    if max(levels) > slots:
        top = max(levels)
        raise UserError(f"--concurrency {top} needs {top} slots; {url} has {slots}: start llama-server with -np {top}")


def _request(session, prompt: Prompt, proto: Protocol) -> Request:
    """One cold request, its rounds timed at their arrival here (the server's timings count
    from its own start of the request, not from when the client sent it)."""
    session.reset()
    limits = GenerationLimits(n_predict=proto.n_predict, ignore_eos=proto.ignore_eos)
    start = time.perf_counter()
    events: list[Event] = []
    try:
        for ev in session.generate(messages=chat_messages([("user", prompt.text)], proto.system), limits=limits):
            events.append(ev if isinstance(ev, TurnStart) else replace(ev, t=time.perf_counter()))
    except UserError as e:  # the server went away between requests
        return Request.failed(prompt.id, start, str(e))
    return Request.from_events(prompt.id, events)


def burst(target: Target, level: int, prompts: list[Prompt], first: int, proto: Protocol) -> list[Request]:
    """`level` requests at once, the k-th with prompt `first + k` (rotated through the set)."""
    out: list[Request | None] = [None] * level
    gate = threading.Barrier(level)

    def client(k: int) -> None:
        p = prompts[(first + k) % len(prompts)]
        try:
            gate.wait()
            out[k] = _request(target.clients[k], p, proto)
        except Exception as e:  # noqa: BLE001 - kept as the request's error
            out[k] = Request.failed(p.id, time.perf_counter(), f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(level)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except KeyboardInterrupt:
        for c in target.clients[:level]:
            c.cancel()
        raise
    return [r for r in out if r is not None]


OnBurst = Callable[[Burst], None]


def _over(before, after) -> tuple[dict | None, str]:
    """The server's counters over a burst, busy slots per decode included (SpecCounters.minus),
    or None and why they cannot be true."""
    if before is None or after is None:
        return None, ""
    try:
        return after.minus(before).as_dict(), ""
    except Impossible as e:
        return None, f"the server's counters over the burst cannot be true ({e}): not shown"


def measure(targets: list[Target], prompts: list[Prompt], proto: Protocol, on_burst: OnBurst) -> Measurement:
    m = Measurement()
    where = "start"
    try:
        for t in targets:
            for _ in range(proto.warmup):
                where = f"{t.label} ({t.url}), warm-up"
                warm = burst(t, max(proto.levels), prompts, 0, proto)
                if any(r.error for r in warm):
                    raise RuntimeError(next(r.error for r in warm if r.error))
        for r in range(proto.repeat):
            for level in proto.levels:
                for t in rotated(targets, r):
                    where = f"{t.label} ({t.url}) at concurrency {level}, pass {r + 1}/{proto.repeat}"
                    before = t.counters()
                    requests = burst(t, level, prompts, r * level, proto)
                    after = t.counters() if before is not None else None
                    b = Burst(t.label, level, r, tuple(requests), *_over(before, after))
                    if b.error:
                        raise RuntimeError(b.error)
                    m.bursts.append(b)
                    on_burst(b)
    except KeyboardInterrupt:
        m.partial, m.interrupted = True, where
    except Exception as e:  # noqa: BLE001 - kept in the result, which is still written
        m.partial, m.interrupted, m.failed = True, f"{where}: {e}", True
    return m
