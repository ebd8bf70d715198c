"""What a llama-server sends, checked: the URL given for it, the fields of its answers, and
its stream cut into spectui's rounds.

With `timings_per_token`, every streamed token carries the slot's cumulative `draft_n` and
`draft_n_accepted`; they move once per verification, before that round's tokens are
streamed one by one (tools/server/server-context.cpp). So a change of the counters opens a
round of Δaccepted draft tokens plus the target's token, and Δdrafted − Δaccepted drafts
were rejected: their text is never sent, so the round shows their count instead. Times
come from the server's own timings, so tok/s is the server's.
"""

from __future__ import annotations

import math
import os
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from spectui.bounded import MIB, loads_json
from spectui.engine.events import Event, PromptDone, Round, Source, StopReason, Token, TurnEnd, TurnStart
from spectui.engine.server_errors import KEY_ENV, LOST, lost
from spectui.errors import UserError
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import NGRAM_TYPES, SpecConfig, server_types
from spectui.spec_types import Spec

STOPS = {"eos": StopReason.EOS, "word": StopReason.EOS, "limit": StopReason.N_PREDICT}
LINE_BYTES = MIB  # one streamed chunk: a token and its timings
HELD_MAX = 64  # tokens one chunk may stand for: a character's bytes split over tokens are 4 at most
NOT_A_SERVER = "is not answering as a llama-server does"


def server_url(url: str) -> urllib.parse.ParseResult:
    """`url` parsed, or a UserError saying what is wrong with it (before anything connects)."""
    hint = "give an http(s) URL such as http://127.0.0.1:8080"
    if "@" in url:  # checked first: every later message quotes the URL, and with it the password
        raise UserError(
            f"--server: a URL with '@' (USER:PASSWORD@HOST) is refused, so that no password is shown or sent; "
            f"{hint}, and the API key in {KEY_ENV}"
        )
    try:
        parsed = urllib.parse.urlparse(url if "://" in url else f"http://{url}")
        parsed.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError as e:
        raise UserError(f"--server {url!r} is not a valid URL ({e}); {hint}") from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UserError(f"--server needs an http(s) URL such as http://127.0.0.1:8080, not {url!r}")
    if any(c.isspace() or not c.isprintable() for c in url):
        raise UserError(f"--server {url!r} holds a space or a control character; {hint}")
    try:  # what connecting does to the host name; it fails there as a traceback
        parsed.hostname.encode("idna")
    except UnicodeError:
        raise UserError(
            f"--server {url!r}: a part of the host name (between dots) is empty or longer than 63 characters; {hint}"
        ) from None
    return parsed


def not_a_server(end: TurnEnd) -> bool:
    """The answer ended because the server sent what no llama-server sends (a user's wrong
    URL), not because a llama-server failed."""
    return end.stop_reason is StopReason.ERROR and NOT_A_SERVER in end.error


class BadAnswer(ValueError):
    """The server answered, but not as a llama-server does: the message names the field."""


def field(d: dict, key: str, kind: type | tuple[type, ...], where: str, default=None):
    """`d[key]` if it is a `kind` (absent: `default`), else BadAnswer naming `where` and the key."""
    value = d.get(key, default)
    if value is default or (isinstance(value, kind) and not isinstance(value, bool)):
        return value
    raise BadAnswer(f"{where}'s {key!r} is {type(value).__name__} {str(value)[:40]!r}, not {_kind(kind)}")


def _kind(kind) -> str:
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


def rejected_marker(n: int) -> str:
    """What a round shows for drafts the server rejected (it never sends their text)."""
    return f"✗{n}"


@dataclass(frozen=True)
class ServerInfo:
    """What /props and a one-token probe say about the server."""

    url: str
    model: str  # the model's alias or file name
    model_path: str
    n_ctx: int
    spec_types: tuple[Spec, ...]  # (BASELINE,) where the server does not speculate
    build: str
    props: dict  # /props as received: the environment a bench records
    n_slots: int = 1  # /props total_slots: its -np, the requests it serves at once


def server_info(url: str, props: dict, probe: dict) -> ServerInfo:
    """The server at `url` from its /props and a finished request's settings (`probe`: /props
    does not say how the server speculates), or a UserError naming the field that is wrong."""
    try:
        settings = field(props, "default_generation_settings", dict, "/props")
        n_ctx = field(settings, "n_ctx", int, "/props default_generation_settings", 0)
        generated = field(probe, "generation_settings", dict, "/completion", {})
        types = field(generated, "speculative.types", str, "/completion generation_settings")
        path = field(props, "model_path", str, "/props") or ""
        alias = field(props, "model_alias", str, "/props") or path
        n_slots = field(props, "total_slots", int, "/props", 1)
    except BadAnswer as e:
        raise UserError(f"{url} {NOT_A_SERVER}: {e}") from None
    spec_types = server_types(types or "")
    return ServerInfo(
        url,
        os.path.basename(alias) or "model",
        path,
        max(n_ctx, 0),
        spec_types,
        str(props["build_info"]),
        props,
        max(n_slots, 1),
    )


def checked_slots(data) -> list[dict]:
    """/slots as received, with the fields spectui reads checked, else BadAnswer."""
    if not isinstance(data, list) or not all(isinstance(slot, dict) for slot in data):
        raise BadAnswer(f"/slots is {type(data).__name__}, not a list of slot objects")
    for slot in data:
        field(slot, "id", int, "/slots")
        for key in ("speculative", "is_processing"):
            if not isinstance(slot.get(key, False), bool):
                raise BadAnswer(f"/slots' {key!r} is {str(slot[key])[:40]!r}, not true or false")
    return data


class Server(Protocol):
    """What Rounds reads of the session it streams for (server.py's ServerSession)."""

    url: str
    info: ServerInfo
    sampling: SamplingParams

    @property
    def spec(self) -> SpecConfig: ...


class Rounds:
    """Reads one streamed completion and cuts it into rounds by the draft counters."""

    def __init__(self, session: Server, t0: float, cancel: threading.Event):
        self.s = session
        self.cancel = cancel
        self.t0 = t0
        self.spec = session.spec
        self.source = Source.NGRAM if self.spec.types[0] in NGRAM_TYPES else Source.DRAFT
        self.counters = (0, 0)  # draft_n, draft_n_accepted so far
        self.current: dict | None = None  # the round being streamed
        self.index = 0
        self.t_server = 0.0  # the server's time so far (s): the prompt, then each round
        self.emitted: list[Token] = []
        self.n_past = 0
        self.started = False
        self.prompt_done = False

    def _start(self, chunk: dict) -> Iterator[Event]:
        """TurnStart, once: at the first chunk, which says how long the prompt was."""
        if not self.started:
            self.started = True
            timings = chunk.get("timings") or {}
            yield TurnStart(
                t=self.t0,
                n_prompt=int(chunk.get("tokens_evaluated") or 0),
                n_prompt_decoded=int(timings.get("prompt_n") or 0),
                n_ctx=self.s.info.n_ctx,
                config=self.spec.as_dict(),
            )

    def _t(self, timings: dict) -> float:
        """A chunk's time on the server's clock (prompt + generation), else its arrival."""
        if "predicted_ms" in timings:
            return self.t0 + (timings.get("prompt_ms", 0.0) + timings["predicted_ms"]) / 1000
        return time.perf_counter()

    def read(self, response, timeout: float) -> Iterator[Event]:
        """The answer's events; `timeout`: the socket's, which a stall is reported with."""
        try:
            while raw := response.readline(LINE_BYTES + 1):
                if len(raw) > LINE_BYTES:
                    raise BadAnswer(f"a streamed line is longer than {LINE_BYTES // MIB} MiB")
                line = raw.decode("utf-8", "replace").strip()
                if line.startswith("error:"):
                    yield from self._end(StopReason.ERROR, line.removeprefix("error:").strip())
                    return
                if not line.startswith("data:"):
                    continue
                chunk = _checked(loads_json(line.removeprefix("data:").strip()))
                yield from self._chunk(chunk)
                if chunk.get("stop"):
                    stop = STOPS.get(chunk.get("stop_type") or "", StopReason.EOS)
                    full = bool(chunk.get("truncated"))
                    why = f"the server's context of {self.s.info.n_ctx} tokens is full (its -c)" if full else ""
                    yield from self._end(StopReason.CONTEXT_FULL if full else stop, why, chunk.get("timings") or {})
                    return
                if self.cancel.is_set():
                    yield from self._end(StopReason.CANCELLED, "")
                    return
        except BadAnswer as e:
            yield from self._end(StopReason.ERROR, f"{self.s.url} {NOT_A_SERVER}: {e}")
            return
        except LOST as e:
            yield from self._end(StopReason.ERROR, lost(self.s.url, "/completion", e, timeout))
            return
        except (ValueError, TypeError, KeyError) as e:  # a chunk was cut
            yield from self._end(StopReason.ERROR, f"the connection to {self.s.url} was lost: {e}")
            return
        yield from self._end(
            StopReason.ERROR, f"the connection to {self.s.url} was lost (the stream ended without its final chunk)"
        )

    def _chunk(self, chunk: dict) -> Iterator[Event]:
        yield from self._start(chunk)
        timings = chunk.get("timings") or {}
        ids, text = chunk.get("tokens") or [], chunk.get("content") or ""
        self.n_past = int(chunk.get("tokens_evaluated") or 0) + int(chunk.get("tokens_predicted") or 0)
        n = self._tokens_in(chunk, timings, bool(ids or text))
        if not n:
            return
        if not self.prompt_done:
            self.prompt_done = True
            self.t_server = timings.get("prompt_ms", 0.0) / 1000
            yield PromptDone(t=self.t0 + self.t_server, t_prompt=self.t_server)
        t = self._t(timings)
        held = n - 1 if ids or text else n  # tokens the server held back: their text is in this chunk's
        # the server leaves the counters out until the request's first draft; a chunk without timings keeps them
        counters = (
            (int(timings["draft_n"]), int(timings.get("draft_n_accepted", 0)))
            if "draft_n" in timings
            else self.counters
        )
        if counters != self.counters:  # a verification: this chunk opens its round
            self._check(counters)
            while held and self.current is not None:  # the open round's last tokens, held back
                held -= 1
                yield from self._place(-1, "", t)
            yield from self._flush()
            drafted, accepted = counters[0] - self.counters[0], counters[1] - self.counters[1]
            self.current = {"drafted": drafted, "accepted": accepted, "tokens": []}
            self.counters = counters
        for _ in range(held):
            yield from self._place(-1, "", t)
        if ids or text:
            yield from self._place(int(ids[0]) if ids else -1, text, t)

    def _tokens_in(self, chunk: dict, timings: dict, sent: bool) -> int:
        """How many tokens a chunk stands for, as the server counts them: its count so far
        (tokens_predicted, timings.predicted_n) past the tokens read before. A token that ends
        in part of a UTF-8 character is not sent alone (process_token): it comes with the one
        that completes it, or with the final chunk. Without the count, one per token sent."""
        total = chunk.get("tokens_predicted", timings.get("predicted_n"))
        if total is None:
            return int(sent)
        n = int(total) - self.n_tokens
        if n > HELD_MAX:
            raise BadAnswer(
                f"a streamed chunk's tokens_predicted {int(total)} is {n} past the tokens streamed before it"
            )
        return max(n, int(sent))

    @property
    def n_tokens(self) -> int:
        return len(self.emitted) + len(self.current["tokens"] if self.current else ())

    def _check(self, counters: tuple[int, int]) -> None:
        """Draft counters that no slot can give are BadAnswer, never a round's figures."""
        drafted, accepted = counters
        if accepted > drafted or drafted < self.counters[0] or accepted < self.counters[1]:
            raise BadAnswer(
                f"a streamed chunk's timings say {accepted} draft tokens accepted of {drafted} drafted, "
                f"after {self.counters[1]} of {self.counters[0]}: counters that cannot be true"
            )

    def _place(self, token_id: int, piece: str, t: float) -> Iterator[Event]:
        """One token into the open round (a step without a draft where none is open), the
        accepted drafts first; the target's token closes it."""
        if self.current is None:
            self.current = {"drafted": 0, "accepted": 0, "tokens": []}
        c = self.current
        source = self.source if len(c["tokens"]) < c["accepted"] else Source.TARGET
        c["tokens"].append(Token(token_id, piece, source))
        c["t"] = t
        if len(c["tokens"]) > c["accepted"]:
            yield from self._flush()

    def _flush(self) -> Iterator[Event]:
        c, self.current = self.current, None
        if not c or not c["tokens"]:
            return
        accepted, tokens = c["accepted"], tuple(c["tokens"])
        n_rejected = max(c["drafted"] - accepted, 0)
        known = tuple(t.id for t in tokens[:accepted])  # the accepted drafts that were streamed
        t_gen = c["t"] - self.t0 - self.t_server
        self.t_server = c["t"] - self.t0
        self.emitted.extend(tokens)
        yield Round(
            index=self.index,
            t=c["t"],
            spec_type=self.spec.label if c["drafted"] else None,
            drafted=known + (-1,) * (accepted + n_rejected - len(known)),
            n_accepted=accepted,
            rejected=(-1,) * n_rejected,
            rejected_text=rejected_marker(n_rejected) if n_rejected else "",
            tokens=tokens,
            t_draft=0.0,
            t_verify=max(t_gen, 0.0),
            t_other=0.0,
            n_max=self.spec.draft_n_max,
            verify="greedy" if self.s.sampling.temp <= 0 else "match",
            n_past=self.n_past,
            configured=self.spec.types,
            t_llama=max(t_gen, 0.0),
        )
        self.index += 1

    def _end(self, stop: StopReason, error: str, timings: dict | None = None) -> Iterator[Event]:
        yield from self._start({})
        yield from self._flush()
        t = self._t(timings) if timings else time.perf_counter()
        yield TurnEnd(
            t=max(t, self.t0 + self.t_server),
            stop_reason=stop,
            text="".join(tok.piece for tok in self.emitted),
            n_generated=len(self.emitted),
            error=error,
            tokens=tuple(tok.id for tok in self.emitted),
        )


_NUMBER = (int, float)
_CHUNK_FIELDS = {"tokens": list, "content": str, "tokens_evaluated": int, "tokens_predicted": int, "stop_type": str}
_TIMING_FIELDS = ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "draft_n", "draft_n_accepted")


def _checked(chunk) -> dict:
    """A streamed chunk whose fields Rounds reads have their types, else BadAnswer."""
    if not isinstance(chunk, dict):
        raise BadAnswer(f"a streamed chunk is {type(chunk).__name__} {str(chunk)[:40]!r}, not an object")
    for key, kind in _CHUNK_FIELDS.items():
        field(chunk, key, kind, "a streamed chunk")
    if not all(isinstance(t, int) and not isinstance(t, bool) for t in chunk.get("tokens") or ()):
        raise BadAnswer("a streamed chunk's 'tokens' holds something other than token ids")
    timings = field(chunk, "timings", dict, "a streamed chunk") or {}
    for key in _TIMING_FIELDS:
        if not math.isfinite(field(timings, key, _NUMBER, "a streamed chunk's timings", 0)):
            raise BadAnswer(f"a streamed chunk's timings {key!r} is not a finite number")
    return chunk
