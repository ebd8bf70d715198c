"""The model layer on real models: tokens, logits at chosen batch positions, rollback,
the compatibility rules, and clear errors for bad files."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from spectui.errors import UserError
from spectui.llama import draft_fit
from spectui.llama.compat import check_compatible, incompatibility
from spectui.llama.context import Context, until_rejection
from spectui.llama.context_params import ContextParams
from spectui.llama.detokenizer import Detokenizer
from spectui.llama.model import Model
from spectui.llama.sampling import SamplingParams, dist
from tests.conftest import model_file

TEXT = "Hello, 세계! 안녕하세요 😀🎉 fin"


@pytest.mark.model
def test_detokenizer_holds_split_characters_and_round_trips(smol):
    tokens = smol.tokenize(TEXT, add_special=False)
    d = Detokenizer(smol)
    pieces = [d.feed(t) for t in tokens]
    assert "".join(pieces) + d.flush() == TEXT
    # Korean and emoji are split across byte tokens in this vocabulary: the tokens that end
    # inside a character yield nothing until the character completes.
    assert "" in pieces
    assert not any("\ufffd" in p for p in pieces)
    raw = [smol.piece(t) for t in tokens]
    assert any(_ends_inside_char(b) for b in raw)


def _ends_inside_char(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


@pytest.mark.model
def test_peek_does_not_consume(smol):
    tokens = smol.tokenize("😀 ok", add_special=False)
    d = Detokenizer(smol)
    first = d.feed(tokens[0])
    peeked = d.peek(tokens[1:])
    assert first + peeked == "😀 ok"
    assert "".join(d.feed(t) for t in tokens[1:]) == peeked


@pytest.mark.model
def test_batch_logits_at_selected_positions_match_single_decodes(smol):
    tokens = smol.tokenize("The quick brown fox jumps over the lazy dog because", add_special=True)
    want = [2, 5, len(tokens) - 1]
    batched = Context(smol, ContextParams(n_ctx=256)).decode(tokens, want=want)
    single_ctx = Context(smol, ContextParams(n_ctx=256))
    singles = [single_ctx.decode([t], want=[0])[0] for t in tokens]
    assert batched.shape == (3, smol.n_vocab)
    for row, i in zip(batched, want):
        assert np.max(np.abs(row - singles[i])) < 0.05 * max(1.0, np.max(np.abs(singles[i])))
        assert np.argmax(row) == np.argmax(singles[i])
    # and a different position really gives different logits (the check can fail)
    assert np.max(np.abs(batched[0] - singles[3])) > 1.0


@pytest.mark.model
def test_greedy_on_the_backend_takes_the_argmax_numpy_takes(smol):
    """-bs on: llama.cpp's greedy chain picks each wanted row's token in the graph; it must be
    numpy's argmax of the same rows, honour the bans, and leave full rows readable after."""
    tokens = smol.tokenize("def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n", add_special=True)
    on, off = (Context(smol, ContextParams(n_ctx=256, backend_sampling=bs)) for bs in ("on", "off"))
    assert on.sample_on_backend and not off.sample_on_backend
    try:
        for ctx in (on, off):
            ctx.decode(tokens[:10])
        batch, want = tokens[10:17], [0, 2, 3, 6]
        rows = off.decode(batch, want)
        assert on.decode_argmax(batch, want) == [int(r.argmax()) for r in rows]
        # the bans: each row's best token is banned, so the chain must take the second best
        for ctx in (on, off):
            ctx.truncate(10)
            ctx.banned = np.array(sorted({int(r.argmax()) for r in rows}))
        rows[:, on.banned] = -np.inf
        second = [int(r.argmax()) for r in rows]
        assert on.decode_argmax(batch, want) == off.decode_argmax(batch, want) == second
        # full rows after greedy: llama.cpp copies logits out only once the chain is detached
        for ctx in (on, off):
            ctx.truncate(12)
            ctx.banned = None
        assert np.array_equal(on.decode([tokens[12]], [0]), off.decode([tokens[12]], [0]))
        assert on.decode_argmax(tokens[13:15], [1]) == off.decode_argmax(tokens[13:15], [1])
    finally:
        on.close()
        off.close()


@pytest.mark.model
def test_top_k_on_the_backend_gives_the_distributions_numpy_gives(smol):
    """-bs on at temperature > 0: llama.cpp's top-k chain finds each wanted row's candidates in
    the graph; the distributions built from them must be numpy's from the full rows, under
    the bans, and greedy, full rows and another k must work after it."""
    tokens = smol.tokenize("def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n", add_special=True)
    on, off = (Context(smol, ContextParams(n_ctx=256, backend_sampling=bs)) for bs in ("on", "off"))
    params = SamplingParams(temp=0.8, top_k=40, top_p=0.95, min_p=0.05)
    try:
        for ctx in (on, off):
            ctx.decode(tokens[:10])
        batch, want = tokens[10:17], [0, 2, 3, 6]
        rows = off.decode(batch, want)
        got = on.decode_dists(batch, want, params)
        assert len(got) == 4
        for d, row in zip(got, rows):
            expected = dist(row, params)
            assert np.array_equal(d.ids, expected.ids) and np.array_equal(d.p, expected.p)
        assert max(d.ids.size for d in got) > 1  # real distributions, not one-hot
        for ctx in (on, off):  # each row's best token banned: gone from the candidates
            ctx.truncate(10)
            ctx.banned = np.array(sorted({int(r.argmax()) for r in rows}))
        rows[:, on.banned] = -np.inf
        for a, b, row in zip(on.decode_dists(batch, want, params), off.decode_dists(batch, want, params), rows):
            assert np.array_equal(a.ids, b.ids) and np.array_equal(a.p, b.p)
            assert not np.isin(a.ids, on.banned).any() and a.ids.size == dist(row, params).ids.size
        wide = SamplingParams(temp=1.5, top_k=100, top_p=1.0, min_p=0.0)
        for ctx in (on, off):
            ctx.truncate(12)
            ctx.banned = None
        assert on.decode_dists([tokens[12]], [0], wide)[0].ids.size == 100
        assert on.decode_argmax([tokens[13]], [0]) == off.decode_argmax([tokens[12], tokens[13]], [1])
        assert np.array_equal(on.decode([tokens[14]], [0]), off.decode([tokens[14]], [0]))
    finally:
        on.close()
        off.close()


@pytest.mark.parametrize("bs", ["on", "off"])
@pytest.mark.model
def test_greedy_verification_stops_at_the_first_rejection(smol, bs):
    """decode_argmax(match=True): the picks up to the first that rejects the draft, the same
    as every row's argmax cut there (numpy reads no row after it)."""
    tokens = smol.tokenize("def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n", add_special=True)
    ctx = Context(smol, ContextParams(n_ctx=256, backend_sampling=bs))
    try:
        ctx.decode(tokens[:6])
        batch = tokens[6:20]
        every = ctx.decode_argmax(batch, range(len(batch)))
        ctx.truncate(6)
        matched = ctx.decode_argmax(batch, range(len(batch)), match=True)
        n_acc = next(i for i, t in enumerate(every) if t != batch[i + 1])
        assert matched == every[: n_acc + 1] == until_rejection(every, batch)
        assert len(matched) < len(batch) and ctx.tokens == tokens[:20]  # the whole batch is in the cache
        ctx.truncate(6)  # a draft the target accepts: its own greedy continuation
        own = [batch[0]]
        for _ in range(3):
            own += ctx.decode_argmax(own[-1:], [0])
        ctx.truncate(6)
        all_rows = ctx.decode_argmax(own, range(4))
        ctx.truncate(6)
        assert ctx.decode_argmax(own, range(4), match=True) == all_rows == own[1:] + all_rows[3:]
    finally:
        ctx.close()


@pytest.mark.model
def test_lazy_rows_are_taken_only_when_indexed(smol):
    """decode_each(lazy=True): a verifier that stops at the first rejection takes no row after
    it, and what it takes is what the eager call gives; a batch of several chunks is eager."""
    tokens = smol.tokenize("def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n", add_special=True)
    for n_batch in (512, 4):
        ctx = Context(smol, ContextParams(n_ctx=256, n_batch=n_batch))
        taken = []

        def take(row):
            taken.append(1)  # noqa: B023  (called within this iteration)
            return float(row.max()), int(row.argmax())

        try:
            ctx.decode(tokens[:6])
            eager = ctx.decode_each(tokens[6:16], range(10), take)
            ctx.truncate(6)
            taken.clear()
            lazy = ctx.decode_each(tokens[6:16], range(10), take, lazy=True)
            assert len(lazy) == 10 and len(taken) == (0 if n_batch == 512 else 10)
            assert [lazy[0], lazy[3]] == [eager[0], eager[3]] and lazy[3] == lazy[3]
            assert len(taken) == (2 if n_batch == 512 else 10)
        finally:
            ctx.close()


@pytest.mark.model
def test_greedy_stays_in_numpy_where_the_output_layer_is_on_the_cpu(smol_path):
    """-bs auto: ggml's argmax on a CPU is one thread's scalar loop, slower than numpy's."""
    cpu_only = Model(smol_path, n_gpu_layers=0)
    try:
        assert not cpu_only.output_on_gpu
        ctx = Context(cpu_only, ContextParams(n_ctx=256))
        assert not ctx.sample_on_backend
        ctx.close()
    finally:
        cpu_only.close()


@pytest.mark.model
def test_gguf_header_read_before_loading_agrees_with_llama_cpp(smol, smol_path):
    """draft_fit steps over the vocabulary's strings without decoding them; what follows them
    (every tensor name) must still be read where llama.cpp reads it."""
    header = draft_fit.read_header(smol_path)
    assert (header.arch, header.n_layer, header.n_embd) == (smol.arch, smol.n_layer, smol.n_embd)
    assert len(header.tensors) == 272 and "output_norm.weight" in header.tensors


@pytest.mark.model
def test_rollback_then_redecode_reproduces_logits(smol):
    ctx = Context(smol, ContextParams(n_ctx=256))
    tokens = smol.tokenize("def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)", add_special=True)
    first = ctx.decode(tokens, want=[len(tokens) - 1])[0]
    k = len(tokens) // 2
    ctx.decode(smol.tokenize(" unrelated tail text", add_special=False))  # pollute, then roll back
    ctx.truncate(k)
    assert ctx.tokens == tokens[:k]
    again = ctx.decode(tokens[k:], want=[len(tokens) - k - 1])[0]
    assert np.max(np.abs(first - again)) < 1e-3


@pytest.mark.model
def test_time_inside_every_llama_cpp_call_counts_as_llama_time(smol, monkeypatch):
    """The overhead per round is the rest, so each call a round makes must count: decode,
    the logits, sampled tokens or top-k candidates read (on a GPU they wait for the computation)
    and the KV removal."""
    import spectui.llama.context as model

    ctx = Context(smol, ContextParams(n_ctx=64))
    on_backend = Context(smol, ContextParams(n_ctx=64, backend_sampling="on"))

    def slow(fn):
        def call(*args):
            time.sleep(0.02)
            return fn(*args)

        return call

    for name in ("llama_decode", "llama_memory_seq_rm", "llama_get_sampled_token_ith"):
        monkeypatch.setattr(model.llama_cpp, name, slow(getattr(model.llama_cpp, name)))
    for name in ("_logits_address", "_logits_ith_address", "_candidates_address", "_candidate_logits_address"):
        monkeypatch.setattr(model, name, slow(getattr(model, name)))
    temp = SamplingParams(temp=0.8)
    for c, step, expected in [
        (ctx, lambda: ctx.decode([1, 2, 3]), 0.02),
        (ctx, lambda: ctx.decode([4], want=[0]), 0.04),
        (ctx, lambda: ctx.logits_at(0), 0.02),
        (ctx, lambda: ctx.truncate(2), 0.02),
        (ctx, lambda: ctx.forget_from(1), 0.02),
        (on_backend, lambda: on_backend.decode_argmax([1, 2], [0, 1]), 0.06),
        (on_backend, lambda: on_backend.decode_dists([3, 4], [0, 1], temp), 0.10),
    ]:
        before = c.t_llama
        step()
        assert c.t_llama - before >= expected


@pytest.mark.model
def test_common_prefix(smol):
    ctx = Context(smol, ContextParams(n_ctx=64))
    ctx.decode([1, 2, 3, 4])
    assert ctx.common_prefix([1, 2, 3, 4, 5]) == 4
    assert ctx.common_prefix([1, 2, 9]) == 2
    assert ctx.common_prefix([7]) == 0


@pytest.mark.model
def test_context_larger_than_model_allows(smol):
    with pytest.raises(UserError, match="larger than"):
        Context(smol, ContextParams(n_ctx=smol.n_ctx_train * 2))


@pytest.mark.model
def test_chat_template_comes_from_the_gguf(smol):
    text = smol.format_chat([{"role": "user", "content": "hi"}])
    assert "<|im_start|>user\nhi<|im_end|>" in text
    assert text.endswith("<|im_start|>assistant\n")
    tokens = smol.tokenize_chat([{"role": "user", "content": "hi"}])
    assert tokens[:2] != [smol.bos, smol.bos]  # never a doubled BOS
    assert smol.detokenize(tokens) == text or smol.detokenize(tokens).endswith("assistant\n")


# --- compatibility (llama.cpp's rules) --------------------------------------------------


@pytest.fixture(scope="module")
def vocabs():
    names = [
        "qwen2.5-coder-1.5b-instruct-q4_k_m",
        "qwen2.5-coder-0.5b-instruct-q4_k_m",
        "gemma-3-270m-q4_k_m",
        "smollm2-135m-instruct-q4_1",
    ]
    return {n.split("-")[0] + ("-big" if "1.5b" in n else ""): Model(model_file(n), vocab_only=True) for n in names}


@pytest.mark.model
def test_qwen_pair_is_compatible(vocabs):
    big, small = vocabs["qwen2.5-big"], vocabs["qwen2.5"]
    assert big.path.stat().st_size > small.path.stat().st_size  # two models, not one compared with itself
    assert incompatibility(big, small) is None and incompatibility(small, big) is None  # every rule, both ways
    assert check_compatible(big, small) is None  # and no UserError


@pytest.mark.model
def test_qwen_and_gemma_are_not(vocabs):
    why = incompatibility(vocabs["qwen2.5-big"], vocabs["gemma"])
    assert why and why.startswith("vocab type differs")
    with pytest.raises(UserError, match="vocab type differs"):
        check_compatible(vocabs["qwen2.5-big"], vocabs["gemma"])


@pytest.mark.model
def test_smollm2_and_qwen_are_not(vocabs):
    why = incompatibility(vocabs["smollm2"], vocabs["qwen2.5"])
    # Both are BPE; they differ in their special tokens and sizes.
    assert why is not None
    assert any(rule in why for rule in ("BOS differs", "EOS differs", "vocab sizes differ", "token "))


# --- bad files: one clear line, exit code 2 -----------------------------------------------


def _run_cli(*args):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, "-m", "spectui", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("kind", ["empty", "random", pytest.param("truncated", marks=pytest.mark.model), "header-cut"])
def test_bad_model_files_give_one_clear_line(tmp_path, smol_path, kind):
    bad = tmp_path / f"{kind}.gguf"
    if kind == "empty":
        bad.write_bytes(b"")
    elif kind == "random":
        bad.write_bytes(np.random.default_rng(0).bytes(4096))
    else:  # a third of the weights, or cut inside the header's vocabulary
        with open(smol_path, "rb") as f:
            bad.write_bytes(f.read(smol_path.stat().st_size // 3 if kind == "truncated" else 200_000))
    r = _run_cli("run", "-m", str(bad), "--spec-type", "none", "hello")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and str(bad.name) in lines[0]
    expected = {
        "empty": "empty",
        "random": "not a GGUF",
        "truncated": "cannot load model",
        "header-cut": "header is cut short",
    }[kind]
    assert expected in lines[0]
