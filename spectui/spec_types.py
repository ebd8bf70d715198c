"""llama.cpp's spec types, one record each: its common_speculative_type enum and name map.

The only module that writes a type's name. Every list, check and map of types (spec_config's
lists, the drafter registry, draft_fit's GGUF rules, the plan's marks and what it can price)
derives from TYPES, so a new type is one record here plus its drafter module.
"""

from __future__ import annotations

from dataclasses import dataclass

# families
NONE = "none"
NGRAM = "n-gram"
DRAFT_MODEL = "draft model"
HIDDEN_STATE = "hidden-state head"

AUTO = "auto"  # spectui's own: chooses per round among no draft, an n-gram draft and the draft model (engine/auto.py)

# the types code names on purpose, each for the reason its comment gives
BASELINE = "none"  # no speculation: what every speedup is measured against
DRAFT_SIMPLE = "draft-simple"  # a plain draft model: what a draft file is unless its GGUF says otherwise
DRAFT_EAGLE3 = "draft-eagle3"  # reads the target's top layer too (draft_fit)
DEFAULT = "ngram-mod"  # --spec-default (as llama.cpp), and the type that needs no model when a draft is missing
AUTO_NGRAM = "ngram-simple"  # the n-gram drafter auto chooses


@dataclass(frozen=True)
class SpecType:
    """One spec type. `drafter`: "module.Class" under spectui/drafters, named here and built by
    drafters/registry.py, so this shared module imports no drafter. `head_arch`/`head_tensor`:
    the GGUF architecture (and a tensor it must carry) of a draft head that drafts with it.
    `mtp`: it runs the target's own NextN layer. `mark`: its line's letter in the plan's picture
    (a draft file's lines are marked by n-max). `priced`: the plan's curve can price it."""

    name: str
    family: str
    drafter: str = ""
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
    SpecType(BASELINE, NONE, priced=False),
    SpecType(AUTO_NGRAM, NGRAM, "ngram_simple.NgramSimple", mark="s"),
    SpecType("ngram-map-k", NGRAM, "ngram_map.NgramMapK", mark="k"),
    SpecType("ngram-map-k4v", NGRAM, "ngram_map.NgramMapK4V", mark="v"),
    SpecType(DEFAULT, NGRAM, "ngram_mod.NgramMod", mark="m"),
    SpecType("ngram-cache", NGRAM, "ngram_cache.NgramCache", mark="c"),
    SpecType(DRAFT_SIMPLE, DRAFT_MODEL, "draft_model.DraftModel"),
    SpecType(DRAFT_EAGLE3, HIDDEN_STATE, "eagle3.Eagle3", head_arch="eagle3"),
    SpecType("draft-mtp", HIDDEN_STATE, "mtp.Mtp", mtp=True, priced=False),  # the curve does not time the NextN layer
    SpecType("draft-dflash", HIDDEN_STATE, "dflash.DFlash", head_arch="dflash"),
    SpecType("draft-dspark", HIDDEN_STATE, "dflash.DSpark", head_arch="dflash", head_tensor="markov_w1.weight"),
)


def get(name: str) -> SpecType:
    """The record of a known type (callers have parsed `name` against the table)."""
    return next(t for t in TYPES if t.name == name)


def of_family(family: str) -> tuple[str, ...]:
    return tuple(t.name for t in TYPES if t.family == family)
