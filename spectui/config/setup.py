"""The typed Setup: models, context, speculation and sampling, as flags and presets name them.

Each field's metadata holds its command-line flags and help (config/options.py builds the
parser from them, presets.py checks keys against them) and whether a preset owns it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from spectui.engine.model import BACKEND_SAMPLING, KV_CACHE_TYPES, MIN_CTX, ContextParams
from spectui.engine.sampling import SamplingParams
from spectui.engine.spec_config import (ALL_TYPES, AUTO, DRAFT_SAMPLING, NGRAM_FIELDS, VERIFY_MODES, SpecConfig,
                                        parse_types)
from spectui.errors import UserError

FLASH_ATTN = ("on", "off", "auto")
GROUPS = ("models", "speculation", "sampling")


def _opt(default, *flags: str, help: str, group: str, choices: tuple = (), owned: bool = False):
    """A Setup field: `owned` ones (the models and the speculation) are what a preset chooses,
    so switching presets replaces them even when they were given on the command line."""
    return field(default=default, metadata={"flags": flags, "help": help, "group": group,
                                            "choices": choices, "owned": owned})


def _model(default, *flags, **kw):
    return _opt(default, *flags, group="models", **kw)


def _spec(default, *flags, **kw):
    return _opt(default, *flags, group="speculation", owned=True, **kw)


def _sampling(default, *flags, **kw):
    return _opt(default, *flags, group="sampling", **kw)


@dataclass(frozen=True)
class Setup:
    """Resolved settings. Field names are the flags' names and a preset's keys."""

    server: str | None = _model(None, "--server", help="watch a running llama-server (URL; several, comma-separated, "
                                "to switch between their configurations) instead of loading models; its API key "
                                "from LLAMA_API_KEY", owned=True)
    model: str | None = _model(None, "-m", "--model", help="target GGUF file or embedded model name", owned=True)
    model_draft: str | None = _model(None, "-md", "--model-draft",
                                     help="draft GGUF file or embedded model name (same tokenizer)", owned=True)
    n_gpu_layers: int = _model(-1, "-ngl", "--n-gpu-layers", help="target layers on the GPU (-1: all)", owned=True)
    n_gpu_layers_draft: int = _model(-1, "-ngld", "--n-gpu-layers-draft", help="draft layers on the GPU (-1: all)",
                                     owned=True)
    ctx_size: int = _model(4096, "-c", "--ctx-size", help="context size in tokens (default 4096)")
    batch_size: int = _model(512, "-b", "--batch-size", help="logical batch size (default 512)")
    threads: int | None = _model(None, "-t", "--threads", help="CPU threads (default: the physical cores)")
    flash_attn: str = _model("auto", "-fa", "--flash-attn", help="flash attention (default auto)", choices=FLASH_ATTN)
    backend_sampling: str = _model("auto", "-bs", "--backend-sampling", choices=BACKEND_SAMPLING,
                                   help="greedy's argmax or sampling's top-k in llama.cpp's graph, so no "
                                        "logits row is copied out (default auto: where the output layer is on a GPU)")
    cache_type_k_draft: str = _model("f16", "-ctkd", "--cache-type-k-draft", choices=tuple(KV_CACHE_TYPES),
                                     help="draft KV cache type for K (default f16)", owned=True)
    cache_type_v_draft: str = _model("f16", "-ctvd", "--cache-type-v-draft", choices=tuple(KV_CACHE_TYPES),
                                     help="draft KV cache type for V (needs -fa on if quantized)", owned=True)
    spec_type: str = _spec("none", "--spec-type", help=f"{', '.join(ALL_TYPES)} (comma-separated to combine; "
                           f"{AUTO} chooses per round and goes alone)")
    spec_draft_n_max: int = _spec(3, "--spec-draft-n-max", help="max draft length of the draft-* types and auto "
                                  "(default 3); the n-gram types use their own sizes, as in llama.cpp")
    spec_draft_n_min: int = _spec(0, "--spec-draft-n-min", help="min draft-model draft length (default 0)")
    spec_draft_p_min: float = _spec(0.0, "--spec-draft-p-min", help="min draft-model token probability (default 0.0)")
    spec_draft_sampling: str = _spec("greedy", "--spec-draft-sampling", help="draft token choice",
                                     choices=DRAFT_SAMPLING)
    spec_verify: str = _spec("match", "--spec-verify", choices=VERIFY_MODES,
                             help="at temperature > 0: llama.cpp's sample-and-match, or exact rejection sampling")
    spec_ngram_simple_size_n: int = _spec(12, "--spec-ngram-simple-size-n", help="ngram-simple lookup n-gram (12)")
    spec_ngram_simple_size_m: int = _spec(48, "--spec-ngram-simple-size-m", help="ngram-simple max draft (48)")
    spec_ngram_map_k_size_n: int = _spec(12, "--spec-ngram-map-k-size-n", help="ngram-map-k lookup n-gram (12)")
    spec_ngram_map_k_size_m: int = _spec(48, "--spec-ngram-map-k-size-m", help="ngram-map-k max draft (48)")
    spec_ngram_map_k_min_hits: int = _spec(1, "--spec-ngram-map-k-min-hits", help="ngram-map-k min hits (1)")
    spec_ngram_map_k4v_size_n: int = _spec(12, "--spec-ngram-map-k4v-size-n", help="ngram-map-k4v lookup n-gram (12)")
    spec_ngram_map_k4v_size_m: int = _spec(48, "--spec-ngram-map-k4v-size-m", help="ngram-map-k4v max draft (48)")
    spec_ngram_map_k4v_min_hits: int = _spec(1, "--spec-ngram-map-k4v-min-hits", help="ngram-map-k4v min hits (1)")
    spec_ngram_mod_n_match: int = _spec(24, "--spec-ngram-mod-n-match", help="ngram-mod lookup length (24)")
    spec_ngram_mod_n_min: int = _spec(48, "--spec-ngram-mod-n-min", help="ngram-mod min draft (48)")
    spec_ngram_mod_n_max: int = _spec(64, "--spec-ngram-mod-n-max", help="ngram-mod max draft (64)")
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
        if self.n_predict == 0 or self.n_predict < -1:
            raise UserError(f"-n/--n-predict must be at least 1, or -1 for no limit; got {self.n_predict}")
        if self.seed is not None and self.seed < -1:
            raise UserError(f"--seed must be 0 or more, or -1 for a random one; got {self.seed}")

    def values(self) -> dict:
        """The option fields by name: what a preset saves and a record shows."""
        return {name: getattr(self, name) for name in OPTIONS}

    def spec(self) -> SpecConfig:
        return SpecConfig(
            types=parse_types(self.spec_type),
            draft_n_max=self.spec_draft_n_max, draft_n_min=self.spec_draft_n_min,
            draft_p_min=self.spec_draft_p_min, draft_sampling=self.spec_draft_sampling,
            verify=self.spec_verify, **{name: getattr(self, "spec_" + name) for name in NGRAM_FIELDS},
        )

    def with_spec(self, spec: SpecConfig) -> "Setup":
        """The reverse of spec(): this setup speculating as `spec` (saving a live change)."""
        return replace(self, spec_type=spec.label, spec_draft_n_max=spec.draft_n_max,
                       spec_draft_n_min=spec.draft_n_min, spec_draft_p_min=spec.draft_p_min,
                       spec_draft_sampling=spec.draft_sampling, spec_verify=spec.verify,
                       **{"spec_" + name: getattr(spec, name) for name in NGRAM_FIELDS})

    def sampling(self) -> SamplingParams:
        seed = None if self.seed == -1 else self.seed  # -1: random, as in llama.cpp
        return SamplingParams(temp=self.temp, top_k=self.top_k, top_p=self.top_p, min_p=self.min_p, seed=seed)

    def ctx_params(self, draft: bool = False) -> ContextParams:
        if self.ctx_size == 0:
            raise UserError(f"-c 0 (in llama.cpp: the model's training size) is not supported; give a size in "
                            f"tokens, at least {MIN_CTX} (default 4096)")
        if self.ctx_size < MIN_CTX:
            raise UserError(f"-c/--ctx-size must be at least {MIN_CTX} tokens, llama.cpp's smallest context; "
                            f"got {self.ctx_size}")
        if self.batch_size < 1:
            raise UserError(f"-b/--batch-size must be at least 1, got {self.batch_size}")
        if self.threads is not None and self.threads < 1:
            raise UserError(f"-t/--threads must be at least 1, got {self.threads}; leave it out to use the "
                            "physical cores")
        return ContextParams(
            n_ctx=self.ctx_size, n_batch=self.batch_size, n_threads=self.threads or 0, flash_attn=self.flash_attn,
            type_k=self.cache_type_k_draft if draft else "f16", type_v=self.cache_type_v_draft if draft else "f16",
            backend_sampling=self.backend_sampling,
        )


# name -> dataclass Field (with the metadata above) for every option a flag or preset may set.
OPTIONS = {f.name: f for f in fields(Setup) if f.metadata}
_TYPES = {"int": int, "float": float, "str": str}


def option_type(name: str) -> type:
    """int, float or str, from the field's annotation ("int | None" -> int)."""
    return _TYPES[OPTIONS[name].type.split(" | ")[0]]


def check_value(name: str, value, where: str):
    """`value` for option `name` as its type (an int where a float goes is fine), or a
    UserError naming `where` (a file), the key and what it must be."""
    want = option_type(name)
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, want) or isinstance(value, bool):
        raise UserError(f"{where}: key '{name}' must be {want.__name__}, got {type(value).__name__} {value!r}")
    choices = OPTIONS[name].metadata["choices"]
    if choices and value not in choices:
        raise UserError(f"{where}: key '{name}' must be one of {', '.join(choices)}, got {value!r}")
    return value


def kept_across_presets(overrides: dict) -> dict:
    """The overrides a preset switch keeps: sampling, context, system prompt; not the
    models or the speculation, which are what a preset chooses."""
    return {k: v for k, v in overrides.items() if k in OPTIONS and not OPTIONS[k].metadata["owned"]}
