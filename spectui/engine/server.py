"""A running llama-server as a speculation session: its stream turned into spectui's events
(server_wire.py reads and checks what it sends).

The server runs the speculation; spectui only watches.

The llama-server that llama-cpp-python 0.3.36 vendors fixes its speculation when it
starts: the per-request `speculative.*` fields are compiled out (`#if 0` in
server-schema.cpp). A change of spec type or n-max is therefore refused with that reason.
The API key comes from LLAMA_API_KEY (as llama-server reads it) and is sent only to the
given URL: redirects are not followed.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import fields, replace

from spectui.bounded import TEXT_BYTES, loads_json, read_stream
from spectui.engine.events import Event
from spectui.engine.interface import GenerationLimits, SessionStatus
from spectui.engine.server_checks import refuse_twice
from spectui.engine.server_errors import KEY_ENV, LOST, lost, refusal
from spectui.engine.server_metrics import (
    METRICS_BYTES,
    NO_METRICS,
    NO_SPEC_COUNTERS,
    ServerWide,
    SpecCounters,
    Watch,
    metrics_refused,
    not_speculating,
    parse_metrics,
)
from spectui.engine.server_wire import (
    NOT_A_SERVER,
    BadAnswer,
    Rounds,
    ServerInfo,
    checked_slots,
    server_info,
    server_url,
)
from spectui.errors import Failure, UserError
from spectui.llama import devices
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import MODEL_TYPES, Choice, SpecConfig, types_label

TIMEOUT_S = 120  # for an answer to start, or a streamed token to follow the last (a busy CPU server is slow)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0")
METRICS_TIMEOUT_S = 10  # /metrics waits for the server's loop; a busy one answers between decodes


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise urllib.error.HTTPError(
            req.full_url,
            code,
            f"redirected to {newurl}; not followed, so the API key stays with the URL you gave",
            headers,
            fp,
        )


def _unreachable(e: UserError) -> bool:
    """The server could not be reached, wants a key or stopped answering: the session's own
    error, not an endpoint it refuses."""
    cause = e.__cause__
    if isinstance(e, Failure):
        return True
    return isinstance(cause, OSError) and not (isinstance(cause, urllib.error.HTTPError) and cause.code != 401)


class ServerSession:
    """Speaks the part of engine.session.Session that the chat, `run` and the bench use."""

    inspect = False  # no verdicts: the server answers no per-position probabilities

    def __init__(
        self,
        url: str,
        sampling: SamplingParams = SamplingParams(),
        key: str | None = None,
        n_max: int = 3,
        watch: bool = True,
    ):
        """`watch`: read the server's counters after each answer (the panel's); False where the
        caller reads them itself, as the concurrency bench around a burst, so that no client's
        /metrics lands between the other clients' decodes."""
        parsed = server_url(url)
        self.url = f"{parsed.scheme}://{parsed.netloc}{parsed.path.rstrip('/')}"
        self.host = parsed.hostname or ""
        self.sampling = sampling
        self._key = key if key is not None else os.environ.get(KEY_ENV) or None
        self._opener = urllib.request.build_opener(_NoRedirect)
        self._cancel = threading.Event()
        self._cold = False
        self._n_past = 0
        self._watching = watch
        self.counters_note = ""  # why counters() gives None: said once, by whoever shows counters
        self.info = self._connect()
        self._spec = SpecConfig(types=self.info.spec_types, draft_n_max=n_max)
        self.watch = Watch(self.url, self.info, self._can_draft(), self._counters_or_none())

    # --- HTTP ------------------------------------------------------------------------

    def _open(self, path: str, body: dict | None = None, timeout: float | None = None):
        """The server's answer to `path`, its headers read. Not reaching it is a UserError
        (a wrong URL: exit 2); a server reached that stalls or drops the connection before
        answering is a Failure (exit 1). The timeouts are read at each call, so tests shorten them."""
        timeout = timeout or TIMEOUT_S
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path, data=data, headers=headers, method="POST" if data is not None else "GET"
        )
        try:
            return self._opener.open(request, timeout=timeout)
        except urllib.error.HTTPError as e:
            raise UserError(refusal(self.url, bool(self._key), path, e)) from e
        except urllib.error.URLError as e:  # urllib wraps what fails before the request is sent
            raise UserError(f"cannot reach llama-server at {self.url}: {e.reason}") from e
        except LOST as e:  # the request was sent: the server took it and failed to answer
            raise Failure(lost(self.url, path, e, timeout)) from e

    def _read(self, response, path: str, limit: int, timeout: float | None = None) -> bytes:
        """An answer's body, bounded; a server that stalls or resets part way is a Failure."""
        try:
            return read_stream(response, f"{self.url}{path}'s answer", limit)
        except LOST as e:
            raise Failure(lost(self.url, path, e, timeout or TIMEOUT_S)) from e

    def _any_json(self, path: str, body: dict | None = None):
        with self._open(path, body) as response:
            try:
                return loads_json(self._read(response, path, TEXT_BYTES))
            except ValueError as e:
                raise UserError(f"{self.url}{path} did not answer JSON: is it a llama-server?") from e

    def _json(self, path: str, body: dict | None = None) -> dict:
        data = self._any_json(path, body)
        if not isinstance(data, dict):
            raise UserError(f"{self.url}{path} did not answer a JSON object: is it a llama-server?")
        return data

    def _connect(self) -> ServerInfo:
        props = self._json("/props")
        if "default_generation_settings" not in props or "build_info" not in props:
            raise UserError(f"{self.url} answers /props but not as a llama-server does (no build_info)")
        # /props does not say how the server speculates; the settings of a finished request do
        probe = self._json("/completion", {"prompt": " ", "n_predict": 1, "temperature": 0.0, "cache_prompt": False})
        return server_info(self.url, props, probe)

    # --- the server's own counters (all slots) ----------------------------------------------

    def counters(self) -> SpecCounters | None:
        """The server's speculation counters now: all slots, since it started. None where it
        gives none (started without --metrics, or too old): `counters_note` says why, and
        later calls ask no more. Not reaching the server is a UserError, as for an answer."""
        if self.counters_note:
            return None
        where = f"{self.url}/metrics"
        try:
            with self._open("/metrics", timeout=METRICS_TIMEOUT_S) as response:
                text = self._read(response, "/metrics", METRICS_BYTES, METRICS_TIMEOUT_S).decode("utf-8", "replace")
            counters = parse_metrics(text, where)
        except UserError as e:
            if _unreachable(e):
                raise
            self.counters_note = NO_METRICS.format(url=self.url) if metrics_refused(str(e)) else str(e)
            return None
        if counters is None:
            self.counters_note = NO_SPEC_COUNTERS.format(url=self.url)
        return counters

    def _counters_or_none(self, after_answer: bool = False) -> SpecCounters | None:
        """counters(), or None while the server cannot be reached (the next answer says why).
        One that stalls or resets is a Failure; after an answer, which is kept whatever
        /metrics does, it only ends the counters, said once (`counters_note`)."""
        try:
            return self.counters()
        except Failure as e:
            if not after_answer:
                raise
            self.counters_note = str(e)
        except UserError:
            pass
        return None

    def _can_draft(self) -> bool | None:
        """Whether /slots says a slot can draft; None where it does not say."""
        try:
            slots = self.slots()
        except Failure:
            raise
        except UserError:
            return None
        return None if slots is None else any(s.get("speculative") for s in slots)

    def wide(self) -> ServerWide:
        """The server's counters since this session connected, as of its last answer, and
        the lines to say about them once."""
        return self.watch.wide(self.counters_note)

    def slots(self) -> list[dict] | None:
        """/slots: each slot's `id`, `speculative` (it can draft) and `is_processing`; None
        where the server was started with --no-slots. A list that is not of slot objects is a
        UserError naming the field."""
        try:
            data = self._any_json("/slots")
        except UserError as e:
            if _unreachable(e) or not metrics_refused(str(e), "--slots"):
                raise
            return None
        try:
            return checked_slots(data)
        except BadAnswer as e:
            raise UserError(f"{self.url} {NOT_A_SERVER}: {e}") from None

    # --- the session interface ---------------------------------------------------------

    @property
    def spec(self) -> SpecConfig:
        return self._spec

    def choices(self) -> tuple[Choice, ...]:
        return (self._spec.types,)

    def configure(self, spec: SpecConfig) -> None:
        if spec.types != self._spec.types or (spec.uses_n_max and spec.draft_n_max != self._spec.draft_n_max):
            idle = not_speculating(self.url, self.info.spec_types) if spec.drafting else None
            raise UserError(
                f"llama-server fixes its speculation when it starts ({self._spec.label}); its "
                "per-request settings are compiled out in this llama.cpp: restart it with other "
                "--spec-type / --spec-draft-n-max" + (f". {idle}" if idle else "")
            )
        self._spec = spec

    def status(self) -> SessionStatus:
        has_model = bool(set(self._spec.types) & set(MODEL_TYPES))  # an n-gram server has no draft model
        return SessionStatus(
            target=f"{self.info.model} on {self.host}",
            target_path=self.info.model_path,
            draft="on the server" if has_model else None,
            n_ctx=self.info.n_ctx,
            n_past=self._n_past,
            server=self.wide(),
            greedy=self.sampling.temp <= 0,
            spec=self._spec,
            choices=self.choices(),
            draft_path="on the server" if has_model else None,
        )

    def set_sampling(self, sampling: SamplingParams) -> None:
        """Sampling goes with every request: from the next answer."""
        self.sampling = sampling

    def memory_text(self) -> str:
        if self.host in LOCAL_HOSTS:
            return f"{devices.describe()}\n(the server's machine)"
        return "remote: the server's memory is not visible here"

    def cancel(self) -> None:
        self._cancel.set()

    def reset(self) -> None:
        """The next request starts cold (no prompt cache), as a local reset does."""
        self._cold = True
        self._n_past = 0

    def close(self) -> None:
        pass

    # --- generation --------------------------------------------------------------------

    def _request_body(self, prompt: str, limits: GenerationLimits) -> dict:
        s = self.sampling
        body = {
            "prompt": prompt,
            "stream": True,
            "timings_per_token": True,
            "n_predict": limits.n_predict,
            "ignore_eos": limits.ignore_eos,
            "cache_prompt": not self._cold,
        }
        # the sampling by llama-server's names; an unset one (seed None: random) is the server's default
        body |= {f.metadata["wire"]: v for f in fields(s) if (v := getattr(s, f.name)) is not None}
        return body

    def generate(
        self, messages: list[dict] | None = None, tokens=None, limits: GenerationLimits = GenerationLimits()
    ) -> Iterator[Event]:
        self._cancel.clear()
        prompt = self._json("/apply-template", {"messages": messages or []}).get("prompt")
        if not isinstance(prompt, str):
            raise UserError(f"{self.url}/apply-template gave no prompt: is it a llama-server with a chat template?")
        t0 = time.perf_counter()
        response = self._open("/completion", self._request_body(prompt, limits))
        self._cold = False
        rounds = Rounds(self, t0, self._cancel)
        try:
            yield from rounds.read(response, TIMEOUT_S)
        finally:
            response.close()
        self._n_past = rounds.n_past
        if self._watching:
            self.watch.answered(len(rounds.emitted), rounds.counters[0], self._counters_or_none(after_answer=True))


class ServerPool:
    """Several llama-servers as one session, one configuration each (`--server A,B`): a
    spec-type change picks the server that runs it, from the next message. So the chat's
    hotkeys, the A/B view and the bench compare servers started with different flags,
    e.g. one without a draft as the baseline."""

    inspect = False  # no verdicts: the server answers no per-position probabilities

    def __init__(self, servers: list[ServerSession]):
        labels = [s.spec.label for s in servers]
        if len({s.spec.types for s in servers}) != len(servers):
            idle = [line for s in servers if (line := not_speculating(s.url, s.info.spec_types))]
            raise UserError(
                f"two servers run the same speculation ({', '.join(labels)}): give servers that differ"
                + "".join(f". {line}" for line in idle)
            )
        for s in servers:  # the one without speculation is the comparison's baseline, not a fault
            s.watch.baseline = True
        self.servers = servers
        self.active = servers[0]

    @property
    def spec(self) -> SpecConfig:
        return self.active.spec

    def choices(self) -> tuple[Choice, ...]:
        return tuple(s.spec.types for s in self.servers)

    def configure(self, spec: SpecConfig) -> None:
        chosen = next((s for s in self.servers if s.spec.types == spec.types), None)
        if chosen is None:
            raise UserError(f"no server runs {spec.label}; these do: {', '.join(map(types_label, self.choices()))}")
        chosen.configure(spec)
        self.active = chosen

    def status(self) -> SessionStatus:
        return replace(self.active.status(), choices=self.choices())

    def set_sampling(self, sampling: SamplingParams) -> None:
        for s in self.servers:
            s.set_sampling(sampling)

    def memory_text(self) -> str:
        return self.active.memory_text()

    def generate(
        self, messages: list[dict] | None = None, tokens=None, limits: GenerationLimits = GenerationLimits()
    ) -> Iterator[Event]:
        return self.active.generate(messages, tokens, limits)

    def cancel(self) -> None:
        for s in self.servers:
            s.cancel()

    def reset(self) -> None:
        for s in self.servers:
            s.reset()

    def close(self) -> None:
        pass


def connect(urls: str, sampling: SamplingParams, n_max: int) -> ServerSession | ServerPool:
    """One server, or a pool of several ("URL,URL")."""
    given = [u.strip() for u in urls.split(",") if u.strip()]
    refuse_twice(given)  # before connecting: the same server would be compared with itself
    servers = [ServerSession(u, sampling, n_max=n_max) for u in given]
    if not servers:
        raise UserError("--server needs a URL such as http://127.0.0.1:8080")
    return servers[0] if len(servers) == 1 else ServerPool(servers)


def server_wide(session: object) -> list[ServerWide]:
    """Each llama-server's own counters and notes (a pool's every server); [] for a local session."""
    if isinstance(session, ServerPool):
        return [s.wide() for s in session.servers]
    return [session.wide()] if isinstance(session, ServerSession) else []
