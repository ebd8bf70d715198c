"""Which spec type a model file drafts with, and whether a draft fits its target.

Read from the GGUF headers before anything loads, as llama.cpp's
common_speculative_types_from_gguf does: arch `eagle3` is an EAGLE-3 draft, arch `dflash`
a DFlash draft, or DSpark when it carries a Markov head; a target whose last block has a
NextN projection can draft for itself (MTP). Any other draft is a plain model
(draft-simple). Each rule that fails is one line naming it.
"""

from __future__ import annotations

import functools
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

from spectui import spec_types
from spectui.errors import UserError
from spectui.llama.gguf import check_gguf_file
from spectui.spec_config import DRAFT_FILE_TYPES, MTP_TYPES

VOCAB_MAX_SIZE_DIFFERENCE = 128  # llama.cpp's SPEC_VOCAB_MAX_SIZE_DIFFERENCE


@dataclass(frozen=True)
class Header:
    """What the speculation rules need of one GGUF file."""

    path: Path
    arch: str
    n_embd: int
    n_layer: int  # block_count, NextN layers included
    n_nextn: int  # {arch}.nextn_predict_layers
    target_layers: tuple[int, ...]  # hidden-state drafts: the target layers they read
    target_hidden_size: int | None
    block_size: int | None  # dflash.block_size
    selector_top_k: int
    tensors: frozenset[str]
    tokenizer: str | None = None  # tokenizer.ggml.model ("gpt2", "llama", ...)
    n_vocab: int = 0  # entries in tokenizer.ggml.tokens
    n_ctx_train: int = 0  # {arch}.context_length (0: not given)

    @property
    def draft_type(self) -> spec_types.Spec:
        """The spec type this file drafts with, as a draft model: the head whose architecture
        (and tensor, the most specific first) it has, else a plain draft model."""
        heads = [t for t in spec_types.TYPES if t.head_arch == self.arch and t.head_tensor in self.tensors | {""}]
        return max(heads, key=lambda t: bool(t.head_tensor)).name if heads else spec_types.DRAFT_SIMPLE

    @property
    def has_nextn(self) -> bool:
        """A target with its own NextN (MTP) layer."""
        return self.n_layer > 0 and f"blk.{self.n_layer - 1}.nextn.eh_proj.weight" in self.tensors


class StringCount(int):
    """An array of strings the parser stepped over: how many there were."""


# GGUF value types: struct format of the fixed-size ones; 8 is a string, 9 an array.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def _parse(buf) -> tuple[dict, list[str]]:
    """The key-values (arrays of strings skipped) and tensor names of a GGUF header."""
    off = 0

    def take(fmt: str):
        nonlocal off
        v = struct.unpack_from("<" + fmt, buf, off)
        off += struct.calcsize("<" + fmt)
        return v[0] if len(v) == 1 else v

    def string() -> str:
        nonlocal off
        n = take("Q")
        off += n
        return buf[off - n : off].decode("utf-8", "replace")

    def value(vtype: int):
        nonlocal off
        if vtype == 8:
            return string()
        if vtype == 9:
            etype, count = take("IQ")
            if etype in _SCALARS:
                size = struct.calcsize(_SCALARS[etype])
                off += size * count
                return (
                    list(struct.unpack_from(f"<{count}{_SCALARS[etype]}", buf, off - size * count))
                    if count < 4096
                    else None
                )
            if etype == 8:  # a vocabulary: stepped over, string by string, not decoded; its size kept
                for _ in range(count):
                    off += 8 + struct.unpack_from("<Q", buf, off)[0]
                return StringCount(count)
            for _ in range(count):  # an array of arrays: walked, not kept
                value(etype)
            return None
        return take(_SCALARS[vtype])

    if buf[:4] != b"GGUF":
        raise ValueError("bad magic")
    _version, n_tensors, n_kv = take("4xIQQ")
    kv = {}
    for _ in range(n_kv):
        key = string()
        kv[key] = value(take("I"))
    names = []
    for _ in range(n_tensors):
        names.append(string())
        n_dims = take("I")
        off += 8 * n_dims + 4 + 8
    return kv, names


def read_header(path: Path) -> Header:
    check_gguf_file(path)
    stat = path.stat()
    return _read_header(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _read_header(path: Path, _mtime_ns: int, _size: int) -> Header:
    """Parsed once per file version: a 151k-token vocabulary takes a sizeable fraction of a second."""
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            kv, names = _parse(m)
    except (ValueError, OverflowError, struct.error, KeyError, RecursionError) as e:  # arrays of arrays recurse
        raise UserError(f"cannot load model {path}: its GGUF header is cut short or corrupt ({e})") from e

    def value(key: str):
        return kv.get(key)

    arch = value("general.architecture") or "?"
    layers = value(f"{arch}.target_layers")
    layers = [] if layers is None else layers if isinstance(layers, list) else [layers]
    return Header(
        path=path,
        arch=arch,
        n_embd=int(value(f"{arch}.embedding_length") or 0),
        n_layer=int(value(f"{arch}.block_count") or 0),
        n_nextn=int(value(f"{arch}.nextn_predict_layers") or 0),
        target_layers=tuple(int(x) for x in layers),
        target_hidden_size=value(f"{arch}.target_hidden_size"),
        block_size=value("dflash.block_size"),
        selector_top_k=int(value("dflash.selector_top_k") or 0),
        tensors=frozenset(names),
        tokenizer=value("tokenizer.ggml.model"),
        n_vocab=int(value("tokenizer.ggml.tokens") or 0),
        n_ctx_train=int(value(f"{arch}.context_length") or 0),
    )


def vocabulary_misfit(target: Header, draft: Header) -> str | None:
    """Why a plain draft cannot share the target's vocabulary, from the headers alone: the
    first of llama.cpp's rules a header shows (tokenizer kind, vocabulary size); the
    token-by-token rules run when the vocabularies load. None where the headers agree."""
    if draft.draft_type != spec_types.DRAFT_SIMPLE or not (target.n_vocab and draft.n_vocab):
        return None
    if target.tokenizer != draft.tokenizer:
        return f"its tokenizer is {draft.tokenizer}, the target's {target.tokenizer}"
    diff = abs(target.n_vocab - draft.n_vocab)
    if diff > VOCAB_MAX_SIZE_DIFFERENCE:
        return f"its vocabulary has {draft.n_vocab} tokens, the target's {target.n_vocab}"
    return None


def check(target: Header, draft: Header | None, types: tuple[str, ...]) -> None:
    """Refuse a draft that cannot serve `types` with this target, in one line."""
    mtp = [t for t in types if t in MTP_TYPES]
    if mtp and not target.has_nextn:
        raise UserError(f"--spec-type {mtp[0]} needs a target with NextN (MTP) layers; {target.path.name} has none")
    if mtp and target.n_nextn > 1:
        raise UserError(
            f"{target.path.name} chains {target.n_nextn} NextN heads, which spectui's {mtp[0]} "
            "does not run yet (one head only)"
        )
    needing = [t for t in types if t in DRAFT_FILE_TYPES]
    if draft is None:
        if needing:
            raise UserError(f"--spec-type {needing[0]} needs a draft model: pass it with -md/--model-draft")
        return
    kind = draft.draft_type
    for t in needing:
        if t != kind:
            raise UserError(f"{draft.path.name} is a {kind} draft, not a {t} one: use --spec-type {kind}")
    if kind == spec_types.DRAFT_SIMPLE:
        return
    if not draft.target_layers:
        raise UserError(f"{draft.path.name} lists no target layers ({draft.arch}.target_layers)")
    if kind == spec_types.DRAFT_EAGLE3 and len(draft.target_layers) != 3:
        raise UserError(f"{draft.path.name} reads {len(draft.target_layers)} target layers; EAGLE-3 reads 3")
    n_layer = target.n_layer - target.n_nextn
    top = n_layer if kind == spec_types.DRAFT_EAGLE3 else n_layer - 1
    bad = [i for i in draft.target_layers if not 0 <= i <= top]
    if bad:
        raise UserError(f"{draft.path.name} reads target layer {bad[0]}, but {target.path.name} has {n_layer} layers")
    if draft.target_hidden_size not in (None, target.n_embd):
        raise UserError(
            f"{draft.path.name} was trained on a target with n_embd {draft.target_hidden_size}; "
            f"{target.path.name} has {target.n_embd}"
        )
    if draft.arch == "dflash":
        if draft.block_size is None:
            raise UserError(f"{draft.path.name} lacks the dflash.block_size metadata its converter writes")
        if draft.selector_top_k > 0:
            raise UserError(f"{draft.path.name} is a DFlash2 (selector) draft, which spectui does not run yet")
