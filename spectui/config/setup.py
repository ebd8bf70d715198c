"""The typed Setup: models, context, speculation and sampling, as flags and presets name them.

Each field is declared with its option record (spectui/options.py), and the speculation's are
the SpecConfig fields' own; OPTIONS lists them all, flat, under the names presets and saved
chats use as keys: the parser, the chat's words, the settings form, the README's flags table
and the stored answers are read from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from spectui.errors import UserError
from spectui.llama.context_params import BACKEND_SAMPLING, KV_CACHE_TYPES, MIN_CTX, ContextParams
from spectui.llama.runtime import usable_cores
from spectui.llama.sampling import SamplingParams
from spectui.options import NUMBER, TEXT, Option, check_fields, check_reach, described, option
from spectui.spec_config import SpecConfig, parse_types

FLASH_ATTN = ("on", "off", "auto")
INT_MAX = 2**31 - 1  # llama.cpp's int32 fields
SEED_MAX = 2**32 - 1
GROUPS = ("models", "speculation", "sampling")
_LLAMA = SamplingParams()  # llama.cpp's sampling defaults, written once (llama/sampling.py)


def _model(default, *flags, **record):
    return option(default, *flags, group="models", **record)


def _sampling(default, *flags, **record):
    return option(default, *flags, group="sampling", **record)


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
        label="server",
        owned=True,
    )
    model: str | None = _model(
        None, "-m", "--model", help="target GGUF file or embedded model name", label="target model", owned=True,
        recorded=True,
    )  # fmt: skip
    model_draft: str | None = _model(
        None,
        "-md",
        "--model-draft",
        help="draft GGUF file or embedded model name (same tokenizer)",
        label="draft model",
        owned=True,
        recorded=True,
    )
    n_gpu_layers: int = _model(
        -1, "-ngl", "--n-gpu-layers", help="target layers on the GPU ({default}: all)", label="target GPU layers",
        lo=-1, hi=INT_MAX, rule="-1 (all) or a number of layers", owned=True, memory=True, recorded=True,
    )  # fmt: skip
    n_gpu_layers_draft: int = _model(
        -1, "-ngld", "--n-gpu-layers-draft", help="draft layers on the GPU ({default}: all)", label="draft GPU layers",
        lo=-1, hi=INT_MAX, rule="-1 (all) or a number of layers", owned=True, memory=True, recorded=True,
    )  # fmt: skip
    ctx_size: int = _model(
        4096, "-c", "--ctx-size", help="context size in tokens", label="context size",
        lo=MIN_CTX, hi=INT_MAX, rule=f"at least {MIN_CTX} tokens, llama.cpp's smallest context",
        memory=True, recorded=True,
    )  # fmt: skip
    batch_size: int = _model(
        512, "-b", "--batch-size", help="logical batch size", label="batch size", lo=1, hi=INT_MAX, rule="at least 1",
        memory=True,
    )  # fmt: skip
    # its bounds are checked by hand: the CPUs this process may use
    threads: int | None = _model(
        None, "-t", "--threads", help="CPU threads (default: the physical cores)", label="threads", unset="auto"
    )
    flash_attn: str = _model(
        "auto", "-fa", "--flash-attn", help="flash attention", label="flash attention", choices=FLASH_ATTN, memory=True
    )
    backend_sampling: str = _model(
        "auto",
        "-bs",
        "--backend-sampling",
        choices=BACKEND_SAMPLING,
        help="greedy's argmax or sampling's top-k in llama.cpp's graph, so no "
        "logits row is copied out (default {default}: where the output layer is on a GPU, not Vulkan)",
        label="backend sampling",
        recorded=True,
    )
    cache_type_k_draft: str = _model(
        "f16",
        "-ctkd",
        "--cache-type-k-draft",
        choices=tuple(KV_CACHE_TYPES),
        help="draft KV cache type for K",
        label="draft K cache",
        owned=True,
        memory=True,
    )
    cache_type_v_draft: str = _model(
        "f16",
        "-ctvd",
        "--cache-type-v-draft",
        choices=tuple(KV_CACHE_TYPES),
        help="draft KV cache type for V, needs -fa on if quantized",
        label="draft V cache",
        owned=True,
        memory=True,
    )
    # the speculation: its options are SpecConfig's records, flat in OPTIONS
    spec: SpecConfig = field(default=SpecConfig())
    n_predict: int = _sampling(
        -1, "-n", "--n-predict", help="max tokens per answer ({default}: no limit)", label="n-predict",
        lo=-1, hi=INT_MAX, rule="at least 1, or -1 for no limit",
        form=NUMBER, hint="the most tokens an answer may have; -1: no limit", recorded=True,
    )  # fmt: skip
    temp: float = _sampling(
        _LLAMA.temp, "--temp", help="temperature, 0 = greedy", label="temperature",
        lo=0, rule="0 (greedy) or more", form=NUMBER, hint="0 is greedy: the target's most likely token",
        per_answer=True, reaches="sampler", recorded=True,
    )  # fmt: skip
    top_k: int = _sampling(
        _LLAMA.top_k, "--top-k", help="top-k", label="top-k", lo=0, hi=INT_MAX, rule="0 (off) or more",
        form=NUMBER, hint="keep the k most likely tokens; 0 turns it off", per_answer=True, reaches="sampler",
    )  # fmt: skip
    top_p: float = _sampling(
        _LLAMA.top_p, "--top-p", help="top-p", label="top-p", lo=0, hi=1, rule="between 0 and 1",
        form=NUMBER, hint="keep the smallest set this likely; 1 turns it off", per_answer=True, reaches="sampler",
    )  # fmt: skip
    min_p: float = _sampling(
        _LLAMA.min_p, "--min-p", help="min-p", label="min-p", lo=0, hi=1, rule="between 0 and 1",
        form=NUMBER, hint="drop tokens below this share of the top one; 0: off", per_answer=True, reaches="sampler",
    )  # fmt: skip
    seed: int | None = _sampling(
        _LLAMA.seed, "--seed", help="random seed (reproducible runs; -1: random)", label="seed",
        lo=-1, hi=SEED_MAX, rule=f"0 to {SEED_MAX}, or -1 for a random one", unset="random",
        form=NUMBER, hint="the same seed and text give the same answer; -1: random", form_unset="-1",
        per_answer=True, reaches="sampler", recorded=True,
    )  # fmt: skip
    system: str | None = _sampling(
        None, "--system", help="system prompt", label="system prompt",
        form=TEXT, hint="sent before the chat with every answer", prose=True, calibration=True,
    )  # fmt: skip
    preset: str = "default"  # the preset it was resolved from
    notes: tuple[str, ...] = ()  # what resolve changed, to tell the user

    def __post_init__(self):
        """Every value is checked here, whether a flag, a preset or a saved chat gave it, so a
        bad one is one line before any model loads (llama.cpp aborts on some, hangs on others):
        each against its record (options.py), then the rules no record can say."""
        if self.ctx_size == 0:
            raise UserError(
                f"-c 0 (in llama.cpp: the model's training size) is not supported; give a size in "
                f"tokens, at least {MIN_CTX} (default {OPTIONS['ctx_size'].default})"
            )
        check_fields(self)
        if self.n_predict == 0:
            raise OPTIONS["n_predict"].refused(0)
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

    def per_answer(self) -> dict:
        """The sampling each answer keeps (a stored answer, a bench's record), by option name,
        as it runs: a value written as its record's none is None (the seed's -1: random, as in
        llama.cpp)."""
        values = {o.name: getattr(self, o.name) for o in PER_ANSWER}
        return {
            o.name: None if o.form_unset and str(values[o.name]) == o.form_unset else values[o.name] for o in PER_ANSWER
        }

    def sampling(self) -> SamplingParams:
        """What the samplers and a llama-server are given: every per-answer sampler value, each a
        SamplingParams field (check_reach refuses the package at import otherwise)."""
        return SamplingParams(**self.per_answer())

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


def _spec_key(o: Option) -> str:
    """A speculation option's name: its flag's, with underscores ("--spec-type": spec_type)."""
    return o.flags[0].removeprefix("--").replace("-", "_")


# a speculation option's name -> its SpecConfig field ("spec_type" -> "types")
SPEC_FIELDS = {_spec_key(o): o.name for o in described(SpecConfig)}


def _options() -> dict[str, Option]:
    """Setup's records in order, the speculation's SpecConfig records in its place, under their names."""
    out: dict[str, Option] = {}
    for f in fields(Setup):
        if f.name == "spec":
            out |= {_spec_key(o): replace(o, name=_spec_key(o)) for o in described(SpecConfig)}
        elif (o := next((o for o in described(Setup) if o.name == f.name), None)) is not None:
            out[o.name] = o
    return out


# option name -> its record, for every setting a flag or a preset may set
OPTIONS = _options()
# the sampling each answer keeps (a field of AnswerConfig and a stored column each), and a bench records
PER_ANSWER = tuple(o for o in OPTIONS.values() if o.per_answer and o.reaches == "sampler")
# what else an answer keeps: the speculation's per-answer records, by their SpecConfig field's name
PER_ANSWER_SPEC = tuple(o for o in described(SpecConfig) if o.per_answer)
# a per-answer setting reaches the sampler or the engine it names, and the sampler reads nothing unset
check_reach(described(Setup) + PER_ANSWER_SPEC, {"sampler": SamplingParams, "engine": SpecConfig}, whole=("sampler",))


def check_value(name: str, value, where: str):
    """`value` for option `name` as its type (an int where a float goes is fine), or a
    UserError naming `where` (a file), the key and what it must be."""
    want = OPTIONS[name].type
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, want) or (isinstance(value, bool) and want is not bool):
        raise UserError(f"{where}: key '{name}' must be {want.__name__}, got {type(value).__name__} {value!r}")
    choices = OPTIONS[name].choices
    if choices and value not in choices:
        raise UserError(f"{where}: key '{name}' must be one of {', '.join(choices)}, got {value!r}")
    return value


def kept_across_presets(overrides: dict) -> dict:
    """The overrides a preset switch keeps: sampling, context, system prompt; not the
    models or the speculation, which are what a preset chooses."""
    return {k: v for k, v in overrides.items() if k in OPTIONS and not OPTIONS[k].owned}
