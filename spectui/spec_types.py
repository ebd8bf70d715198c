"""llama.cpp's spec types, one record each: its common_speculative_type enum and name map.

The only module that writes a type's name. Every list, check and map of types (spec_config's
lists, the drafter registry, draft_fit's GGUF rules, the plan's marks and what it can price)
derives from TYPES, so a new type is a member of Spec and one record here, plus its drafter
module and its line in drafters/registry.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# families
NONE = "none"
NGRAM = "n-gram"
DRAFT_MODEL = "draft model"
HIDDEN_STATE = "hidden-state head"


class Spec(StrEnum):
    """A spec type as a value: llama.cpp's common_speculative_type, each member's value its name
    in llama.cpp's name map, so what is written (JSON, TOML, SQLite, a trace) is that name."""

    NONE = "none"
    NGRAM_SIMPLE = "ngram-simple"
    NGRAM_MAP_K = "ngram-map-k"
    NGRAM_MAP_K4V = "ngram-map-k4v"
    NGRAM_MOD = "ngram-mod"
    NGRAM_CACHE = "ngram-cache"
    DRAFT_SIMPLE = "draft-simple"
    DRAFT_EAGLE3 = "draft-eagle3"
    DRAFT_MTP = "draft-mtp"
    DRAFT_DFLASH = "draft-dflash"
    DRAFT_DSPARK = "draft-dspark"
    # spectui's own: chooses per round among no draft, an n-gram draft and the draft model (engine/auto.py)
    AUTO = "auto"


AUTO = Spec.AUTO
# the types code names for a role, each for the reason its comment gives
BASELINE = Spec.NONE  # no speculation: what every speedup is measured against
DRAFT_SIMPLE = Spec.DRAFT_SIMPLE  # a plain draft model: what a draft file is unless its GGUF says otherwise
DRAFT_EAGLE3 = Spec.DRAFT_EAGLE3  # reads the target's top layer too (draft_fit)
# llama.cpp's --spec-default type, and the type that needs no model when a draft is missing; not
# the app's default configuration, which is the default preset's (config/presets)
SPEC_DEFAULT = Spec.NGRAM_MOD
AUTO_NGRAM = Spec.NGRAM_SIMPLE  # the n-gram drafter auto chooses


@dataclass(frozen=True)
class SpecType:
    """One spec type; its drafter class is drafters/registry.py's, so this shared module imports
    no drafter. `head_arch`/`head_tensor`: the GGUF architecture (and a tensor it must carry) of
    a draft head that drafts with it. `mtp`: it runs the target's own NextN layer. `mark`: its
    line's letter in the plan's picture (a draft file's lines are marked by n-max). `priced`:
    the plan's curve can price it."""

    name: Spec
    family: str
    head_arch: str = ""
    head_tensor: str = ""
    mtp: bool = False
    mark: str = ""
    priced: bool = True

    @property
    def draft_file(self) -> bool:
        """It runs a draft file given with -md (a draft model or a head)."""
        return self.family == DRAFT_MODEL or bool(self.head_arch)


# `none` first, then llama.cpp's fixed priority (common_speculative_init): when several types
# are combined, the first non-empty draft in this order wins.
TYPES: tuple[SpecType, ...] = (
    SpecType(Spec.NONE, NONE, priced=False),
    SpecType(Spec.NGRAM_SIMPLE, NGRAM, mark="s"),
    SpecType(Spec.NGRAM_MAP_K, NGRAM, mark="k"),
    SpecType(Spec.NGRAM_MAP_K4V, NGRAM, mark="v"),
    SpecType(Spec.NGRAM_MOD, NGRAM, mark="m"),
    SpecType(Spec.NGRAM_CACHE, NGRAM, mark="c"),
    SpecType(Spec.DRAFT_SIMPLE, DRAFT_MODEL),
    SpecType(Spec.DRAFT_EAGLE3, HIDDEN_STATE, head_arch="eagle3"),
    SpecType(Spec.DRAFT_MTP, HIDDEN_STATE, mtp=True, priced=False),  # the curve does not time the NextN layer
    SpecType(Spec.DRAFT_DFLASH, HIDDEN_STATE, head_arch="dflash"),
    SpecType(Spec.DRAFT_DSPARK, HIDDEN_STATE, head_arch="dflash", head_tensor="markov_w1.weight"),
)


def get(spec: Spec) -> SpecType:
    """The record of a type of the table (every member but auto)."""
    return next(t for t in TYPES if t.name == spec)


def of_family(family: str) -> tuple[Spec, ...]:
    return tuple(t.name for t in TYPES if t.family == family)
