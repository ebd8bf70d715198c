"""The speculation session: draft, verify in one target batch, accept, roll back.

UI-free: `Session.generate` yields events (events.py) that the TUI, `spectui run` and
the benchmark all consume. Configuration can be changed from another thread at any
time and takes effect at the next round; so can cancellation.

Invariant between rounds: the target KV cache holds every token of the sequence except
the last sampled one (`id_last`); a round decodes [id_last] + draft in one batch with
logits at every position, so row i verifies draft token i and the last row gives the
bonus token.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from spectui import spec_types
from spectui.drafters import registry
from spectui.engine import auto, heap, resources
from spectui.engine.chat_window import ChatWindow
from spectui.engine.drafting import Drafters, RoundDraft
from spectui.engine.events import Event, PromptDone, Round, Source, StopReason, Token, TurnEnd, TurnStart
from spectui.engine.interface import GenerationLimits, SessionStatus
from spectui.errors import UserError
from spectui.llama import draft_fit, llama_ext
from spectui.llama import sampling as smp
from spectui.llama.compat import check_compatible
from spectui.llama.context import Context, ContextFull
from spectui.llama.context_params import ContextParams
from spectui.llama.detokenizer import Detokenizer
from spectui.llama.model import Model
from spectui.llama.runtime import default_threads, usable_cores
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import MTP_TYPES, NGRAM_TYPES, Choice, SpecConfig, available_types


@dataclass
class _Turn:
    """What one turn accumulates while it runs."""

    seq: list[int]
    detok: Detokenizer
    rng: np.random.Generator
    out: list[int] = field(default_factory=list)
    text: list[str] = field(default_factory=list)


class Session:
    """Owns the target context and, when given, the draft context."""

    def __init__(
        self,
        target: Model,
        draft: Model | None = None,
        ctx_params: ContextParams = ContextParams(),
        draft_ctx_params: ContextParams | None = None,
        spec: SpecConfig = SpecConfig(),
        sampling: SamplingParams = SamplingParams(),
        owns_models: bool = False,
    ):
        """`owns_models`: close() frees the models too (they were loaded for this session)."""
        target_header = draft_fit.read_header(target.path)
        draft_header = draft_fit.read_header(draft.path) if draft is not None else None
        draft_fit.check(target_header, draft_header, spec.types)
        self.draft_type = draft_header.draft_type if draft_header else None
        hidden_draft = self.draft_type not in (None, spec_types.DRAFT_SIMPLE)
        missing = llama_ext.missing()  # an older llama-cpp-python: the other types still run
        if missing and (hidden_draft or any(t in MTP_TYPES for t in spec.types)):
            raise UserError(missing)
        mtp = target_header.has_nextn and target_header.n_nextn <= 1 and not missing
        if self.draft_type == spec_types.DRAFT_SIMPLE:
            assert draft is not None  # a draft type is read from the draft file
            check_compatible(target, draft)
        self.target = target
        self.draft = draft
        self._owns_models = owns_models
        self.ctx = Context(target, ctx_params)
        dparams = draft_ctx_params or ctx_params
        self.draft_ctx = Context(draft, dparams, other=self.ctx if hidden_draft else None) if draft else None
        self.mtp_ctx = Context(target, dparams, other=self.ctx, mtp=True) if mtp else None
        self._contexts = tuple(c for c in (self.ctx, self.draft_ctx, self.mtp_ctx) if c is not None)
        self._types = available_types(self.draft_type, mtp)
        self.sampling = sampling
        self._next_sampling: SamplingParams | None = None  # set_sampling(): for the next turn
        self._spec = spec
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._window = ChatWindow()
        # The drafter auto may use besides n-grams: the draft file's type, else the target's MTP.
        self.model_type = self.draft_type or (MTP_TYPES[0] if mtp else None)
        self._auto = auto.Controller(draft.n_params / target.n_params if draft else None)
        # Keep a copy of each verify batch's logits in last_logits (tests, debugging): greedy
        # then takes the reference path (probs and verify_match) instead of reading argmaxes
        # in place, and sampling reads a copy instead of llama.cpp's buffer.
        self.keep_logits = False
        self.last_logits: np.ndarray | None = None
        # Inspect mode: each Round carries its Verdicts, at the cost of reading the judged
        # rows' softmax at greedy and the draft's q; off, no round does any of it.
        self.inspect = False

        def needs(spec: SpecConfig) -> registry.Needs:  # the sampling in force when it is built
            return registry.Needs(spec, self.sampling, self.draft_ctx, self.ctx, self.mtp_ctx)

        self._drafting = Drafters(self._types, self.model_type, needs, self._auto, spec)
        if self._drafting.followers:
            self.ctx.on_batch = self._drafting.process

    def _llama_time(self) -> float:
        """Seconds spent inside llama.cpp by this session's contexts, all told (twice a round:
        a loop, as a generator's resumptions cost microseconds each with the caches cold)."""
        t = 0.0
        for c in self._contexts:
            t += c.t_llama
        return t

    def seed_auto(self, verify: dict[int, float], draft_step: float | None) -> None:
        """auto's starting costs: the target's decode seconds by batch size, the draft step."""
        self._auto.seed(verify, draft_step)

    # --- live control (any thread) ------------------------------------------------

    @property
    def spec(self) -> SpecConfig:
        # One reference, assigned whole by configure(): no lock, which would cost every round
        # with the caches cold after a decode
        return self._spec

    def configure(self, spec: SpecConfig) -> None:
        """Takes effect at the next round, even mid-answer."""
        for t in spec.types:
            if t not in self._types:
                raise UserError(f"{t} is not available with these models; they allow {', '.join(self._types)}")
        self._spec = spec  # one assignment, seen whole by the next round's read (spec)

    def memory_text(self) -> str:
        """The panel's Memory section: this machine's VRAM and this process's RSS."""
        return resources.memory_text()

    def set_sampling(self, sampling: SamplingParams) -> None:
        """Takes effect at the next turn: a turn samples (and seeds its generator) with one
        setting from start to end. Any thread."""
        with self._lock:
            self._next_sampling = sampling

    def _take_sampling(self) -> None:
        """At turn start: put a pending set_sampling() in force; the draft model's drafter
        samples with it too, so it is built again (its state is the shared draft context)."""
        with self._lock:
            pending, self._next_sampling = self._next_sampling, None
        if pending is not None and pending != self.sampling:
            self.sampling = pending
            self._drafting.built.pop(spec_types.DRAFT_SIMPLE, None)

    def status(self) -> SessionStatus:
        with self._lock:
            sampling = self._next_sampling or self.sampling
        return SessionStatus(
            target=self.target.name,
            target_path=str(self.target.path),
            draft=self.draft.name if self.draft else None,
            n_ctx=self.ctx.n_ctx,
            n_past=self.ctx.n_past,
            greedy=sampling.greedy,
            spec=self.spec,
            choices=self.choices(),
            draft_path=str(self.draft.path) if self.draft else None,
            cpu_bound=(self.ctx.params.n_threads or default_threads()) >= usable_cores(),
            devices=self.target.devices,
        )

    def choices(self) -> tuple[Choice, ...]:
        """Each spec type the loaded models allow, alone (the TUI cycles through these)."""
        return tuple((t,) for t in self._types)

    def cancel(self) -> None:
        self._cancel.set()

    def reset(self) -> None:
        """Forget every cached token and drafter state: the next turn starts cold
        (the benchmark measures each run from scratch). `auto` keeps what it measured of
        the machine's costs, as it does between the turns of a chat."""
        for c in (self.ctx, self.draft_ctx):
            if c is not None:
                c.truncate(0)
        self._drafting.reset()
        self._auto.forget_text()

    def close(self) -> None:
        self._drafting.close()
        for c in self._contexts:
            c.close()
        if self._owns_models:
            for model in {id(m): m for m in (self.target, self.draft) if m}.values():
                model.close()

    # --- generation ---------------------------------------------------------------

    def generate(
        self,
        messages: list[dict] | None = None,
        tokens: Sequence[int] | None = None,
        limits: GenerationLimits = GenerationLimits(),
    ) -> Iterator[Event]:
        """One assistant turn from chat messages (template applied) or raw prompt tokens,
        run with the heap frozen (heap.py)."""
        with heap.frozen():
            yield from self._generate(messages, tokens, limits)

    def _generate(
        self, messages: list[dict] | None, tokens: Sequence[int] | None, limits: GenerationLimits
    ) -> Iterator[Event]:
        self._cancel.clear()
        self._take_sampling()
        t0 = time.perf_counter()
        window = self._window if tokens is None else None
        if window is None:
            prompt = list(tokens or [])
        else:
            prompt = window.prompt(messages or [], self.target.tokenize_chat, self.ctx.n_ctx)
        if not prompt:
            raise UserError("empty prompt")
        spec = self.spec
        n_keep = self._drafting.kept(min(self.ctx.common_prefix(prompt), len(prompt) - 1))
        yield TurnStart(
            t=t0,
            n_prompt=len(prompt),
            n_prompt_decoded=len(prompt) - n_keep,
            n_ctx=self.ctx.n_ctx,
            config=spec.as_dict(),
            n_left_out=window.left_out if window else 0,
        )
        if len(prompt) >= self.ctx.n_ctx:
            yield TurnEnd(
                t=time.perf_counter(),
                stop_reason=StopReason.CONTEXT_FULL,
                text="",
                n_generated=0,
                error=f"the prompt has {len(prompt)} tokens; the context holds {self.ctx.n_ctx}: give a "
                f"larger -c (the model allows up to {self.target.n_ctx_train})",
            )
            return
        self.ctx.truncate(n_keep)
        self.ctx.banned = self.target.eog_tokens if limits.ignore_eos else None
        t_decode = time.perf_counter()
        self.ctx.decode(prompt[n_keep:-1])
        self._auto.observe_prefill(len(prompt) - 1 - n_keep, time.perf_counter() - t_decode)
        self._drafting.begin_turn(spec, prompt)
        yield PromptDone(t=time.perf_counter(), t_prompt=time.perf_counter() - t0)

        state = _Turn(seq=prompt[:], detok=Detokenizer(self.target), rng=smp.make_rng(self.sampling))
        error = ""
        try:
            stop = yield from self._rounds(state, limits)
        except Exception as e:  # a llama.cpp failure mid-turn ends the turn, not the app
            stop, error = StopReason.ERROR, f"{type(e).__name__}: {e}"
        state.text.append(state.detok.flush())
        yield TurnEnd(
            t=time.perf_counter(),
            stop_reason=stop,
            text="".join(state.text),
            n_generated=len(state.out),
            error=error,
            tokens=tuple(state.out),
        )

    def _rounds(self, st: _Turn, limits: GenerationLimits) -> Generator[Round, None, StopReason]:
        """Draft-verify rounds until a stop reason; returns it."""
        seq, out = st.seq, st.out  # seq[-1] is id_last (not yet in the target cache)
        greedy = self.sampling.greedy  # a turn samples with one setting (set_sampling: the next turn)
        index = 0
        while True:
            if self._cancel.is_set():
                return StopReason.CANCELLED
            t_round, llama0 = time.perf_counter(), self._llama_time()
            spec = self.spec
            room = self.ctx.n_ctx - len(seq)  # id_last + the draft must fit
            if room < 0:
                return StopReason.CONTEXT_FULL
            left = limits.n_predict - len(out) if limits.n_predict >= 0 else None
            limit = room if left is None else min(room, max(0, left - 1))
            dr = self._drafting.draft(spec, seq, limit, left, len(out), self.inspect)
            t_draft = time.perf_counter() - t_round

            verify = "greedy" if greedy else spec.verify
            fast = verify == "greedy" and not (self.keep_logits or self.inspect)
            t_v = time.perf_counter()
            try:
                rows = self._verify(seq[-1], dr.tokens, fast, verify == "greedy")
            except ContextFull:
                return StopReason.CONTEXT_FULL
            t_verify = time.perf_counter() - t_v
            probe, t_sync = self._settle(st, dr, rows, fast, verify, (t_draft, t_verify))

            emitted: list[Token] = []
            stop = self._emit(st, dr, limits, emitted)
            now = time.perf_counter()
            yield Round(
                index=index,
                t=now,
                spec_type=dr.spec_type,
                drafted=tuple(dr.tokens),
                n_accepted=dr.n_acc,
                rejected=dr.rejected,
                rejected_text=dr.rejected_text,
                tokens=tuple(emitted),
                t_draft=t_draft,
                t_verify=t_verify,
                t_other=(now - t_round) - t_draft - t_verify,
                t_llama=self._llama_time() - llama0,
                n_max=spec.draft_n_max,
                verify=verify,
                n_past=len(seq) - 1,
                configured=spec.types,
                note=dr.note,
                probe=probe,
                t_sync=t_sync,
                verdicts=dr.verdicts[: len(dr.tokens)],  # a draft cut at an end of generation (_emit)
            )
            index += 1
            if stop is not None:
                return stop

    def _settle(self, st: _Turn, dr: RoundDraft, rows, fast: bool, verify: str, times: tuple[float, float]):
        """What the target's rows make of the draft: judged, told to the drafters and auto, its
        rejected tail dropped from the target's cache; returns auto's (probe, catch-up seconds)."""
        piece = self.target.piece if self.inspect else None
        dr.judge(rows, fast, verify, self.keep_logits, self.sampling, st.rng, piece)
        self._drafting.accept(dr)
        auto = self._drafting.observe_auto(dr, dr.decision, *times) if dr.decision is not None else (False, 0.0)
        if dr.n_acc < len(dr.tokens):  # the target's cache holds id_last and the whole draft
            self.ctx.truncate(len(st.seq) + dr.n_acc)
        return auto

    def _verify(
        self, id_last: int, draft: list[int], fast: bool, greedy: bool
    ) -> Sequence[int] | Sequence[smp.Dist] | Sequence[np.ndarray] | np.ndarray:
        """Decode id_last and the draft in one target batch, a row for each; what comes back is
        what the verification reads of the rows. `fast` (greedy): each row's argmax only, up to
        the first rejection, read in place with none copied out. Inspecting at greedy: the
        logits rows, read in place (copied only from a batch of several chunks, which share
        llama.cpp's buffer), for their softmax."""
        batch, want = [id_last] + draft, range(len(draft) + 1)
        if fast:
            return self.ctx.decode_argmax(batch, want, match=True)
        if self.keep_logits:
            rows = self.last_logits = self.ctx.decode(batch, want)
            return rows
        if greedy:  # inspect
            return self.ctx.decode_each(batch, want, np.copy if len(batch) > self.ctx.n_batch else _view, lazy=True)
        # each row's distribution (the row read in place, or its top k from the backend), lazily
        return self.ctx.decode_dists(batch, want, self.sampling)

    def _emit(self, st: _Turn, dr: RoundDraft, limits: GenerationLimits, emitted: list[Token]) -> StopReason | None:
        """The accepted tokens, then the target's own, detokenised into `emitted` and added to the
        turn, up to an end of generation or the answer's length; returns the stop reason that
        gives (None: go on). Sets dr.rejected and the text it would have added."""
        accepted = dr.tokens[: dr.n_acc]
        draft_src = Source.NGRAM if dr.spec_type in NGRAM_TYPES else Source.DRAFT
        stop = None
        for i, tok in enumerate(accepted):
            if self._ends(tok, limits):
                stop = StopReason.EOS
                # The round's statistics end with the answer: a draft's tokens from the end
                # on are neither drafted nor accepted (llama.cpp counts them, README).
                del dr.tokens[i:]
                dr.n_acc = i
                break
            emitted.append(Token(tok, st.detok.feed(tok), draft_src))
        dr.rejected = tuple(dr.tokens[dr.n_acc :])
        if dr.rejected and stop is None:  # read between the accepted tokens and the target's own
            dr.rejected_text = st.detok.peek(dr.rejected)
        if stop is None:
            if self._ends(dr.nxt, limits):
                stop = StopReason.EOS
            else:
                source = Source.RESAMPLED if dr.resampled else Source.TARGET
                emitted.append(Token(dr.nxt, st.detok.feed(dr.nxt), source))
        out = st.out
        if limits.n_predict >= 0 and len(out) + len(emitted) >= limits.n_predict:
            del emitted[limits.n_predict - len(out) :]
            stop = stop or StopReason.N_PREDICT
        st.seq.extend(accepted)
        st.seq.append(dr.nxt)
        for t in emitted:
            out.append(t.id)
            st.text.append(t.piece)
        return stop

    def _ends(self, token: int, limits: GenerationLimits) -> bool:
        return not limits.ignore_eos and self.target.is_eog(token)


def _view(row: np.ndarray) -> np.ndarray:
    return row
