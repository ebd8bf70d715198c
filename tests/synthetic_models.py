"""Tiny synthetic GGUF checkpoints for the hidden-state draft types.

Why this exists: draft-eagle3, draft-dflash, draft-dspark and draft-mtp need a target and
a draft trained together (an EAGLE-3 head, a DFlash/DSpark block drafter, a target with a
NextN/MTP layer), and no such weights can be downloaded in the test environment. So the
tests build them here from a fixed recipe: seeded random weights plus the tokenizer
metadata of the embedded SmolLM2-135M GGUF (so real text tokenizes). The weights mean
nothing; the oracle for correctness is llama.cpp itself, i.e. its own implementations of
these draft types (common/speculative.cpp) run on the same files.

Kinds, for `build(kind, directory)`:
  target      llama, 4 layers. llama's graph records every layer's input, which EAGLE-3 and
              DFlash feature extraction read (src/models/llama.cpp: `res->t_layer_inp[il]
              = inpL`; archs without that line, qwen2 among them, abort when asked).
  target-mtp  mimo2, 3 layers + 1 NextN layer: its MTP graph (`graph_mtp` in
              src/models/mimo2.cpp) takes a dense FFN and plain attention, no experts
              (glm4-moe, deepseek2, cohere2moe assert an MoE FFN in the NextN block; qwen35
              and qwen3next are hybrid recurrent). Load it with
              `llama_model_params.load_mtp = True`: without it the NextN tensors are
              skipped and creating the MTP context aborts (GGML_ASSERT in graph_mtp).
  eagle3      eagle3 draft for `target`: target_layers [1, 2, 3]; no token_embd/output of
              its own, it borrows the target's through `llama_context_params.ctx_other`.
  dflash      dflash draft for `target`: target_layers [1, 3], block_size 8, mask token 16
              ('<empty_output>'), no Markov head, no selector (plain DFlash). Borrows too.
  dspark      `dflash` plus the DSpark Markov head (markov_w1/w2) and confidence head
              (conf_proj), with `dflash.has_confidence_head = true`.

Making the outputs worth comparing: with plain random weights a model repeats one token.
Here each target's head is solved (in numpy, from the same weights) so that, attention
aside, each of N_ACTIVE English words is followed by its successor in one cycle through
all of them; attention makes the target leave the cycle now and then. Each draft is wired
to guess the same successor: the MTP block copies the target's last FFN, EAGLE-3's `fc`
maps the features of a word to its successor's hidden state, DFlash's mask positions
attend to the anchor word, the DSpark Markov head encodes the cycle. So the drafts vary,
agree with the target often, and not always (greedy, n_max 4, 60 tokens after an English
sentence: llama.cpp accepts about 14% of eagle3's, 17% of dflash's, 74% of dspark's and
28% of mtp's drafted tokens).

Determinism: same bytes on every run. Values that come out of linear algebra (BLAS,
LAPACK, SIMD exp) are snapped to a 2**-12 grid, so last-bit differences between machines
are very unlikely to reach the file; the random streams are numpy's, stable per version.

`python tests/synthetic_models.py DIR` builds all five into DIR.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

KINDS = ("target", "target-mtp", "eagle3", "dflash", "dspark")

# Shapes. Drafts share the target's n_embd: they borrow its token_embd and output.
N_EMBD, N_HEAD, N_HEAD_KV, N_FF = 64, 4, 2, 128
HEAD_DIM = N_EMBD // N_HEAD
N_Q, N_KV = N_HEAD * HEAD_DIM, N_HEAD_KV * HEAD_DIM
N_CTX_TRAIN = 4096
RMS_EPS = 1e-5
ROPE_BASE = 10000.0
N_LAYER = 4  # target's layers; target-mtp has N_LAYER - 1 trunk layers + 1 NextN layer
EAGLE3_TARGET_LAYERS = [1, 2, 3]  # layer-input ids of `target`, all < its n_layer
DFLASH_TARGET_LAYERS = [1, 3]
DFLASH_LAYERS = 2
DFLASH_BLOCK_SIZE = 8
MASK_TOKEN_ID = 16  # '<empty_output>', a control token in SmolLM2's vocabulary
N_CONTROL = 17  # SmolLM2's control tokens are ids 0..16 (its EOS tokens among them)
MARKOV_RANK = 16

N_ACTIVE = 12  # the words the models write
LOGIT = 20.0  # head logit of a word's successor: sampling stays on the words
ATTN_GAIN = 0.6  # size of the targets' attention output: how often they leave the cycle
WORD_MARK = 3.0  # a direction shared by the words' embeddings, for DFlash's attention
ANCHOR_FOCUS = 1.15  # how strongly DFlash's mask positions attend to the anchor

SMOL = "smollm2-135m-instruct-q4_1"


def build(kind: str, directory: Path) -> Path:
    """Write the `kind` GGUF into `directory` (reused when already there) and return its path.

    The file name carries a digest of this module's code (its syntax tree: reformatting
    leaves it alone), so an edited recipe never reuses a stale file; the write goes
    through a temp file and a rename, so concurrent builders are safe.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; valid: {', '.join(KINDS)}")
    directory = Path(directory)
    path = directory / f"synthetic-{kind}-{_recipe_digest()}.gguf"
    if path.exists():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    arch, kv, tensors = _RECIPES[kind]()
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        _write(Path(tmp), arch, kv, tensors)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@functools.lru_cache(maxsize=1)
def _recipe_digest() -> str:
    from spectui.config import embedded

    recipe = ast.dump(ast.parse(inspect.getsource(sys.modules[__name__])))  # the code, not its layout
    recipe += embedded.get(SMOL).sha256 + np.__version__.split(".")[0]
    return hashlib.sha256(recipe.encode()).hexdigest()[:12]


# --- tokenizer ------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _tokenizer() -> tuple[list[tuple], list[str]]:
    """Every `tokenizer.*` key of the embedded SmolLM2 GGUF as (key, value, type, subtype),
    and its token strings."""
    import gguf

    from spectui.config import embedded

    reader = gguf.GGUFReader(embedded.model_path(SMOL))
    kv = []
    for key, field in reader.fields.items():
        if key.startswith("tokenizer."):
            vtype = field.types[0]
            sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
            kv.append((key, field.contents(), vtype, sub))
    return kv, reader.fields["tokenizer.ggml.tokens"].contents()


@functools.lru_cache(maxsize=1)
def _active() -> tuple[list[int], dict[int, int]]:
    """N_ACTIVE lowercase words with a leading space ('Ġword' in GPT-2 BPE), and each one's
    successor: one cycle through all of them."""
    tokens = _tokenizer()[1]
    words = [
        i
        for i, t in enumerate(tokens)
        if t[:1] == "\u0120" and 4 <= len(t) <= 8 and t[1:].isascii() and t[1:].isalpha() and t[1:].islower()
    ]
    rng = np.random.default_rng(0)
    active = [words[i] for i in rng.choice(len(words), N_ACTIVE, replace=False)]
    return active, {a: active[(i + 1) % N_ACTIVE] for i, a in enumerate(active)}


# --- weights --------------------------------------------------------------------------
# A numpy (rows, cols) matrix is the ggml tensor ne {cols, rows}: it maps cols -> rows.


def _mat(rng: np.random.Generator, rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
    return (rng.standard_normal((rows, cols)) * (gain / np.sqrt(cols))).astype(np.float32)


def _norm(rng: np.random.Generator, n: int) -> np.ndarray:
    return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)


def _snap(x: np.ndarray) -> np.ndarray:
    """Round a computed array to a 2**-12 grid (see the module docstring)."""
    return (np.round(np.asarray(x, dtype=np.float64) * 4096) / 4096).astype(np.float32)


def _solve(want: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The least-norm matrix W with W @ x[i] = want[i] for every row i (snapped)."""
    return _snap(want.T @ np.linalg.pinv(x.T))


def _quant(array: np.ndarray, qtype: str) -> tuple:
    """Vocabulary-sized matrices dominate the file: quantize them (Q8_0/Q4_0 get_rows and
    mul_mat run on every ggml backend). Returns (bytes, type) for _write."""
    import gguf

    t = gguf.GGMLQuantizationType[qtype]
    return gguf.quants.quantize(array.astype(np.float32), t), t


def _dequant(q: tuple) -> np.ndarray:
    import gguf

    return gguf.quants.dequantize(*q)


def _block(rng, t: dict, i: int, fused_qkv: bool, ffn_gain: float, attn_gain: float = ATTN_GAIN) -> None:
    """A llama-style block: blk.{i}.attn_norm, attn_q/k/v or attn_qkv, attn_output,
    ffn_norm, ffn_gate/up/down (LLM_TENSOR_NAMES, src/llama-arch.cpp)."""
    p = f"blk.{i}."
    t[p + "attn_norm.weight"] = _norm(rng, N_EMBD)
    q, k, v = _mat(rng, N_Q, N_EMBD, 2.0), _mat(rng, N_KV, N_EMBD, 2.0), _mat(rng, N_KV, N_EMBD)
    if fused_qkv:
        t[p + "attn_qkv.weight"] = np.concatenate([q, k, v])
    else:
        t[p + "attn_q.weight"], t[p + "attn_k.weight"], t[p + "attn_v.weight"] = q, k, v
    t[p + "attn_output.weight"] = _mat(rng, N_EMBD, N_Q, attn_gain)
    t[p + "ffn_norm.weight"] = _norm(rng, N_EMBD)
    t[p + "ffn_gate.weight"] = _mat(rng, N_FF, N_EMBD, 2.0)
    t[p + "ffn_up.weight"] = _mat(rng, N_FF, N_EMBD, 2.0)
    t[p + "ffn_down.weight"] = _mat(rng, N_EMBD, N_FF, ffn_gain)


def _rms_norm(x: np.ndarray, w: np.ndarray | float = 1.0) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + RMS_EPS) * w


def _hidden(t: dict, x: np.ndarray, n_layer: int) -> np.ndarray:
    """A target's normed final hidden state for lone token embeddings x, attention left out
    (llama.cpp's build_norm(LLM_NORM_RMS) and build_ffn(LLM_FFN_SILU, LLM_FFN_PAR))."""
    for i in range(n_layer):
        p = f"blk.{i}."
        y = _rms_norm(x, t[p + "ffn_norm.weight"])
        g, u = y @ t[p + "ffn_gate.weight"].T, y @ t[p + "ffn_up.weight"].T
        x = x + (g / (1 + np.exp(-g)) * u) @ t[p + "ffn_down.weight"].T
    return _rms_norm(x, t["output_norm.weight"])


@functools.cache
def _design(arch: str) -> tuple[dict, dict]:
    """A target's tensors (llama, or mimo2's trunk) and what the drafts need to mimic it.

    The last layer's FFN does most of the work. The head rows of the words solve
    head[successor(a)] . hidden(a) = LOGIT and head[b] . hidden(a) = 0 for the other words;
    other rows are small noise (so their maximum is positive and the zero rows of the
    control tokens, EOS among them, never win).
    """
    n_layer = N_LAYER if arch == "llama" else N_LAYER - 1
    rng = np.random.default_rng({"llama": 1, "mimo2": 2}[arch])
    n_vocab = len(_tokenizer()[1])
    active, successor = _active()
    embd = rng.standard_normal((n_vocab, N_EMBD))
    mark = _snap(_rms_norm(rng.standard_normal(N_EMBD)) / 8)  # a unit vector
    embd[active] += WORD_MARK * mark
    # control tokens (the DFlash mask among them) near zero and orthogonal to the mark
    embd[:N_CONTROL] = _snap(0.01 * embd[:N_CONTROL] @ (np.eye(N_EMBD) - np.outer(mark, mark)))
    embd = _quant(embd, "Q8_0")
    t = {"token_embd.weight": embd, "output_norm.weight": _norm(rng, N_EMBD)}
    for i in range(n_layer):
        _block(rng, t, i, fused_qkv=arch == "mimo2", ffn_gain=2.0 if i == n_layer - 1 else 0.3)

    e = _dequant(embd)[active]  # what llama.cpp reads
    h = _hidden(t, e, n_layer)
    head = rng.standard_normal((n_vocab, N_EMBD)) * 0.01
    head[:N_CONTROL] = 0.0
    want = np.array([[LOGIT * (successor[a] == b) for b in active] for a in active])
    head[active] = _solve(want, h)
    t["output.weight"] = _quant(head, "Q4_0")
    return t, {"e": e, "h": h, "mark": mark, "mask": _dequant(embd)[MASK_TOKEN_ID]}


def _common_kv(arch: str, n_layer: int) -> dict:
    """Keys llama_model_base::load_hparams (src/llama-model.cpp) and the archs here read;
    spellings from LLM_KV_NAMES in src/llama-arch.cpp."""
    return {
        f"{arch}.context_length": ("u32", N_CTX_TRAIN),
        f"{arch}.embedding_length": ("u32", N_EMBD),
        f"{arch}.block_count": ("u32", n_layer),
        f"{arch}.feed_forward_length": ("u32", N_FF),
        f"{arch}.attention.head_count": ("u32", N_HEAD),
        f"{arch}.attention.head_count_kv": ("u32", N_HEAD_KV),
        f"{arch}.attention.layer_norm_rms_epsilon": ("f32", RMS_EPS),
        f"{arch}.rope.freq_base": ("f32", ROPE_BASE),
    }


# --- recipes --------------------------------------------------------------------------


def _target():
    """llama: src/models/llama.cpp."""
    t, _ = _design("llama")
    return "llama", _common_kv("llama", N_LAYER), t


def _target_mtp():
    """mimo2 + one NextN block as layer 3: src/models/mimo2.cpp.

    load_arch_hparams requires the sliding-window size and per-layer pattern (swa_type is
    always STANDARD, and llama_model::create_memory asserts some layer is SWA) and
    expert_feed_forward_length (unused, no experts). The window is the training context, so
    "SWA" layers see everything and nothing is ever pruned. token_embd and output are both
    required. graph_mtp asserts the NextN block has a fused attn_qkv and a dense FFN, plus
    blk.3.nextn.eh_proj/enorm/hnorm; shared_head_norm is optional (else output_norm). The
    block copies the target's last FFN and eh_proj passes the token half through, so it
    guesses the token after the one it is fed the way the target does.
    """
    arch, trunk = "mimo2", N_LAYER - 1
    t = dict(_design(arch)[0])
    rng = np.random.default_rng(3)
    _block(rng, t, trunk, fused_qkv=True, ffn_gain=2.0, attn_gain=0.2)
    for w in ("ffn_norm", "ffn_gate", "ffn_up", "ffn_down"):
        t[f"blk.{trunk}.{w}.weight"] = t[f"blk.{trunk - 1}.{w}.weight"]
    p = f"blk.{trunk}.nextn."
    eh = _mat(rng, N_EMBD, 2 * N_EMBD, 0.1)  # concat(enorm(token embd), hnorm(h)) -> n_embd
    eh[:, :N_EMBD] += np.eye(N_EMBD, dtype=np.float32)
    t[p + "eh_proj.weight"] = eh
    t[p + "enorm.weight"] = np.ones(N_EMBD, dtype=np.float32)
    t[p + "hnorm.weight"] = np.ones(N_EMBD, dtype=np.float32)
    t[p + "shared_head_norm.weight"] = t["output_norm.weight"]
    kv = _common_kv(arch, N_LAYER)
    kv |= {
        f"{arch}.nextn_predict_layers": ("u32", 1),
        f"{arch}.expert_feed_forward_length": ("u32", N_FF),
        f"{arch}.attention.sliding_window": ("u32", N_CTX_TRAIN),
        # trunk full, SWA, full; the NextN layer SWA like MiMo's (conversion/mimo.py)
        f"{arch}.attention.sliding_window_pattern": ("bool[]", [False, True, False, True]),
    }
    return arch, kv, t


def _eagle3():
    """eagle3: src/models/eagle3.cpp. fc fuses the 3 target features; one decoder layer whose
    q/k/v read concat(attn_norm(token embd), attn_norm_2(g)), 2*n_embd wide. Metadata as
    conversion/llama.py writes it. fc maps the deepest feature (mostly the embedding of the
    word at that position) to its successor's hidden state, so the first drafted token is
    the target's own guess for the token after id_last."""
    arch = "eagle3"
    _, d = _design("llama")
    active, successor = _active()
    rng = np.random.default_rng(4)
    fc = _mat(rng, N_EMBD, len(EAGLE3_TARGET_LAYERS) * N_EMBD, 0.1)
    fc[:, -N_EMBD:] += _solve(d["h"][[active.index(successor[a]) for a in active]], d["e"])
    t = {"fc.weight": fc, "output_norm.weight": np.ones(N_EMBD, dtype=np.float32)}
    t["blk.0.attn_norm.weight"] = _norm(rng, N_EMBD)
    t["blk.0.attn_norm_2.weight"] = _norm(rng, N_EMBD)
    t["blk.0.attn_q.weight"] = _mat(rng, N_Q, 2 * N_EMBD, 2.0)
    t["blk.0.attn_k.weight"] = _mat(rng, N_KV, 2 * N_EMBD, 2.0)
    t["blk.0.attn_v.weight"] = _mat(rng, N_KV, 2 * N_EMBD)
    t["blk.0.attn_output.weight"] = _mat(rng, N_EMBD, N_Q, ATTN_GAIN)
    t["blk.0.ffn_norm.weight"] = _norm(rng, N_EMBD)
    t["blk.0.ffn_gate.weight"] = _mat(rng, N_FF, N_EMBD, 2.0)
    t["blk.0.ffn_up.weight"] = _mat(rng, N_FF, N_EMBD, 2.0)
    t["blk.0.ffn_down.weight"] = _mat(rng, N_EMBD, N_FF, 0.6)
    kv = _common_kv(arch, 1)
    kv |= {
        f"{arch}.target_layers": ("i32[]", EAGLE3_TARGET_LAYERS),
        f"{arch}.target_hidden_size": ("u32", N_EMBD),
    }
    return arch, kv, t


def _dflash(markov: bool = False):
    """dflash: src/models/dflash.cpp (load_arch_tensors). fc + enc.output_norm encode the
    target features that get injected as K/V; the layers have q/k norms. Metadata as
    conversion/qwen.py (DFlashModel, DSparkModel) writes it; common/speculative.cpp reads
    dflash.block_size, dflash.sample_from_anchor and llama_vocab_mask().

    Layer 0 makes the block's <mask> positions attend mostly to the anchor (id_last): in
    head dim 7 (NeoX pairs it with 15 at the slowest RoPE frequency, so relative position
    barely turns it) every query carries the mask's direction and every key the words'
    shared mark, which injected features and the mask lack. attn_output maps the anchor
    word's value to the target's hidden state for it, so the drafted tokens start with
    the target's guess; the attention that goes to the context adds noise.
    """
    arch = "dflash"
    _, d = _design("llama")
    rng = np.random.default_rng(5)
    mark, ones = d["mark"], np.ones(N_EMBD, dtype=np.float32)
    fc = _mat(rng, N_EMBD, len(DFLASH_TARGET_LAYERS) * N_EMBD)
    t = {
        "fc.weight": _snap((np.eye(N_EMBD) - np.outer(mark, mark)) @ fc),
        "enc.output_norm.weight": ones,
        "output_norm.weight": ones,
    }
    for i in range(DFLASH_LAYERS):
        _block(rng, t, i, fused_qkv=False, ffn_gain=0.2, attn_gain=0.3)
        t[f"blk.{i}.attn_q_norm.weight"] = _norm(rng, HEAD_DIM)
        t[f"blk.{i}.attn_k_norm.weight"] = _norm(rng, HEAD_DIM)
    t["blk.0.attn_norm.weight"] = ones
    t["blk.0.attn_q.weight"][7::HEAD_DIM] = _snap(3 * _rms_norm(d["mask"]) / 8)
    t["blk.0.attn_k.weight"][7::HEAD_DIM] = 3 * mark
    t["blk.0.attn_q_norm.weight"][7] = t["blk.0.attn_k_norm.weight"][7] = ANCHOR_FOCUS
    value = _rms_norm(d["e"]) @ t["blk.0.attn_v.weight"].T  # each kv head serves 2 q heads
    value = np.repeat(value.reshape(-1, N_HEAD_KV, HEAD_DIM), N_HEAD // N_HEAD_KV, axis=1)
    t["blk.0.attn_output.weight"] = _solve(d["h"], value.reshape(-1, N_Q))
    kv = _common_kv(arch, DFLASH_LAYERS)
    kv |= {
        f"{arch}.target_layers": ("i32[]", DFLASH_TARGET_LAYERS),
        f"{arch}.block_size": ("u32", DFLASH_BLOCK_SIZE),
        # read for DSpark only; true in both, so a drafter that ignores the type shows it
        f"{arch}.sample_from_anchor": ("bool", True),
        "tokenizer.ggml.mask_token_id": ("u32", MASK_TOKEN_ID),
    }
    if markov:
        # build_dspark_markov_head: logits += markov_w2 @ markov_w1[prev], chained through
        # the block. w1 gives each word an orthonormal code, w2 turns a word's code into a
        # bonus for its successor. common_speculative_types_from_gguf tells DSpark from
        # DFlash by the presence of markov_w1.weight.
        n_vocab = len(_tokenizer()[1])
        active, successor = _active()
        codes = _snap(np.linalg.qr(rng.standard_normal((MARKOV_RANK, MARKOV_RANK)))[0][:N_ACTIVE])
        w1 = rng.standard_normal((n_vocab, MARKOV_RANK)) * 0.3
        w1[active] = codes
        w2 = np.zeros((n_vocab, MARKOV_RANK))
        w2[[successor[a] for a in active]] = codes * LOGIT
        t["markov_w1.weight"] = w1.astype(np.float16)
        t["markov_w2.weight"] = w2.astype(np.float16)
        # confidence per position: sigmoid(conf_proj . [t_embd; markov_w1[prev]] + bias)
        t["conf_proj.weight"] = _mat(rng, 1, N_EMBD + MARKOV_RANK, 2.0)
        t["conf_proj.bias"] = np.full(1, 1.5, dtype=np.float32)  # mostly above 0.5
        kv[f"{arch}.has_confidence_head"] = ("bool", True)
    return arch, kv, t


_RECIPES = {
    "target": _target,
    "target-mtp": _target_mtp,
    "eagle3": _eagle3,
    "dflash": _dflash,
    "dspark": functools.partial(_dflash, markov=True),
}


# --- writing --------------------------------------------------------------------------


def _write(path: Path, arch: str, kv: dict, tensors: dict) -> None:
    import gguf

    T = gguf.GGUFValueType
    types = {"u32": T.UINT32, "i32": T.INT32, "f32": T.FLOAT32, "bool": T.BOOL}
    w = gguf.GGUFWriter(path, arch)  # writes general.architecture
    w.add_name(f"spectui synthetic {arch}")

    def add(key: str, kind: str, value) -> None:
        if kind.endswith("[]"):
            w.add_key_value(key, value, T.ARRAY, types[kind[:-2]])
        else:
            w.add_key_value(key, value, types[kind])

    # arch keys, then SmolLM2's tokenizer keys, then ours (mask_token_id)
    for key, (kind, value) in kv.items():
        if not key.startswith("tokenizer."):
            add(key, kind, value)
    for key, value, vtype, sub in _tokenizer()[0]:
        w.add_key_value(key, value, vtype, sub)
    for key, (kind, value) in kv.items():
        if key.startswith("tokenizer."):
            add(key, kind, value)
    for name, array in tensors.items():
        if isinstance(array, tuple):  # (quantized bytes, type) from _quant
            w.add_tensor(name, array[0], raw_dtype=array[1])
        else:
            w.add_tensor(name, array)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/synthetic_models.py DIRECTORY")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    for kind in KINDS:
        p = build(kind, Path(sys.argv[1]))
        print(f"{kind:11} {p} {p.stat().st_size:,} bytes")
