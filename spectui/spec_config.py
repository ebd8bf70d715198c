"""Speculation settings: llama.cpp's spec-type names, defaults and priority order.

The type names, what each needs and their priority are spec_types.py's table; this module
derives the lists the layers use from it, and owns each setting's record (spectui/options.py).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from spectui import spec_types as st
from spectui.errors import UserError
from spectui.options import CHOICE, NUMBER, check_fields, option
from spectui.spec_types import Spec

# derived from the table (spec_types.py), read once here: every other module takes them from here
NGRAM_TYPES = st.of_family(st.NGRAM)
# They read the target's hidden states; all but draft-mtp (the target's own NextN layer)
# run a draft head given with -md.
HIDDEN_STATE_TYPES = st.of_family(st.HIDDEN_STATE)
DRAFT_FILE_TYPES = tuple(t.name for t in st.TYPES if t.draft_file)
MTP_TYPES = tuple(t.name for t in st.TYPES if t.mtp)
# a draft model, a head or the target's MTP layer drafts: what auto and the A/B view call the model's type
MODEL_TYPES = st.of_family(st.DRAFT_MODEL) + HIDDEN_STATE_TYPES
# llama.cpp asks combined types in this fixed order; the first non-empty draft wins.
PRIORITY = tuple(t.name for t in st.TYPES if t.family != st.NONE)
AUTO = st.AUTO
ALL_TYPES = (st.BASELINE,) + PRIORITY + (AUTO,)
VERIFY_MODES = ("match", "rejection")
DRAFT_SAMPLING = ("greedy", "probabilistic")
N_MAX_LIMIT = 64
NGRAM_LIMIT = 1024  # an n-gram size or draft length; llama.cpp's defaults are at most 64


# one --spec-type a session offers, as its types ("ngram-simple,draft-simple" is one choice)
Choice = tuple[Spec, ...]


def choice_types(choices: Iterable[Choice]) -> set[Spec]:
    """Every type the `choices` run, alone or combined."""
    return {t for c in choices for t in c}


def available_types(draft_type: Spec | None, mtp: bool = False) -> tuple[Spec, ...]:
    """The spec types a session can run, in the order the TUI cycles through them.
    `draft_type`: what the draft file drafts with (draft_fit), None without one; `mtp`:
    the target has a NextN layer."""
    model = ((draft_type,) if draft_type else ()) + (MTP_TYPES if mtp else ())
    return (st.BASELINE,) + NGRAM_TYPES + model + (AUTO,)


def uses_n_max(types) -> bool:
    """Whether --spec-draft-n-max bounds these types' drafts: a draft model, head or NextN
    layer, or auto; the n-gram types draft up to their own sizes, as in llama.cpp."""
    return any(t in DRAFT_FILE_TYPES or t in HIDDEN_STATE_TYPES or t == AUTO for t in types)


@dataclass(frozen=True)
class Unpriced:
    """Why the plan's curve cannot price a configuration: in a sentence (the bench, the plan)
    and in the panel's few words."""

    reason: str
    short: str


def unpriced(types: tuple[Spec, ...], draft_step: bool) -> Unpriced | None:
    """Why the plan's curve cannot price these spec types (`draft_step`: the curve timed a draft
    file's step); None where it can: one type, timed. The one answer the bench, the plan's
    rows and the panel give."""
    drafting = tuple(t for t in types if t != st.BASELINE)
    if AUTO in drafting:
        return Unpriced("auto changes its drafter round by round; a curve prices one type", "not for auto")
    if len(drafting) > 1:
        return Unpriced("several types at once; a curve prices one type", "one type at a time")
    if not drafting:
        return Unpriced("none drafts nothing: it is the baseline", "the baseline")
    t = st.get(drafting[0])
    if not t.priced:
        what = "the target's MTP layer" if t.mtp else f"{t.name}'s drafting"
        return Unpriced(f"the curve does not time {what}", "this type not timed")
    if t.draft_file and not draft_step:
        return Unpriced(f"no measured step of {t.name}'s draft", "this type not timed")
    return None


def types_label(types: Iterable[str]) -> str:
    """Types as one name, as --spec-type takes them ("ngram-mod,draft-simple"): for display and
    the files that record it, never parsed back but by parse_types."""
    return ",".join(types)


def config_label(types: Sequence[str], n_max: int | None) -> str:
    """How a message or a trace names its configuration: "draft-simple n-max 3", "ngram-mod"
    (n-max None: not known)."""
    label = types_label(types)
    return f"{label} n-max {n_max}" if n_max is not None and uses_n_max(types) else label


def recorded_types(config: dict) -> tuple[Spec, ...]:
    """The types of a recorded configuration (as_dict's, in a trace), read back from its
    "spec_type" (a turn recorded without one ran none)."""
    return parse_types(config.get("spec_type", st.BASELINE))


def server_types(text: str) -> tuple[Spec, ...]:
    """llama-server's speculative.types as values: a server that drafts lists none first
    ("none,draft-simple"), which is no reset there; one listing a type this spectui does not
    know is watched, but named none."""
    names = [n for n in text.replace(" ", "").split(",") if n]
    try:
        return parse_types([n for n in names if n != st.BASELINE] or [st.BASELINE])
    except UserError:
        return (st.BASELINE,)


def parse_types(text: str | Iterable[str]) -> tuple[Spec, ...]:
    """Parse "--spec-type" text (or its names: a preset's, a trace's, a saved chat's) into
    types in llama.cpp priority order.

    `none` anywhere resets to none, as in llama.cpp.
    """
    given = text.split(",") if isinstance(text, str) else list(text)
    if not all(isinstance(n, str) for n in given):  # a damaged file's list, say [0]
        raise UserError(f"--spec-type names must be text, not {given!r}; choose from: {', '.join(ALL_TYPES)}")
    names = [n.strip() for n in given]
    names = [n for n in names if n]
    if not names:
        raise UserError(f"--spec-type needs a type; choose from: {', '.join(ALL_TYPES)}")
    for name in names:
        if name not in ALL_TYPES:
            raise UserError(f"unknown --spec-type {name!r}; choose from: {', '.join(ALL_TYPES)}")
    if st.BASELINE in names:
        return (st.BASELINE,)
    if AUTO in names:
        if len(names) > 1:
            raise UserError("--spec-type auto chooses among the types by itself; give it alone")
        return (AUTO,)
    return tuple(t for t in PRIORITY if t in names)


def _spec(default, flag: str, help: str, **record):
    """A SpecConfig field and its record: a preset chooses every speculation setting."""
    return option(default, flag, help=help, group="speculation", owned=True, **record)


def _ngram(default, flag: str, help: str):
    """An n-gram type's size, llama.cpp's name and default."""
    return _spec(default, flag, help, lo=1, hi=NGRAM_LIMIT, rule=f"at least 1 and at most {NGRAM_LIMIT}")


@dataclass(frozen=True)
class SpecConfig:
    """What to draft and how to verify; flag names follow llama.cpp."""

    types: tuple[Spec, ...] = _spec(
        (st.BASELINE,),
        "--spec-type",
        f"{', '.join(ALL_TYPES)}, comma-separated to combine; {AUTO} chooses per round and goes alone",
        label="spec type",
    )
    # --spec-draft-*: the draft-* types (a draft model or head). As in llama.cpp, the n-gram
    # types are not bound by n-max: each drafts up to its own size below (ngram-cache: 8).
    draft_n_max: int = _spec(
        3,
        "--spec-draft-n-max",
        "max draft length of the draft-* types and of auto's draft model; n-gram drafts (auto's too) "
        "use the n-gram sizes, as in llama.cpp",
        lo=0,
        hi=N_MAX_LIMIT,
        rule=f"between 0 and {N_MAX_LIMIT}",
        form=NUMBER,
        hint="the most tokens a draft model drafts per round; 0: none",
        per_answer=True,
        reaches="engine",
    )
    draft_n_min: int = _spec(
        0,
        "--spec-draft-n-min",
        "min draft-model draft length",
        lo=0,
        hi=N_MAX_LIMIT,
        rule=f">= 0 and at most {N_MAX_LIMIT}",
        form=NUMBER,
        hint="a shorter draft is dropped",
        calibration=True,
    )
    draft_p_min: float = _spec(
        0.0,
        "--spec-draft-p-min",
        "min draft-model token probability",
        lo=0.0,
        hi=1.0,
        rule="between 0 and 1",
        form=NUMBER,
        hint="the draft stops at a token it is less sure of",
        calibration=True,
    )
    draft_sampling: str = _spec(
        "greedy",
        "--spec-draft-sampling",
        "draft token choice",
        label="draft sampling",
        choices=DRAFT_SAMPLING,
        calibration=True,
    )
    verify: str = _spec(
        "match",
        "--spec-verify",
        "at temperature > 0: llama.cpp's sample-and-match, or exact rejection sampling",
        label="verify",
        choices=VERIFY_MODES,
        form=CHOICE,
        hint="at temperature > 0: sample-and-match, or rejection sampling",
        per_answer=True,
        reaches="engine",
        calibration=True,
    )
    # --spec-ngram-*, llama.cpp's names and defaults
    ngram_simple_size_n: int = _ngram(12, "--spec-ngram-simple-size-n", "ngram-simple lookup n-gram")
    ngram_simple_size_m: int = _ngram(48, "--spec-ngram-simple-size-m", "ngram-simple max draft")
    ngram_map_k_size_n: int = _ngram(12, "--spec-ngram-map-k-size-n", "ngram-map-k lookup n-gram")
    ngram_map_k_size_m: int = _ngram(48, "--spec-ngram-map-k-size-m", "ngram-map-k max draft")
    ngram_map_k_min_hits: int = _ngram(1, "--spec-ngram-map-k-min-hits", "ngram-map-k min hits")
    ngram_map_k4v_size_n: int = _ngram(12, "--spec-ngram-map-k4v-size-n", "ngram-map-k4v lookup n-gram")
    ngram_map_k4v_size_m: int = _ngram(48, "--spec-ngram-map-k4v-size-m", "ngram-map-k4v max draft")
    ngram_map_k4v_min_hits: int = _ngram(1, "--spec-ngram-map-k4v-min-hits", "ngram-map-k4v min hits")
    ngram_mod_n_match: int = _ngram(24, "--spec-ngram-mod-n-match", "ngram-mod lookup length")
    ngram_mod_n_min: int = _ngram(48, "--spec-ngram-mod-n-min", "ngram-mod min draft")
    ngram_mod_n_max: int = _ngram(64, "--spec-ngram-mod-n-max", "ngram-mod max draft")

    def __post_init__(self):
        """Every value, from a flag, a preset, a saved chat or a trace, is checked here: each
        against its record, then the rules between them."""
        if not isinstance(self.types, tuple) or not self.types or not all(t in ALL_TYPES for t in self.types):
            raise UserError(f"unknown --spec-type {self.types!r}; choose from: {', '.join(ALL_TYPES)}")
        # names read from a preset, a trace or a saved chat become values here, once
        object.__setattr__(self, "types", tuple(Spec(t) for t in self.types))
        check_fields(self, skip=("types",))
        if self.draft_n_min > self.draft_n_max:  # llama.cpp drops a draft shorter than n-min: none would be kept
            raise UserError(
                f"--spec-draft-n-min ({self.draft_n_min}) must not exceed --spec-draft-n-max ({self.draft_n_max}): "
                "no draft could be that long"
            )
        if self.ngram_mod_n_min > self.ngram_mod_n_max:
            raise UserError(
                f"--spec-ngram-mod-n-min ({self.ngram_mod_n_min}) must not exceed "
                f"--spec-ngram-mod-n-max ({self.ngram_mod_n_max})"
            )

    @functools.cached_property
    def label(self) -> str:
        """The types as one name ("ngram-mod,draft-simple"), for display."""
        return types_label(self.types)

    @functools.cached_property
    def drafting(self) -> tuple[Spec, ...]:
        """The types asked for a draft, in priority order ("none" asks nothing); every round
        asks them."""
        return tuple(t for t in self.types if t != st.BASELINE)

    @property
    def uses_n_max(self) -> bool:
        return uses_n_max(self.types)

    @property
    def needs_draft_model(self) -> bool:
        """A type that runs a draft file given with -md."""
        return any(t in DRAFT_FILE_TYPES for t in self.types)

    @property
    def uses_draft_model(self) -> bool:
        """A draft file given with -md can draft: a type that runs it, or auto, which may."""
        return self.needs_draft_model or AUTO in self.types

    def with_types(self, types) -> SpecConfig:
        return replace(self, types=parse_types(types))

    def replace(self, **changes) -> SpecConfig:
        return replace(self, **changes)

    @classmethod
    def from_dict(cls, d: dict) -> SpecConfig:
        """The inverse of as_dict (a trace's configuration); validated as any SpecConfig."""
        names = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {k: tuple(v) if k == "types" else v for k, v in d.items() if k in names}
        return cls(**kwargs)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["spec_type"] = self.label
        d["types"] = [str(t) for t in self.types]
        return d
