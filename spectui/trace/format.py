"""The trace format: versioned JSON Lines, one record per line (docs/trace-format.md).

Line 1 is the header: what ran where (models, machine, build, settings). Then turns: a
`turn` record (the user's prompt, the A/B side), the engine's events of that turn as
they came (TurnStart, PromptDone, Round..., TurnEnd), and `config` records where the
configuration changed while the turn ran. Reading checks every line and names the first
bad one, so a truncated or garbled file is refused, not half-replayed.
"""

from __future__ import annotations

import json
import math
import time
import types
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Union, get_args, get_origin, get_type_hints

from spectui.bounded import DATA_BYTES, loads_json, read_bytes
from spectui.config.paths import open_private, private_dir, write_atomic
from spectui.engine.events import Event, PromptDone, Round, Source, StopReason, Token, TurnEnd, TurnStart
from spectui.engine.verdicts import Verdict
from spectui.errors import UserError
from spectui.llama.devices import record_text
from spectui.spec_config import SpecConfig, config_label, parse_types, recorded_types, types_label
from spectui.spec_types import BASELINE

FORMAT = "spectui-trace"
VERSION = 3  # 2: a Round's optional verdicts (inspect mode); 3: a verdict's emitted_p; older ones read as before
SIDES = ("A", "B")
_EVENTS = {"TurnStart": TurnStart, "PromptDone": PromptDone, "Round": Round, "TurnEnd": TurnEnd}


@dataclass(frozen=True)
class ConfigChange:
    """The configuration changed while a turn ran (it applies from the next round)."""

    t: float
    config: dict  # SpecConfig.as_dict()


@dataclass
class TraceTurn:
    prompt: str  # the user's message
    events: list[Event] = field(default_factory=list)  # TurnStart ... TurnEnd
    changes: list[ConfigChange] = field(default_factory=list)
    side: str | None = None  # "A" or "B" in an A/B trace
    label: str = ""  # what the turn was run as (the bench: configuration, prompt, pass)
    memory: str = ""  # the recording machine's memory in use ("GPU ... / RSS ...") at the start

    @property
    def end(self) -> TurnEnd:
        end = self.events[-1]
        assert isinstance(end, TurnEnd), "a finished turn's last event is its TurnEnd"
        return end

    @property
    def config_label(self) -> str:
        """The configuration the turn started with ("draft-simple n-max 3")."""
        start = self.events[0]
        assert isinstance(start, TurnStart), "a turn's first event is its TurnStart"
        return config_label(recorded_types(start.config), start.config.get("draft_n_max", 0))

    def lines(self) -> list[str]:
        records = [
            {"kind": "turn", "prompt": self.prompt, "side": self.side, "label": self.label, "memory": self.memory}
        ]
        records += _merged(self.events, self.changes)
        return [json.dumps(r, ensure_ascii=False) for r in records]


@dataclass
class Trace:
    header: dict
    turns: list[TraceTurn] = field(default_factory=list)

    @property
    def is_ab(self) -> bool:
        return any(t.side for t in self.turns)

    def text(self) -> str:
        return (
            "\n".join([json.dumps(self.header, ensure_ascii=False)] + [ln for t in self.turns for ln in t.lines()])
            + "\n"
        )

    def write(self, path: Path) -> Path:
        """Atomically: a reader sees the old file or the whole new one."""
        return write_atomic(Path(path), self.text())


def header(recorded_by: str, environment: dict, settings: dict) -> dict:
    """`environment`: models, machine and build (launch.environment.collect); `settings`: the
    Setup's values."""
    return {
        "kind": "header",
        "format": FORMAT,
        "version": VERSION,
        "recorded_by": recorded_by,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "environment": environment,
        "settings": settings,
    }


def machine_line(head: dict) -> str:
    """Where a trace was recorded, in one line: "recorded on AMD EPYC, 2 cores, CPU only"."""
    env = head["environment"]
    gpus = env.get("gpus") or []
    gpu = ", ".join(record_text(g) if isinstance(g, dict) else str(g) for g in gpus) if gpus else "CPU only"
    return f"recorded on {env.get('cpu', '?')}, {env.get('cpu_count', '?')} cores, {gpu}"


def append_turn(path: Path, head: dict, turn: TraceTurn) -> None:
    """Add a finished turn to a trace file, starting it with `head` when new (recording
    every chat). Whole turns only: a crash loses at most the turn that was running."""
    path = Path(path)
    try:
        private_dir(path.parent)
        new = not path.exists() or path.stat().st_size == 0
        with open_private(path, "a") as f:
            f.write("\n".join(([json.dumps(head, ensure_ascii=False)] if new else []) + turn.lines()) + "\n")
    except OSError as e:
        raise UserError(f"cannot write trace {path}: {e.strerror or e}") from e


# --- events <-> records ------------------------------------------------------------


# Fields written only when set, so other lines stay as version 1 wrote them (a reader of a
# line without them gets these defaults): Round's that only spec type auto (probe, t_sync) or
# inspect mode (verdicts) set, and TurnStart's count of messages a long chat's prompt left out.
OPTIONAL: dict[type, dict[str, object]] = {
    Round: {"probe": False, "t_sync": 0.0, "verdicts": ()},
    TurnStart: {"n_left_out": 0},
}


def event_record(event: Event | ConfigChange) -> dict:
    if isinstance(event, ConfigChange):
        return {"kind": "config", "t": event.t, "config": event.config}
    record = {"kind": type(event).__name__, **asdict(event)}
    if isinstance(event, Round):  # written as --spec-type's text, as it always was
        record["configured"] = types_label(event.configured)
    for key, default in OPTIONAL.get(type(event), {}).items():
        if record[key] == default:
            del record[key]
    return record


def _merged(events: list[Event], changes: list[ConfigChange]) -> list[dict]:
    """Events and configuration changes in time order: a change goes before the first
    event after it (changes after the turn ended belong to no turn)."""
    out, pending = [], sorted(changes, key=lambda c: c.t)
    for event in events:
        while pending and pending[0].t <= event.t and not isinstance(event, TurnStart):
            out.append(event_record(pending.pop(0)))
        out.append(event_record(event))
    return out


TEXT_FIELDS = ("piece", "rejected_text", "text")  # may be None: a trace of ids only


def _fits(value, hint) -> bool:
    """Is a decoded JSON value of the field's declared type (finite numbers only)?"""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_fits(value, h) for h in get_args(hint))
    if origin is tuple:
        args = get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return isinstance(value, tuple) and all(_fits(v, args[0]) for v in value)
        return isinstance(value, tuple) and len(value) == len(args) and all(map(_fits, value, args))
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is type(None):
        return value is None
    if isinstance(hint, type) and issubclass(hint, Enum) or hint in (Token, Verdict):
        return isinstance(value, hint) and (hint not in (Token, Verdict) or _wrong_fields(value) == [])
    return isinstance(value, get_origin(hint) or hint)


def _wrong_fields(obj) -> list[str]:
    hints = get_type_hints(type(obj))
    return [
        f.name
        for f in fields(obj)
        if not (getattr(obj, f.name) is None and f.name in TEXT_FIELDS)
        and not _fits(getattr(obj, f.name), hints[f.name])
    ]


def event_from_record(d: dict) -> Event | ConfigChange:
    """The inverse of event_record, checked field by field against the event's types. A
    token's text may be missing (None): see missing_text(). Raises KeyError, TypeError or
    ValueError on a malformed record."""
    d = dict(d)
    kind = d.pop("kind")
    if kind == "config":
        if not _fits(d["t"], float) or not isinstance(d["config"], dict):
            raise TypeError("a config record needs a number 't' and an object 'config'")
        return ConfigChange(d["t"], d["config"])
    if kind == "Round":
        d["tokens"] = tuple(Token(t["id"], t.get("piece"), Source(t["source"])) for t in d["tokens"])
        d["drafted"], d["rejected"] = tuple(d["drafted"]), tuple(d["rejected"])
        d.setdefault("rejected_text", None)
        d["verdicts"] = tuple(_verdict(v) for v in d.get("verdicts", ()))
        try:  # --spec-type's text ("" before rounds carried their types)
            d["configured"] = parse_types(d["configured"]) if d.get("configured") else ()
        except UserError as e:
            raise ValueError(str(e)) from None
    elif kind == "TurnEnd":
        d["stop_reason"] = StopReason(d["stop_reason"])
        d["tokens"] = tuple(d.get("tokens", ()))
        d.setdefault("text", None)
    event = _EVENTS[kind](**d)
    wrong = _wrong_fields(event)
    if wrong:
        raise TypeError(f"wrong type of {', '.join(wrong)}")
    if isinstance(event, Round) and not 0 <= event.n_accepted <= len(event.drafted):
        raise ValueError(f"n_accepted {event.n_accepted} is not within the {len(event.drafted)} drafted")
    if isinstance(event, Round):
        _check_verdicts(event)
    return event


def _verdict(d: dict) -> Verdict:
    """A verdict record as event_record wrote it (top as [id, p] pairs); its types are checked with its Round's."""
    if not isinstance(d, dict):
        raise TypeError("a verdict must be a JSON object")
    d = dict(d)
    if isinstance(d.get("top_text"), list):  # (text: a str, checked with the rest)
        d["top_text"] = tuple(d["top_text"])
    if isinstance(d.get("top"), list):
        d["top"] = tuple(tuple(pair) if isinstance(pair, list) else pair for pair in d["top"])
    return Verdict(**d)


def _check_verdicts(r: Round) -> None:
    """Each verdict at a drafted position, of the token drafted there, with probabilities in [0, 1]."""
    for v in r.verdicts:
        if not (0 <= v.position < len(r.drafted) and r.drafted[v.position] == v.token):
            raise ValueError(f"a verdict for token {v.token} at position {v.position}, which did not draft it")
        if v.top_text and len(v.top_text) != len(v.top):
            raise ValueError(
                f"a verdict at position {v.position} with {len(v.top_text)} texts for {len(v.top)} candidates"
            )
        ps = [v.p, v.q, v.acceptance, v.draw, v.emitted_p, *(p for _, p in v.top)]
        if not all(0 <= p <= 1 for p in ps if p is not None):
            raise ValueError(f"a verdict at position {v.position} with a probability outside 0..1")


# --- reading -------------------------------------------------------------------------


def _fail(path: Path, line: int, what: str) -> UserError:
    return UserError(f"{path}, line {line}: {what}")


def _check_header(path: Path, d: dict) -> None:
    if d.get("kind") != "header" or d.get("format") != FORMAT:
        raise _fail(path, 1, f"not a spectui trace (the first line must be its header, format '{FORMAT}')")
    version = d.get("version")
    if not isinstance(version, int) or version < 1:
        raise _fail(path, 1, f"the header's version must be a whole number, got {version!r}")
    for key in ("environment", "settings"):
        if not isinstance(d.get(key), dict):
            raise _fail(path, 1, f"the header's '{key}' must be a JSON object")
    spec_type = d["settings"].get("spec_type", BASELINE)
    try:
        parse_types(spec_type if isinstance(spec_type, str) else str(spec_type))
    except UserError as e:
        raise _fail(path, 1, f"the header's settings.spec_type: {e}") from None
    models = d["environment"].get("models", {})
    if not isinstance(models, dict) or not all(isinstance(m, dict) for m in models.values()):
        raise _fail(path, 1, "the header's environment.models must map roles to JSON objects")
    if not isinstance(d["environment"].get("gpus", []), list):
        raise _fail(path, 1, "the header's environment.gpus must be a list")
    if version > VERSION:
        raise UserError(
            f"{path} is trace version {version}, written by a newer spectui; this one reads up to "
            f"version {VERSION}: upgrade spectui to replay it"
        )


def _lines(path: Path) -> tuple[list[str], bool]:
    """The trace's lines, and whether its last one ended (one that did not was cut off)."""
    raw = read_bytes(path, "trace", DATA_BYTES)
    if not raw.strip():
        raise UserError(f"{path} is empty: not a spectui trace")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        bad_line = raw[: e.start].count(b"\n") + 1
        raise _fail(path, bad_line, "not UTF-8 text: the trace is damaged") from e
    return text.removesuffix("\n").split("\n"), text.endswith("\n")


def _event(path: Path, n: int, d: dict):
    """Line `n`'s event record as its event, its configuration checked as any SpecConfig."""
    try:
        event = event_from_record(d)
    except (KeyError, TypeError, ValueError) as e:
        raise _fail(path, n, f"a malformed {d['kind']} record ({type(e).__name__}: {e})") from e
    config = event.config if isinstance(event, (ConfigChange, TurnStart)) else None
    if config is not None:
        try:
            SpecConfig.from_dict(config)
        except (UserError, TypeError, ValueError) as e:
            raise _fail(path, n, f"a {d['kind']} record with a bad configuration: {e}") from e
    return event


def read(path: Path) -> Trace:
    """The whole trace, checked line by line; a UserError names the first bad line."""
    path = Path(path)
    lines, whole = _lines(path)
    trace: Trace | None = None
    turn: TraceTurn | None = None
    turn_line = 0
    for n, line in enumerate(lines, 1):
        try:
            d = loads_json(line)
        except json.JSONDecodeError as e:
            cut = n == len(lines) and not whole
            if n == 1:
                raise _fail(path, n, f"not a spectui trace (its first line is not JSON: {e.msg})") from e
            raise _fail(path, n, "cut off: the trace is truncated" if cut else f"not JSON ({e.msg})") from e
        if not isinstance(d, dict) or not isinstance(d.get("kind"), str):
            raise _fail(path, n, "not a trace record (a JSON object with a 'kind')")
        if trace is None:
            _check_header(path, d)
            trace = Trace(d)
            continue
        kind = d["kind"]
        if kind == "turn":
            if turn is not None:
                raise _fail(path, n, f"a new turn starts before the turn of line {turn_line} ended (no TurnEnd)")
            side = d.get("side")
            if side not in (None, *SIDES) or not isinstance(d.get("prompt"), str):
                raise _fail(path, n, "a turn record needs a 'prompt' string and a side of A, B or null")
            turn, turn_line = (
                TraceTurn(d["prompt"], side=side, label=str(d.get("label") or ""), memory=str(d.get("memory") or "")),
                n,
            )
            continue
        if kind not in _EVENTS and kind != "config":
            raise _fail(path, n, f"unknown record kind {kind!r}")
        if turn is None:
            raise _fail(path, n, f"a {kind} record outside a turn (no 'turn' record before it)")
        event = _event(path, n, d)
        if isinstance(event, ConfigChange):
            turn.changes.append(event)
            continue
        if not turn.events and not isinstance(event, TurnStart):
            raise _fail(path, n, f"a {kind} before the turn's TurnStart")
        turn.events.append(event)
        if isinstance(event, TurnEnd):
            trace.turns.append(turn)
            turn = None
    if trace is None:
        raise UserError(f"{path} is empty: not a spectui trace")
    if turn is not None:
        raise _fail(path, turn_line, "this turn has no end (TurnEnd): the trace is truncated")
    return trace
