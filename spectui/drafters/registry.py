"""Every drafting type of the spec-type table (spec_types.py) and its drafter class: the
engine's one way to get a drafter. A new type is its member and record there, its module here
and its line in DRAFTERS."""

from __future__ import annotations

from spectui.drafters.base import Drafter, Needs
from spectui.drafters.dflash import DFlash, DSpark
from spectui.drafters.draft_model import DraftModel
from spectui.drafters.eagle3 import Eagle3
from spectui.drafters.mtp import Mtp
from spectui.drafters.ngram_cache import NgramCache
from spectui.drafters.ngram_map import NgramMapK, NgramMapK4V
from spectui.drafters.ngram_mod import NgramMod
from spectui.drafters.ngram_simple import NgramSimple
from spectui.spec_config import PRIORITY
from spectui.spec_types import Spec

__all__ = ["DRAFTERS", "Needs", "TYPES", "build", "drafter_class"]

DRAFTERS: dict[Spec, type[Drafter]] = {
    Spec.NGRAM_SIMPLE: NgramSimple,
    Spec.NGRAM_MAP_K: NgramMapK,
    Spec.NGRAM_MAP_K4V: NgramMapK4V,
    Spec.NGRAM_MOD: NgramMod,
    Spec.NGRAM_CACHE: NgramCache,
    Spec.DRAFT_SIMPLE: DraftModel,
    Spec.DRAFT_EAGLE3: Eagle3,
    Spec.DRAFT_MTP: Mtp,
    Spec.DRAFT_DFLASH: DFlash,
    Spec.DRAFT_DSPARK: DSpark,
}
TYPES = PRIORITY  # the types that draft: every one has its class above (tests/unit/test_spec_types.py)


def drafter_class(spec_type: Spec) -> type[Drafter]:
    return DRAFTERS[spec_type]


def build(spec_type: Spec, needs: Needs) -> Drafter:
    """A new drafter of `spec_type`; the caller has checked that the type is available."""
    d = drafter_class(spec_type).build(needs)
    d.spec_type = spec_type
    return d
