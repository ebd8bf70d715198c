"""The typed Setup: models, context, speculation and sampling, as flags and presets name them.

Each field's metadata holds its command-line flags and help, and the speculation's are the
SpecConfig fields' own; OPTIONS lists them all, flat, under the names presets and saved chats
use as keys (cli/options.py builds the parser from it, presets.py checks keys against it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

from spectui.errors import UserError
from spectui.llama.context_params import BACKEND_SAMPLING, KV_CACHE_TYPES, MIN_CTX, ContextParams
from spectui.llama.runtime import usable_cores
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import SpecConfig, parse_types

FLASH_ATTN = ("on", "off", "auto")
INT_MAX = 2**31 - 1  # llama.cpp's int32 fields
GROUPS = ("models", "speculation", "sampling")


def _opt(default, *flags: str, help: str, group: str, choices: tuple = (), owned: bool = False):
    """A Setup field: `owned` ones (the models and the speculation) are what a preset chooses,
    so switching presets replaces them even when they were given on the command line."""
    return field(
        default=default, metadata={"flags": flags, "help": help, "group": group, "choices": choices, "owned": owned}
    )


def _model(default, *flags, **kw):
    return _opt(default, *flags, group="models", **kw)


def _sampling(default, *flags, **kw):
    return _opt(default, *flags, group="sampling", **kw)


@dataclass(frozen=True)
class Setup:
    """Resolved settings. Field names are the flags' names and a preset's keys; the speculation's
    are OPTIONS' (spec_type, spec_draft_n_max, ...), read with value() and set with with_values()."""

    server: str | None = _model(
        None,
        "--server",
        help="watch a running llama-server (URL; several, comma-separated, "
        "to switch between their configurations) instead of loading models; its API key "
        "from LLAMA_API_KEY",
        owned=True,
    )
    model: str | None = _model(None, "-m", "--model", help="target GGUF file or embedded model name", owned=True)
    model_draft: str | None = _model(
        None, "-md", "--model-draft", help="draft GGUF file or embedded model name (same tokenizer)", owned=True
    )
    n_gpu_layers: int = _model(-1, "-ngl", "--n-gpu-layers", help="target layers on the GPU (-1: all)", owned=True)
    n_gpu_layers_draft: int = _model(
        -1, "-ngld", "--n-gpu-layers-draft", help="draft layers on the GPU (-1: all)", owned=True
    )
    ctx_size: int = _model(4096, "-c", "--ctx-size", help="context size in tokens (default 4096)")
    batch_size: int = _model(512, "-b", "--batch-size", help="logical batch size (default 512)")
    threads: int | None = _model(None, "-t", "--threads", help="CPU threads (default: the physical cores)")
    flash_attn: str = _model("auto", "-fa", "--flash-attn", help="flash attention (default auto)", choices=FLASH_ATTN)
    backend_sampling: str = _model(
        "auto",
        "-bs",
        "--backend-sampling",
        choices=BACKEND_SAMPLING,
        help="greedy's argmax or sampling's top-k in llama.cpp's graph, so no "
        "logits row is copied out (default auto: where the output layer is on a GPU)",
    )
    cache_type_k_draft: str = _model(
        "f16",
        "-ctkd",
        "--cache-type-k-draft",
        choices=tuple(KV_CACHE_TYPES),
        help="draft KV cache type for K (default f16)",
        owned=True,
    )
    cache_type_v_draft: str = _model(
        "f16",
        "-ctvd",
        "--cache-type-v-draft",
        choices=tuple(KV_CACHE_TYPES),
        help="draft KV cache type for V (needs -fa on if quantized)",
        owned=True,
    )
    # the speculation: its options are SpecConfig's fields (OPTIONS), so a preset owns them
    spec: SpecConfig = field(default=SpecConfig(), metadata={"group": "speculation", "owned": True})
    n_predict: int = _sampling(-1, "-n", "--n-predict", help="max tokens per answer (-1: no limit)")
    temp: float = _sampling(0.8, "--temp", help="temperature (default 0.8; 0 = greedy)")
    top_k: int = _sampling(40, "--top-k", help="top-k (default 40)")
    top_p: float = _sampling(0.95, "--top-p", help="top-p (default 0.95)")
    min_p: float = _sampling(0.05, "--min-p", help="min-p (default 0.05)")
    seed: int | None = _sampling(None, "--seed", help="random seed (reproducible runs; -1: random)")
    system: str | None = _sampling(None, "--system", help="system prompt")
    preset: str = field(default="default", metadata={})  # the preset it was resolved from
    notes: tuple[str, ...] = field(default=(), metadata={})  # what resolve changed, to tell the user

    def __post_init__(self):
        """Every value is checked here, whether a flag, a preset or a saved chat gave it, so a
        bad one is one line before any model loads (llama.cpp aborts on some, hangs on others)."""
        for name in ("temp", "top_p", "min_p"):
            if not math.isfinite(getattr(self, name)):
                raise UserError(f"--{name.replace('_', '-')} must be a finite number, got {getattr(self, name)}")
        if self.temp < 0:
            raise UserError(f"--temp must be 0 (greedy) or more, got {self.temp}")
        for name in ("top_p", "min_p"):
            if not 0 <= getattr(self, name) <= 1:
                raise UserError(f"--{name.replace('_', '-')} must be between 0 and 1, got {getattr(self, name)}")
        if not 0 <= self.top_k <= INT_MAX:
            raise UserError(f"--top-k must be 0 (off) or more, got {self.top_k}")
        if self.n_predict == 0 or not -1 <= self.n_predict <= INT_MAX:
            raise UserError(f"-n/--n-predict must be at least 1, or -1 for no limit; got {self.n_predict}")
        if self.seed is not None and not -1 <= self.seed < 2**32:
            raise UserError(f"--seed must be 0 to {2**32 - 1}, or -1 for a random one; got {self.seed}")
        for flag, n in (("-ngl", self.n_gpu_layers), ("-ngld", self.n_gpu_layers_draft)):
            if not -1 <= n <= INT_MAX:
                raise UserError(f"{flag} must be -1 (all) or a number of layers, got {n}")
        if self.ctx_size == 0:
            raise UserError(
                f"-c 0 (in llama.cpp: the model's training size) is not supported; give a size in "
                f"tokens, at least {MIN_CTX} (default 4096)"
            )
        if not MIN_CTX <= self.ctx_size <= INT_MAX:
            raise UserError(
                f"-c/--ctx-size must be at least {MIN_CTX} tokens, llama.cpp's smallest context; got {self.ctx_size}"
            )
        if not 1 <= self.batch_size <= INT_MAX:
            raise UserError(f"-b/--batch-size must be at least 1, got {self.batch_size}")
        if self.threads is not None and self.threads < 1:
            raise UserError(
                f"-t/--threads must be at least 1, got {self.threads}; leave it out to use the physical cores"
            )
        if self.threads is not None and self.threads > (cpus := usable_cores()):
            raise UserError(
                f"-t/--threads {self.threads} is more than the {cpus} CPUs this process may use; "
                f"give 1 to {cpus}, or leave it out to use the physical cores"
            )
        if self.cache_type_v_draft != "f16" and self.flash_attn == "off":
            raise UserError(
                f"-ctvd {self.cache_type_v_draft}: a quantized V cache needs flash attention; "
                "give -fa on (or auto), or leave -ctvd out"
            )

    def value(self, name: str):
        """Option `name`'s value as a preset holds it (the spec types as one "a,b" string)."""
        spec_field = SPEC_FIELDS.get(name)
        if spec_field is None:
            return getattr(self, name)
        return self.spec.label if spec_field == "types" else getattr(self.spec, spec_field)

    def values(self) -> dict:
        """Every option by name, flat: what a preset saves, a saved chat keeps and a record shows."""
        return {name: self.value(name) for name in OPTIONS}

    def with_values(self, values: dict, **changes) -> Setup:
        """This setup with `values` (option name -> value, as values() gives them) over it, and
        `changes` to the other fields (preset, notes); a bad speculation value is a UserError."""
        spec = {
            SPEC_FIELDS[k]: parse_types(v) if k == "spec_type" else v for k, v in values.items() if k in SPEC_FIELDS
        }
        own = {k: v for k, v in values.items() if k not in SPEC_FIELDS}
        return replace(self, **own, **changes, spec=self.spec.replace(**spec) if spec else self.spec)

    def sampling(self) -> SamplingParams:
        seed = None if self.seed == -1 else self.seed  # -1: random, as in llama.cpp
        return SamplingParams(temp=self.temp, top_k=self.top_k, top_p=self.top_p, min_p=self.min_p, seed=seed)

    def ctx_params(self, draft: bool = False) -> ContextParams:
        return ContextParams(
            n_ctx=self.ctx_size,
            n_batch=self.batch_size,
            n_threads=self.threads or 0,
            flash_attn=self.flash_attn,
            type_k=self.cache_type_k_draft if draft else "f16",
            type_v=self.cache_type_v_draft if draft else "f16",
            backend_sampling=self.backend_sampling,
        )


@dataclass(frozen=True)
class Option:
    """One setting as a command-line flag and as a key of a preset or a saved chat."""

    name: str  # the key, and the flag's dest
    flags: tuple[str, ...]
    help: str
    group: str  # one of GROUPS
    type: type  # int, float or str
    choices: tuple[str, ...] = ()
    owned: bool = False  # a preset chooses it (see _opt)


# The annotations' types; the spec types' tuple is one comma-separated string in a flag or a preset.
_TYPES = {"int": int, "float": float, "str": str, "tuple[str, ...]": str}


def _spec_key(f) -> str:
    """A SpecConfig field's option name: its flag's, with underscores ("--spec-type": spec_type)."""
    return f.metadata["flag"].removeprefix("--").replace("-", "_")


# a speculation option's name -> its SpecConfig field ("spec_type" -> "types")
SPEC_FIELDS = {_spec_key(f): f.name for f in fields(SpecConfig)}


def _options() -> dict[str, Option]:
    """Setup's option fields in order, the speculation's SpecConfig fields in its place."""
    out = {}
    for f in fields(Setup):
        if f.name == "spec":
            for s in fields(SpecConfig):
                meta, name = s.metadata, _spec_key(s)
                assert isinstance(s.type, str)  # annotations are strings (from __future__ import annotations)
                default = ",".join(s.default) if isinstance(s.default, tuple) else s.default
                out[name] = Option(
                    name,
                    (meta["flag"],),
                    f"{meta['help']} (default {default})",
                    f.metadata["group"],
                    _TYPES[s.type],
                    meta["choices"],
                    f.metadata["owned"],
                )
        elif "flags" in f.metadata:
            meta = f.metadata
            out[f.name] = Option(
                f.name,
                meta["flags"],
                meta["help"],
                meta["group"],
                _TYPES[f.type.split(" | ")[0]],
                meta["choices"],
                meta["owned"],
            )
    return out


# option name -> Option, for every setting a flag or a preset may set
OPTIONS = _options()


def check_value(name: str, value, where: str):
    """`value` for option `name` as its type (an int where a float goes is fine), or a
    UserError naming `where` (a file), the key and what it must be."""
    want = OPTIONS[name].type
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, want) or isinstance(value, bool):
        raise UserError(f"{where}: key '{name}' must be {want.__name__}, got {type(value).__name__} {value!r}")
    choices = OPTIONS[name].choices
    if choices and value not in choices:
        raise UserError(f"{where}: key '{name}' must be one of {', '.join(choices)}, got {value!r}")
    return value


def kept_across_presets(overrides: dict) -> dict:
    """The overrides a preset switch keeps: sampling, context, system prompt; not the
    models or the speculation, which are what a preset chooses."""
    return {k: v for k, v in overrides.items() if k in OPTIONS and not OPTIONS[k].owned}
