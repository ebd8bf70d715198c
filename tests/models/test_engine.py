"""The speculation engine on a real model (SmolLM2 drafting for itself, and n-gram types).

Batched and single-token decodes differ slightly on the CPU, so "same output as
baseline" means: equal, or at the first divergence the two candidate tokens' target
logits differ by less than 0.5 (see the reference doc).
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from spectui.engine.events import PromptDone, Round, Source, StopReason, TurnEnd, TurnStart
from spectui.engine.interface import GenerationLimits
from spectui.engine.session import Session
from spectui.engine.stats import per_type
from spectui.llama.context import Context
from spectui.llama.context_params import ContextParams
from spectui.llama.model import Model
from spectui.llama.runtime import usable_cores
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import SpecConfig, parse_types
from tests.helpers.prompts import REWRITE

pytestmark = pytest.mark.model  # every test runs the engine on SmolLM2

GREEDY = SamplingParams(temp=0.0)
TYPES = [
    "draft-simple",
    "ngram-simple",
    "ngram-map-k",
    "ngram-map-k4v",
    "ngram-mod",
    "ngram-cache",
    "auto",
    "ngram-simple,draft-simple",
]


@pytest.fixture(scope="module")
def greedy_session(smol):
    s = Session(smol, smol, ContextParams(n_ctx=2048), spec=SpecConfig(), sampling=GREEDY)
    yield s
    s.close()


def run(greedy_session, spec, messages=REWRITE, n=128, **kw):
    greedy_session.configure(spec)
    return list(greedy_session.generate(messages=messages, limits=GenerationLimits(n_predict=n, **kw)))


def rounds(events):
    return [e for e in events if isinstance(e, Round)]


def end(events) -> TurnEnd:
    assert isinstance(events[-1], TurnEnd)
    return events[-1]


def fresh_logits(model: Model, tokens: list[int]) -> np.ndarray:
    ctx = Context(model, ContextParams(n_ctx=2048))
    try:
        return ctx.decode(tokens, want=[len(tokens) - 1])[0]
    finally:
        ctx.close()


@pytest.fixture(scope="module")
def baseline(greedy_session):
    return run(greedy_session, SpecConfig())


def test_status_says_whether_llama_cpp_takes_every_core(smol):
    """What the chat slows its redraws for (chat/streaming.py)."""
    every = Session(smol, None, ContextParams(n_ctx=256, n_threads=usable_cores()), sampling=GREEDY)
    try:
        assert every.status().cpu_bound
    finally:
        every.close()
    if usable_cores() > 1:
        one = Session(smol, None, ContextParams(n_ctx=256, n_threads=1), sampling=GREEDY)
        try:
            assert not one.status().cpu_bound
        finally:
            one.close()


def test_baseline_event_sequence(baseline):
    assert isinstance(baseline[0], TurnStart) and isinstance(baseline[1], PromptDone)
    rs = rounds(baseline)
    assert rs and all(r.drafted == () and r.spec_type is None for r in rs)
    assert all(len(r.tokens) == 1 for r in rs[:-1]) and len(rs[-1].tokens) <= 1  # EOS emits nothing
    e = end(baseline)
    assert e.n_generated == len(e.tokens) == sum(len(r.tokens) for r in rs)
    assert e.stop_reason in (StopReason.EOS, StopReason.N_PREDICT)
    assert e.text == "".join(t.piece for r in rs for t in r.tokens)


@pytest.mark.parametrize("spec_type", TYPES)
def test_greedy_agreement_with_baseline(greedy_session, smol, baseline, spec_type):
    events = run(greedy_session, SpecConfig(types=parse_types(spec_type), draft_n_max=16))
    assert sum(r.n_drafted for r in rounds(events)) > 0, "this prompt should make every type draft"
    assert_agrees(smol, end(events).tokens, end(baseline).tokens)


def assert_agrees(smol, got, want):
    """Greedy output equals the baseline's, or first differs where the two best tokens
    were a near-tie (a batch and a single decode round differently)."""
    if got == want:
        return
    i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    prompt = smol.tokenize_chat(REWRITE)
    logits = fresh_logits(smol, prompt + list(want[:i]))
    a, b = (got[i] if i < len(got) else smol.eos), (want[i] if i < len(want) else smol.eos)
    assert abs(float(logits[a]) - float(logits[b])) < 0.5, f"diverged at {i}: near-tie expected"


def test_a_draft_taken_whole_catches_up_in_its_next_first_decode(greedy_session, monkeypatch):
    """After the target takes a whole draft, the draft cache lacks only that draft's last
    token: the next round decodes it in one batch with id_last, so drafting k tokens costs
    the draft model k decodes, not k + 1."""
    import llama_cpp

    batches = []  # sizes of the draft context's batches, since the last round
    real = llama_cpp.llama_decode

    def counting(ctx, batch):
        if ctx is greedy_session.draft_ctx.ptr:
            batches.append(batch.n_tokens)
        return real(ctx, batch)

    monkeypatch.setattr(llama_cpp, "llama_decode", counting)
    greedy_session.configure(SpecConfig(types=parse_types("draft-simple"), draft_n_max=3))
    checked, whole = 0, False
    for e in greedy_session.generate(messages=REWRITE, limits=GenerationLimits(n_predict=96)):
        if not isinstance(e, Round):
            continue
        if whole and e.drafted:
            assert batches == [2] + [1] * (len(e.drafted) - 1), f"round {e.index}"
            checked += 1
        whole = e.drafted != () and e.n_accepted == len(e.drafted)
        batches.clear()
    assert checked >= 5, "the rewrite should have the draft taken whole in many rounds"


def test_auto_drafting_with_the_draft_model_keeps_greedy_output(smol, baseline):
    """On this CPU auto rarely finds the draft model worth it; make it look free (a fast
    GPU's figures, catching up on the prompt included) so auto drafts with it from the
    first round, output unchanged."""
    s = Session(smol, smol, ContextParams(n_ctx=2048), sampling=GREEDY)
    try:
        s._auto.verify = {b: 0.01 for b in range(1, 18)}
        s._auto.draft_step = s._auto.draft_sync = 1e-6
        events = run(s, SpecConfig(types=("auto",), draft_n_max=4))
        d = s._drafting.built["draft-simple"]
        history = list(d.ctx.tokens)  # what a probe would have to catch up on, if anything
        assert d.behind(history + [1]) == 0 and d.behind(history + [1, 2, 3]) == 2
    finally:
        s.close()
    used = [r for r in rounds(events) if r.spec_type == "draft-simple"]
    assert used and used[0].index == 0 and used[0].note.startswith("auto: draft-simple")
    assert sum(r.n_accepted for r in used) > 0
    assert_agrees(smol, end(events).tokens, end(baseline).tokens)


def test_auto_takes_ngram_drafts_up_to_their_own_sizes_not_n_max(smol, baseline):
    """--spec-draft-n-max bounds auto's draft model, not its n-gram candidate, which its
    sizes bound as ngram-simple's own draft: with batches made to look free, auto takes
    long n-gram drafts on a rewrite, output unchanged."""
    s = Session(smol, None, ContextParams(n_ctx=2048), sampling=GREEDY)
    try:
        s._auto.verify = {b: 0.01 for b in range(1, 64)}
        events = run(s, SpecConfig(types=("auto",), draft_n_max=2))
    finally:
        s.close()
    used = [r for r in rounds(events) if r.spec_type == "ngram-simple"]
    assert max(r.n_drafted for r in used) > 2
    assert_agrees(smol, end(events).tokens, end(baseline).tokens)


def test_every_token_is_the_argmax_of_its_verify_row(greedy_session):
    greedy_session.configure(SpecConfig(types=("draft-simple",), draft_n_max=4))
    greedy_session.keep_logits = True
    n_checked = 0
    for ev in greedy_session.generate(messages=REWRITE, limits=GenerationLimits(n_predict=48)):
        if isinstance(ev, Round):
            rows = greedy_session.last_logits
            assert rows.shape[0] == ev.n_drafted + 1
            for i, tok in enumerate(ev.tokens):
                assert tok.id == int(np.argmax(rows[i]))
                n_checked += 1
            # a rejected draft token is not the argmax of its row
            if ev.rejected:
                assert ev.rejected[0] != int(np.argmax(rows[ev.n_accepted]))
    greedy_session.keep_logits = False
    assert n_checked >= 40


@pytest.mark.parametrize("spec_type", ["draft-simple", "ngram-simple"])
def test_the_greedy_fast_path_verifies_as_the_reference_path_does(greedy_session, spec_type):
    """Greedy reads each verify row's argmax in place; keep_logits takes the reference path
    (probs and verify_match on the copied rows). Both must run the same rounds."""
    spec = SpecConfig(types=(spec_type,), draft_n_max=4, ngram_simple_size_n=3, ngram_simple_size_m=8)
    runs = []
    for keep in (False, True):
        greedy_session.reset()
        greedy_session.configure(spec)
        greedy_session.keep_logits = keep
        runs.append(
            [
                (r.drafted, r.n_accepted, tuple(t.id for t in r.tokens))
                for r in rounds(greedy_session.generate(messages=REWRITE, limits=GenerationLimits(n_predict=48)))
            ]
        )
    greedy_session.keep_logits = False
    assert runs[0] == runs[1] and sum(n for _, n, _ in runs[0]) > 0


def test_sources_and_overlay_fields(greedy_session):
    events = run(greedy_session, SpecConfig(types=("ngram-simple",), draft_n_max=16), n=96)
    rs = rounds(events)
    ngram = [t for r in rs for t in r.tokens[: r.n_accepted]]
    assert ngram and all(t.source == Source.NGRAM for t in ngram)
    previous = next(e for e in events if isinstance(e, PromptDone)).t
    for r in rs:
        assert r.rejected == r.drafted[r.n_accepted :]
        assert not r.rejected_text or r.rejected  # shown only for a rejected draft
        assert r.spec_type in (None, "ngram-simple")
        assert r.configured == ("ngram-simple",)
        # the round's time, split into drafting, verifying and the rest, each measured, none
        # counted twice, all of it after the previous round ended; llama.cpp's share inside it
        assert r.t_draft > 0 and r.t_verify > 0 and r.t_other >= -1e-9
        assert r.t_draft + r.t_verify + r.t_other <= r.t - previous + 1e-9
        assert 0 < r.t_llama <= r.t_draft + r.t_verify + r.t_other + 1e-9
        previous = r.t
    assert end(events).text.startswith("".join(t.piece for r in rs for t in r.tokens))  # the overlay is the answer


def test_a_draft_past_the_end_of_the_answer_is_neither_drafted_nor_accepted(greedy_session):
    """SmolLM2 drafting for itself drafts the end of generation too, and the target accepts
    it: the last round reports its draft up to the end, so every round's accepted count is
    the draft tokens it put in the answer (llama.cpp would count the end token as well)."""
    short = [{"role": "user", "content": "Say hello in three words."}]
    events = run(greedy_session, SpecConfig(types=("draft-simple",), draft_n_max=8), messages=short, n=64)
    assert end(events).stop_reason == StopReason.EOS
    rs = rounds(events)
    for r in rs:
        assert r.n_accepted == sum(t.source == Source.DRAFT for t in r.tokens), f"round {r.index}"
    last = rs[-1]
    assert last.n_drafted > 0 and last.n_accepted == last.n_drafted and last.rejected == ()
    assert len(last.tokens) == last.n_accepted  # the end token was drafted: no target token after it


def test_live_change_mid_answer_is_attributed_to_the_new_type(greedy_session):
    seen = []
    switched_at = None
    greedy_session.configure(SpecConfig(types=("draft-simple",), draft_n_max=2))
    for ev in greedy_session.generate(messages=REWRITE, limits=GenerationLimits(n_predict=80)):
        if isinstance(ev, Round):
            seen.append(ev)
            if len(seen) == 5:
                greedy_session.configure(SpecConfig(types=("ngram-simple",), draft_n_max=12))
                switched_at = len(seen)
    before, after = seen[:switched_at], seen[switched_at:]
    assert after, "the answer should go on after the switch"
    assert all(r.configured == ("draft-simple",) and r.n_max == 2 for r in before)
    assert all(r.configured == ("ngram-simple",) and r.n_max == 12 for r in after)
    counters = per_type(seen)
    assert counters["draft-simple"].gen_drafts == sum(1 for r in before if r.drafted)
    assert counters.get("ngram-simple") is None or counters["ngram-simple"].gen_tokens == sum(
        r.n_drafted for r in after
    )


def test_cancel_then_new_turn_reuses_prefix_and_is_correct(greedy_session, baseline):
    greedy_session.configure(SpecConfig(types=("draft-simple",), draft_n_max=3))
    events = []
    for ev in greedy_session.generate(messages=REWRITE, limits=GenerationLimits(n_predict=64)):
        events.append(ev)
        if isinstance(ev, Round) and ev.index == 2:
            greedy_session.cancel()
    assert end(events).stop_reason == StopReason.CANCELLED
    assert len(rounds(events)) == 3
    again = run(greedy_session, SpecConfig(types=("draft-simple",), draft_n_max=3))
    start = again[0]
    assert start.n_prompt_decoded < start.n_prompt / 4  # the prompt stayed in the cache
    assert end(again).tokens[:32] == end(baseline).tokens[:32]


def test_a_turn_runs_with_the_heap_frozen(greedy_session):
    """engine/heap.py: a full collection during a turn skips what existed before it (here a
    garbage cycle stays uncollected), and the heap is handed back when the turn ends or its
    consumer stops early."""

    class Node:
        pass

    gc.disable()  # no automatic collection between making the cycle and the turn's start
    try:
        node = Node()
        node.self = node
        ref = weakref.ref(node)
        del node
        alive = []
        for _ in greedy_session.generate(messages=REWRITE, limits=GenerationLimits(n_predict=4)):
            gc.collect()
            alive.append(ref() is not None)
        assert alive and all(alive)
        assert gc.get_freeze_count() == 0
        gc.collect()
        assert ref() is None
        turn = greedy_session.generate(messages=REWRITE, limits=GenerationLimits(n_predict=4))
        next(turn)
        assert gc.get_freeze_count() > 0
        turn.close()
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_ignore_eos_bans_end_of_generation_as_llama_cpp_does(smol):
    """--ignore-eos as llama.cpp means it: where the answer would end, the target takes its
    best token that does not end it (logit -inf for every end-of-generation token)."""
    s = Session(smol, None, ContextParams(n_ctx=512), spec=SpecConfig(types=("ngram-simple",)), sampling=GREEDY)
    ctx = Context(smol, ContextParams(n_ctx=512))
    ask = [{"role": "user", "content": "Reply with one word: yes or no. Is water wet?"}]
    try:
        short = end(list(s.generate(messages=ask)))
        long = end(list(s.generate(messages=ask, limits=GenerationLimits(n_predict=20, ignore_eos=True))))
        k = len(short.tokens)
        prompt = smol.tokenize_chat(ask)
        row = ctx.decode(prompt + list(short.tokens), [len(prompt) + k - 1])[0]
    finally:
        s.close()
        ctx.close()
    assert short.stop_reason == StopReason.EOS and k < 10 and smol.is_eog(int(row.argmax()))
    assert long.stop_reason == StopReason.N_PREDICT and long.n_generated == 20
    assert not any(smol.is_eog(t) for t in long.tokens)
    assert long.tokens[:k] == short.tokens
    row[smol.eog_tokens] = -np.inf
    assert long.tokens[k] == int(row.argmax())


@pytest.mark.parametrize("types", [("none",), ("ngram-simple",), ("draft-simple",)])
def test_greedy_on_the_backend_gives_the_same_answer(smol, types):
    """-bs on (llama.cpp's greedy chain in the graph, for target and draft): the same tokens,
    drafts and acceptances as numpy's argmax, past the end of the answer too."""
    answers = []
    for bs in ("on", "off"):
        params = ContextParams(n_ctx=1024, backend_sampling=bs)
        s = Session(smol, smol, params, spec=SpecConfig(types=types), sampling=GREEDY)
        try:
            events = run(s, SpecConfig(types=types), n=96, ignore_eos=True)
            assert s.ctx.sample_on_backend == (bs == "on") == s.draft_ctx.sample_on_backend
        finally:
            s.close()
        answers.append((end(events).tokens, [(r.drafted, r.n_accepted) for r in rounds(events)]))
    assert answers[0] == answers[1]
    assert len(answers[0][0]) == 96
    assert types == ("none",) or sum(n for _, n in answers[0][1]) > 10


@pytest.mark.parametrize(
    "spec, temp",
    [
        (SpecConfig(types=("ngram-simple",)), 0.3),
        (SpecConfig(types=("draft-simple",), verify="rejection"), 0.8),
        (SpecConfig(types=("draft-simple",), verify="rejection", draft_sampling="probabilistic"), 0.8),
    ],
)
def test_sampling_on_the_backend_gives_the_same_answer(smol, spec, temp):
    """-bs on at temperature > 0 (llama.cpp's top-k in the graph for the verified rows, and for
    a probabilistic draft's own rows): with the same seed, the same tokens, drafts and
    acceptances as numpy's distributions."""
    answers = []
    for bs in ("on", "off"):
        s = Session(
            smol,
            smol,
            ContextParams(n_ctx=1024, backend_sampling=bs),
            spec=spec,
            sampling=SamplingParams(temp=temp, seed=7),
        )
        try:
            events = run(s, spec, n=96, ignore_eos=True)
        finally:
            s.close()
        answers.append((end(events).tokens, [(r.drafted, r.n_accepted) for r in rounds(events)]))
    assert answers[0] == answers[1]
    assert len(answers[0][0]) == 96 and sum(n for _, n in answers[0][1]) > 5


def test_context_full_stops_cleanly(smol):
    s = Session(smol, None, ContextParams(n_ctx=256), sampling=GREEDY)
    try:
        events = list(
            s.generate(
                messages=[{"role": "user", "content": "Count from 1 to 500."}], limits=GenerationLimits(ignore_eos=True)
            )
        )
        e = end(events)
        assert e.stop_reason == StopReason.CONTEXT_FULL
        assert e.n_generated > 0 and s.ctx.n_past <= s.ctx.n_ctx == 256
        too_long = [{"role": "user", "content": "word " * 300}]
        e2 = end(list(s.generate(messages=too_long)))
        assert e2.stop_reason == StopReason.CONTEXT_FULL and e2.n_generated == 0
        # and the session still works afterwards
        e3 = end(list(s.generate(messages=[{"role": "user", "content": "Hi"}], limits=GenerationLimits(n_predict=4))))
        assert e3.n_generated == 4
    finally:
        s.close()


def test_kv_cache_after_many_rejections_matches_a_fresh_evaluation(smol):
    # n-gram drafts are one-hot q: at a high temperature the target often disagrees
    s = Session(
        smol,
        smol,
        ContextParams(n_ctx=2048),
        sampling=SamplingParams(temp=1.5, seed=7),
        spec=SpecConfig(types=("ngram-cache",), draft_n_max=6, verify="rejection"),
    )
    try:
        events = list(s.generate(messages=REWRITE, limits=GenerationLimits(n_predict=80)))
        rs = rounds(events)
        assert sum(len(r.rejected) for r in rs) >= 10
        assert any(t.source == Source.RESAMPLED for r in rs for t in r.tokens)
        kept = list(s.ctx.tokens)
        probe = kept[-1]
        mine = s.ctx.decode([probe], want=[0])[0]
        # The same sequence evaluated afresh, with no rejected token ever in the cache: the
        # prompt as one batch, then one token at a time (a whole-sequence batch differs
        # slightly on the CPU; see the module docstring).
        fresh = Context(smol, ContextParams(n_ctx=2048))
        n_prompt = events[0].n_prompt - 1
        fresh.decode(kept[:n_prompt])
        for t in kept[n_prompt:]:
            fresh.decode([t])
        again = fresh.decode([probe], want=[0])[0]
        fresh.close()
        assert np.max(np.abs(mine - again)) < 1e-3
        assert int(np.argmax(mine)) == int(np.argmax(fresh_logits(smol, kept + [probe])))
    finally:
        s.close()


def test_fixed_seed_reproduces_a_sampled_run(smol):
    def once():
        s = Session(
            smol,
            smol,
            ContextParams(n_ctx=1024),
            sampling=SamplingParams(temp=0.9, seed=42),
            spec=SpecConfig(types=("draft-simple",), draft_n_max=3, verify="rejection", draft_sampling="probabilistic"),
        )
        try:
            return end(list(s.generate(messages=REWRITE, limits=GenerationLimits(n_predict=40)))).tokens
        finally:
            s.close()

    assert once() == once()


def test_draft_model_required_for_draft_simple(smol):
    from spectui.errors import UserError

    with pytest.raises(UserError, match="draft model"):
        Session(smol, None, ContextParams(n_ctx=256), spec=SpecConfig(types=("draft-simple",)))


def test_set_sampling_applies_from_the_next_turn(smol):
    session = Session(
        smol,
        smol,
        ContextParams(n_ctx=512),
        spec=SpecConfig(types=("draft-simple",)),
        sampling=SamplingParams(temp=0.8, seed=1),
    )
    try:
        prompt = [{"role": "user", "content": "Say hello."}]
        turn = session.generate(prompt, limits=GenerationLimits(n_predict=8))
        first = next(e for e in turn if isinstance(e, Round))
        session.set_sampling(GREEDY)  # mid-answer: this turn keeps sampling as it began
        assert session.status().greedy and not session.sampling.greedy
        assert {r.verify for r in [first, *rounds(turn)]} == {"match"}
        assert {r.verify for r in rounds(session.generate(prompt, limits=GenerationLimits(n_predict=8)))} == {"greedy"}
        assert session.sampling == GREEDY
    finally:
        session.close()


def test_a_chat_longer_than_the_context_keeps_answering_from_its_latest_messages(smol):
    """engine/chat_window.py on the model: past three quarters of -c the oldest exchanges
    are left out, and the turns after a cut reuse its prefix from the KV cache."""
    small = Session(smol, None, ContextParams(n_ctx=256), sampling=GREEDY)
    try:
        messages: list[dict] = []
        starts = []
        for i in range(14):
            messages.append({"role": "user", "content": f"Say the number {i} in words, then a fruit."})
            events = list(small.generate(messages=messages, limits=GenerationLimits(n_predict=16)))
            starts.append(events[0])
            assert not end(events).error and end(events).text
            messages.append({"role": "assistant", "content": end(events).text})
    finally:
        small.close()
    assert all(s.n_prompt <= 0.75 * 256 for s in starts)
    cuts = [i for i in range(1, len(starts)) if starts[i].n_left_out != starts[i - 1].n_left_out]
    assert cuts, "the chat outgrew the context"
    assert starts[cuts[0]].n_left_out % 2 == 0  # whole exchanges: the prompt opens on a user's message
    after = [s for i, s in enumerate(starts) if i > cuts[0] and i not in cuts]
    assert after and all(s.n_prompt_decoded < s.n_prompt / 3 for s in after)
