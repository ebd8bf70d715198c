"""A session's drafters and a round's draft: who drafts (spec type auto's choice included),
and what the drafters are told after the verification.

Drafters are built on first use, begun once a turn, asked in priority order and told every
acceptance. The hidden-state types follow the target: they see every target batch from the
start (process()), whatever drafts, as llama.cpp's common_speculative_process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from spectui.drafters import registry
from spectui.drafters.base import Drafter, DraftResult
from spectui.engine import auto, verdicts
from spectui.engine.verdicts import Verdict
from spectui.errors import UserError
from spectui.llama import sampling as smp
from spectui.llama.context import LazyRows
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import AUTO, HIDDEN_STATE_TYPES, SpecConfig
from spectui.spec_types import Spec


@dataclass
class RoundDraft:
    """What a round drafted, by whom, and (spec type auto) why; then what became of it."""

    spec_type: str | None = None
    drafter: Drafter | None = None
    tokens: list[int] = field(default_factory=list)
    q_rows: list | None = None  # the distributions the tokens were sampled from; None: one-hot
    q_probs: list[float] | None = None  # inspect: the draft's own probability of each token (model drafters)
    t_sync: float = 0.0  # the drafter's catch-up, apart from drafting (DraftResult)
    n_synced: int = 0
    note: str = ""
    decision: auto.Decision | None = None
    candidate: list[int] = field(default_factory=list)  # auto: the n-gram candidate, used or not
    t_lookup: float = 0.0
    # Once verified: the tokens accepted, the target's token after them (resampled: by rejection
    # sampling), the rejected tail and the text it would have added
    n_acc: int = 0
    nxt: int = 0
    resampled: bool = False
    rejected: tuple[int, ...] = ()
    rejected_text: str = ""
    verdicts: tuple[Verdict, ...] = ()  # inspect: what the verifier saw

    def judge(
        self,
        rows,
        fast: bool,
        verify: str,
        kept: bool,
        sampling: SamplingParams,
        rng: np.random.Generator,
        piece: Callable[[int], bytes] | None,
    ) -> None:
        """The verification's verdict on the draft, from the target's rows (Session._verify):
        n_acc, nxt, resampled; with `piece` (inspect), the verdicts too. `fast`: the rows are
        argmaxes; `kept` (keep_logits) or greedy: logits, not distributions."""
        if fast:  # what verify_match does with one-hot rows, which the tests check
            self.n_acc = len(rows) - 1  # the target's choices up to (and with) its first rejection
            self.nxt = rows[self.n_acc]
            return
        logits = kept or verify == "greedy"  # rows of logits, not distributions
        p_rows = LazyRows(rows, lambda row: smp.dist(row, sampling)) if logits else rows
        draws: list[float] | None = [] if piece is not None and verify == "rejection" else None
        if verify == "rejection":
            self.n_acc, self.nxt, self.resampled = smp.verify_rejection(p_rows, self.q_rows, self.tokens, rng, draws)
        else:
            self.n_acc, self.nxt = smp.verify_match(p_rows, self.tokens, rng)
        if piece is not None:
            greedy = verify == "greedy"
            self.verdicts = verdicts.judged(self, rows if greedy else p_rows, draws, greedy, piece)

    def take(self, spec_type: str | None, drafter: Drafter, result: DraftResult, n: int | None = None) -> None:
        """`drafter`'s draft of `spec_type`, its first `n` tokens (None: all)."""
        self.spec_type, self.drafter, self.tokens = spec_type, drafter, result.tokens[:n]
        q_rows = result.q_rows
        self.q_rows = q_rows[: len(self.tokens)] if q_rows is not None and n is not None else q_rows
        self.q_probs, self.t_sync, self.n_synced = result.q_probs, result.t_sync, result.n_synced


class Drafters:
    """The drafters of one session's models, by spec type."""

    def __init__(
        self,
        types: tuple[Spec, ...],
        model_type: Spec | None,
        needs: Callable[[SpecConfig], registry.Needs],
        controller: auto.Controller,
        spec: SpecConfig,
    ):
        """`types`: those the models allow; `model_type`: the one auto may use besides n-grams;
        `needs`: what a drafter is built from, under a spec; `controller`: auto's figures."""
        self.types = types
        self.model_type = model_type
        self._needs = needs
        self._auto = controller
        self.built: dict[Spec, Drafter] = {}
        self._begun: set[Spec] = set()
        self.followers = [self.get(t, spec) for t in types if t in HIDDEN_STATE_TYPES]

    def get(self, spec_type: Spec, spec: SpecConfig) -> Drafter:
        d = self.built.get(spec_type)
        if d is None:
            if spec_type not in self.types:
                raise UserError(f"spec type {spec_type} is not available")
            d = self.built[spec_type] = registry.build(spec_type, self._needs(spec))
        d.configure(spec)
        return d

    def _ready(self, spec_type: Spec, spec: SpecConfig, seq: list[int]) -> Drafter:
        """The drafter for `spec_type`, begun on this turn's context, `seq` without its last
        token (once per turn: a copy of the context every round grew with the chat's length)."""
        d = self.get(spec_type, spec)
        if spec_type not in self._begun:
            d.begin(seq[:-1])
            self._begun.add(spec_type)
        return d

    def begin_turn(self, spec: SpecConfig, prompt: list[int]) -> None:
        """Begin the types in use on the prompt. auto begins only the n-gram drafter: the draft
        model catches up when (and if) auto uses it, so TTFT stays that of `none`."""
        self._begun.clear()
        self._auto.new_turn()
        for spec_type in (auto.NGRAM,) if spec.types == (AUTO,) else spec.drafting:
            self._ready(spec_type, spec, prompt)

    def kept(self, n_keep: int) -> int:
        """How much of the target's cache a turn may keep: `n_keep`, unless a follower's state
        is for another text; then none, and every follower forgets (they see it all again)."""
        if all(f.covered == n_keep for f in self.followers):
            return n_keep
        for f in self.followers:
            f.reset()
        return 0

    def process(self, tokens: Sequence[int], pos0: int) -> None:
        for f in self.followers:
            f.process(tokens, pos0)

    def draft(
        self, spec: SpecConfig, seq: list[int], limit: int, left: int | None, done: int, inspect: bool
    ) -> RoundDraft:
        """Ask the configured types in priority order; the first non-empty draft wins.
        `limit`: the most tokens the context and the answer leave room for; `left`: tokens
        the answer may still take (None: no limit); `done`: emitted so far."""
        if spec.types == (AUTO,):
            return self._auto_draft(spec, seq, limit, left, done, inspect)
        dr = RoundDraft()
        for spec_type in spec.drafting:
            d = self._ready(spec_type, spec, seq)
            k = d.limit(spec.draft_n_max, limit)
            result = d.draft(seq, k, inspect)
            if result.tokens[:k]:
                dr.take(spec_type, d, result, k)
                break
        return dr

    def _auto_draft(
        self, spec: SpecConfig, seq: list[int], limit: int, left: int | None, done: int, inspect: bool
    ) -> RoundDraft:
        """Each source within its own bound, as the fixed types: the n-gram candidate within
        its sizes, the draft model within --spec-draft-n-max."""
        t0 = time.perf_counter()
        ngram = self._ready(auto.NGRAM, spec, seq)
        found = ngram.draft(seq, ngram.limit(spec.draft_n_max, limit))
        candidate = found.tokens
        t_lookup = time.perf_counter() - t0
        model = self.get(self.model_type, spec) if self.model_type else None  # syncs itself in draft()
        dec = self._auto.choose(
            len(candidate),
            model is not None,
            model.limit(spec.draft_n_max, limit) if model is not None else 0,
            draft_behind=lambda: model.behind(seq) if model is not None else 0,  # called only with a model
            tokens_left=left,
            tokens_done=done,
        )
        name = self.model_type if dec.source == auto.DRAFT else dec.source
        out = RoundDraft(
            note=f"auto: {name or 'no draft'}" + (f" k={dec.k}" if dec.k else "") + f", {dec.reason}",
            decision=dec,
            candidate=candidate,
            t_lookup=t_lookup,
        )
        if dec.source == auto.NGRAM:
            out.take(auto.NGRAM, ngram, found, dec.k)
        elif dec.source == auto.DRAFT and model is not None:  # auto chooses it only when there is one
            out.take(self.model_type, model, model.draft(seq, dec.k, inspect))
        return out

    def accept(self, dr: RoundDraft) -> None:
        """How much of the draft was accepted, to the drafter that made it and to every follower."""
        if dr.drafter is not None and dr.drafter not in self.followers:
            dr.drafter.accept(dr.n_acc)
        for f in self.followers:  # as common_speculative_accept tells every implementation
            f.accept(dr.n_acc)

    def observe_auto(
        self, dr: RoundDraft, decision: auto.Decision, t_draft: float, t_verify: float
    ) -> tuple[bool, float]:
        """What auto's choice (`decision`, dr's) cost and gained this round, for its next choices;
        returns what the round's event reports of it (probe, catch-up seconds) for the bench."""
        self._auto.observe(decision, dr, t_draft, t_verify)
        return decision.probe, dr.t_sync

    def reset(self) -> None:
        """Forget every drafter's state: the others are built again at their next use."""
        self.built = {f.spec_type: f for f in self.followers}
        for f in self.followers:
            f.reset()

    def close(self) -> None:
        for d in self.built.values():
            d.close()
