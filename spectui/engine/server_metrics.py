"""A llama-server's own speculation counters (its Prometheus `/metrics`, served with
`--metrics`), read bounded and checked.

The counters are server-wide: every slot's requests, from the server's start. A slot adds
its request's counts when it is released (`metrics_on_prediction` in server-context.cpp),
so an answer still streaming is not in them yet. `n_busy_slots_per_decode` is averaged since
the server started (its n_busy_slots and n_decode are never reset), so an interval's value
comes from it and `n_decode_total` at both ends (`minus`).
`requests_*` are what the server is doing at the scrape. The server prints the counters as
C++ doubles with 6 significant digits, so past 999,999 they are rounded (`rounded`).
Counters that cannot be true (accepted above drafted, an interval where one went down, a
count past 2^53) are named as such, never shown as figures (`Impossible`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields

from spectui.engine.server_wire import ServerInfo
from spectui.errors import UserError
from spectui.spec_config import types_label
from spectui.spec_types import BASELINE, DRAFT_SIMPLE, Spec

METRICS_BYTES = 256 * 1024  # the server's /metrics is about 3 KB; one line per draft position
MAX_POSITIONS = 1024  # draft positions: llama.cpp caps --spec-draft-n-max far below
PREFIX = "llamacpp:"
PER_POS = "spec_decode_num_accepted_tokens_per_pos_total"
_COUNTERS = {
    "drafted": "spec_decode_num_draft_tokens_total",
    "accepted": "spec_decode_num_accepted_tokens_total",
    "drafts": "spec_decode_num_drafts_total",
}
_GAUGES = {
    "busy_slots_per_decode": "n_busy_slots_per_decode",
    "requests_processing": "requests_processing",
    "requests_deferred": "requests_deferred",
}
MAX_COUNT = 2**53  # a double counts by one up to here; past it a counter's increments are lost
_SAMPLE = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)(?:\{([^{}]*)\})?[ \t]+(\S+)(?:[ \t]+-?\d+)?")
_POSITION = re.compile(r'position="(\d+)"')
NO_METRICS = "{url} was started without --metrics: the server's own counters (all slots) are not shown"
NO_SPEC_COUNTERS = (
    "{url} answers /metrics without speculation counters (an older llama-server): only this client's are shown"
)


class Impossible(ValueError):
    """Counters that no one llama-server can give: the message names the counter."""


@dataclass(frozen=True)
class SpecCounters:
    """The server's speculation counters at one scrape, or over an interval (`minus`)."""

    drafted: int  # draft tokens proposed
    accepted: int  # of them, accepted by the target
    drafts: int  # verification steps (drafts checked)
    accepted_per_pos: tuple[int, ...]  # [i]: drafts whose token i was accepted
    busy_slots_per_decode: float  # mean busy slots per llama_decode: since the start, or over `minus`'s interval
    requests_processing: int
    requests_deferred: int
    rounded: bool = False  # a counter was past 999,999, printed to 6 significant digits
    decodes: int = 0  # n_decode_total: llama_decode calls since the start (speculative ones excluded)

    def impossible(self) -> str:
        """Why these counts cannot be one server's ("" where they can)."""
        if self.accepted > self.drafted:
            return f"{self.accepted} draft tokens accepted of {self.drafted} drafted"
        if any(n > self.drafts for n in self.accepted_per_pos):
            return f"{max(self.accepted_per_pos)} drafts accepted at one position of {self.drafts} drafts"
        return ""

    def minus(self, earlier: SpecCounters) -> SpecCounters:
        """The counts between `earlier` and this scrape, busy slots per decode over the same
        decodes (the requests_* gauges are this scrape's). A counter that went down is
        Impossible: a restarted server, or another one on its port, whose counts say nothing
        of the interval."""
        for name, metric in _NAMES.items():
            if (got := getattr(self, name)) < (had := getattr(earlier, name)):
                raise Impossible(f"{metric} went down from {had} to {got} between two scrapes")
        if any(a < b for a, b in zip(self.accepted_per_pos, earlier.accepted_per_pos)):
            raise Impossible(f"{PREFIX}{PER_POS} went down between two scrapes")
        decodes = self.decodes - earlier.decodes
        busy_slots = self.busy_slots_per_decode * self.decodes - earlier.busy_slots_per_decode * earlier.decodes
        n = len(self.accepted_per_pos)
        before = earlier.accepted_per_pos + (0,) * (n - len(earlier.accepted_per_pos))
        interval = SpecCounters(
            drafted=self.drafted - earlier.drafted,
            accepted=self.accepted - earlier.accepted,
            drafts=self.drafts - earlier.drafts,
            accepted_per_pos=tuple(a - b for a, b in zip(self.accepted_per_pos, before)),
            busy_slots_per_decode=max(busy_slots / decodes, 0.0) if decodes else 0.0,
            requests_processing=self.requests_processing,
            requests_deferred=self.requests_deferred,
            rounded=self.rounded or earlier.rounded,
            decodes=decodes,
        )
        if not interval.rounded and (why := interval.impossible()):  # rounded counts differ by the rounding
            raise Impossible(f"{why} between two scrapes")
        return interval

    @property
    def acceptance(self) -> float | None:
        """Accepted / drafted tokens, as llama-server logs "draft acceptance"; None: no drafts."""
        return self.accepted / self.drafted if self.drafted else None

    @property
    def per_pos_rates(self) -> tuple[float, ...]:
        """Acceptance at each draft position: accepted there / drafts (llama.cpp's "acc per pos")."""
        return tuple(n / self.drafts for n in self.accepted_per_pos) if self.drafts else ()

    @property
    def mean_accepted(self) -> float | None:
        """Tokens per verification: 1 + accepted / drafts (llama-server's "mean len")."""
        return 1 + self.accepted / self.drafts if self.drafts else None

    def as_dict(self) -> dict:
        """For a bench's JSON: the counts, and the rates derived from them."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["accepted_per_pos"] = list(self.accepted_per_pos)
        d["acceptance"] = self.acceptance
        d["per_pos_rates"] = list(self.per_pos_rates)
        return d


@dataclass(frozen=True)
class ServerWide:
    """A server's own view of its speculation, for the panel, `run` and the bench: all its
    slots' requests (other clients' too) since this session connected."""

    url: str
    n_slots: int  # its -np
    counters: SpecCounters | None  # None: it gives none (`missing` says why)
    idle: str = ""  # not_speculating()'s line, "" where it speculates
    missing: str = ""  # why there are no counters (no --metrics)

    @property
    def notes(self) -> tuple[str, ...]:
        """The lines to say once, the cause of no speculation first."""
        return tuple(n for n in (self.idle, self.missing) if n)

    def as_dict(self) -> dict:
        counters = self.counters.as_dict() if self.counters else None
        return {"url": self.url, "n_slots": self.n_slots, "counters": counters, "notes": list(self.notes)}


def parse_metrics(text: str, where: str = "/metrics") -> SpecCounters | None:
    """A llama-server's /metrics text as its speculation counters; None where it has none
    (an older server). Text that is not Prometheus' is a UserError naming `where`."""
    if len(text) > METRICS_BYTES:
        raise UserError(f"{where} is larger than {METRICS_BYTES // 1024} KiB: not a llama-server's metrics")
    values: dict[str, float] = {}
    per_pos: dict[int, float] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.fullmatch(line)
        if not m:
            raise UserError(f"{where} line {n} is not a Prometheus sample: {line[:60]!r}")
        name, labels, raw = m.groups()
        try:
            value = float(raw)
        except ValueError:
            raise UserError(f"{where} line {n}: {raw[:30]!r} is not a number") from None
        name = name.removeprefix(PREFIX)
        if name == PER_POS:
            pos = _POSITION.search(labels or "")
            if pos is None or int(pos.group(1)) >= MAX_POSITIONS:
                raise UserError(f"{where} line {n}: {PER_POS} without a position below {MAX_POSITIONS}")
            per_pos[int(pos.group(1))] = _count(value, where, n)
        elif name in values:
            raise UserError(f"{where} line {n}: {name} given twice")
        else:
            values[name] = value
    if not all(name in values for name in _COUNTERS.values()):
        return None
    if set(per_pos) != set(range(len(per_pos))):
        raise UserError(f"{where}: the draft positions of {PER_POS} are not 0, 1, 2, …")
    counts = {key: _count(values[name], where, 0) for key, name in _COUNTERS.items()}
    gauges = {key: values.get(name, 0.0) for key, name in _GAUGES.items()}
    if not all(math.isfinite(v) and v >= 0 for v in gauges.values()):
        raise UserError(f"{where}: a gauge ({', '.join(_GAUGES.values())}) is negative or not finite")
    decodes = _count(values.get("n_decode_total", 0.0), where, 0)
    raws = [values[name] for name in _COUNTERS.values()] + list(per_pos.values()) + [decodes]
    counters = SpecCounters(
        drafted=counts["drafted"],
        accepted=counts["accepted"],
        drafts=counts["drafts"],
        accepted_per_pos=tuple(int(per_pos[i]) for i in range(len(per_pos))),
        busy_slots_per_decode=gauges["busy_slots_per_decode"],
        requests_processing=round(gauges["requests_processing"]),
        requests_deferred=round(gauges["requests_deferred"]),
        rounded=any(v >= 1e6 for v in raws),
        decodes=decodes,
    )
    if why := counters.impossible():
        raise UserError(f"{where}: {why}: counters that cannot be true, not shown")
    return counters


_NAMES = {name: PREFIX + metric for name, metric in _COUNTERS.items()} | {"decodes": PREFIX + "n_decode_total"}


def _count(value: float, where: str, line: int) -> int:
    at = f"{where}{f' line {line}' if line else ''}"
    if not math.isfinite(value) or value < 0:
        raise UserError(f"{at}: a counter is {value}, not a count")
    if value > MAX_COUNT:
        raise UserError(f"{at}: a counter is {value:g}, past what a server counts by one: not shown")
    return round(value)


def metrics_refused(message: str, flag: str = "--metrics") -> bool:
    """The server's refusal says it was started without the endpoint's flag (`Start it with
    `--metrics``, `--slots`)."""
    return f"`{flag}`" in message


FIRST_ANSWERS = 2  # answers without a single draft before a speculating server is called idle
ANSWER_TOKENS = 16  # an answer that counts among them: long enough for a drafter to have tried
NOT_SPECULATING = "{url} is not speculating ({why}): {cause}"
NEEDS_SPEC_TYPE = (
    f"llama.cpp needs --spec-type as well as -md, e.g. -md DRAFT.gguf --spec-type {DRAFT_SIMPLE} (llama.cpp #25345)"
)
NO_SLOT_SPEC = "its speculation failed to start; the server's log at startup says why"
NOTHING_DRAFTED = (
    "its drafter proposed nothing: an n-gram type finds no repeats in new text, a draft model "
    "drafts nothing under its --spec-draft-p-min"
)


def not_speculating(
    url: str,
    spec_types: tuple[Spec, ...],
    *,
    slots_speculate: bool | None = None,
    drafted: int = 0,
    answers: int = 0,
    baseline: bool = False,
) -> str | None:
    """The one line saying a server does not speculate and the likely cause, or None.

    `spec_types`: its generation_settings' speculative.types; `slots_speculate`: whether its
    /slots say any slot can draft (None: not known); `drafted`: drafts over its first
    `answers` answers. A server that was given -md without --spec-type looks like one run
    without a draft: types none, no slot speculative (the vendored server loads the draft,
    finds no type to run and frees it; no answer names it). `baseline`: another server
    speculates and this one is the comparison's "none", which is no fault."""
    if spec_types == (BASELINE,):
        why = "its speculative.types is none"
        return None if baseline else NOT_SPECULATING.format(url=url, why=why, cause=NEEDS_SPEC_TYPE)
    if slots_speculate is False:
        why = f"its speculative.types is {types_label(spec_types)}, but /slots says no slot can draft"
        return NOT_SPECULATING.format(url=url, why=why, cause=NO_SLOT_SPEC)
    if answers >= FIRST_ANSWERS and drafted == 0:
        why = f"it runs {types_label(spec_types)} but drafted nothing over its first {answers} answers"
        return NOT_SPECULATING.format(url=url, why=why, cause=NOTHING_DRAFTED)
    return None


@dataclass
class Watch:
    """What a session keeps of its server's counters: at connect and after its last answer,
    and its own answers long enough to draft in, with their drafts."""

    url: str
    info: ServerInfo
    slots_speculate: bool | None  # /slots: a slot can draft; None: not known
    since: SpecCounters | None
    now: SpecCounters | None = None
    answers: int = 0
    drafted: int = 0
    baseline: bool = False  # a pool's server compared with others: without speculation, no fault

    def answered(self, n_tokens: int, drafted: int, counters: SpecCounters | None) -> None:
        """An answer ended (the server has counted it: it counts at the slot's release)."""
        if n_tokens >= ANSWER_TOKENS:
            self.answers += 1
            self.drafted += drafted
        self.now = counters or self.now

    def wide(self, missing: str) -> ServerWide:
        now = self.now or self.since
        try:
            counters = now.minus(self.since) if now and self.since else None
        except Impossible as e:
            counters, missing = None, f"{self.url}/metrics: {e}: counters that cannot be true, not shown"
        idle = not_speculating(
            self.url,
            self.info.spec_types,
            slots_speculate=self.slots_speculate,
            drafted=self.drafted,
            answers=self.answers,
            baseline=self.baseline,
        )
        return ServerWide(self.url, self.info.n_slots, counters, idle or "", missing)
