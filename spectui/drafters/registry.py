"""Every draft type by its llama.cpp name, and how to build it: the engine's one way to
get a drafter, so adding a type touches its module and this table only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from spectui.drafters.base import Drafter
from spectui.drafters.dflash import DFlash, DSpark
from spectui.drafters.draft_model import DraftModel
from spectui.drafters.eagle3 import Eagle3
from spectui.drafters.mtp import Mtp
from spectui.drafters.ngram_cache import NgramCache
from spectui.drafters.ngram_map import NgramMapK, NgramMapK4V
from spectui.drafters.ngram_mod import NgramMod
from spectui.drafters.ngram_simple import NgramSimple
from spectui.llama.context import Context
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import SpecConfig


@dataclass(frozen=True)
class Needs:
    """What a drafter may be built from: the settings, the draft model's context, and for
    the hidden-state types the target's context and its MTP context."""

    spec: SpecConfig
    sampling: SamplingParams
    draft_ctx: Context | None
    target_ctx: Context | None = None
    mtp_ctx: Context | None = None


def _given(ctx: Context | None) -> Context:
    """A context a type needs: the session builds only the types its contexts allow."""
    assert ctx is not None
    return ctx


TYPES: dict[str, Callable[[Needs], Drafter]] = {
    "ngram-simple": lambda n: NgramSimple(n.spec.ngram_simple_size_n, n.spec.ngram_simple_size_m),
    "ngram-map-k": lambda n: NgramMapK(
        n.spec.ngram_map_k_size_n, n.spec.ngram_map_k_size_m, n.spec.ngram_map_k_min_hits
    ),
    "ngram-map-k4v": lambda n: NgramMapK4V(
        n.spec.ngram_map_k4v_size_n, n.spec.ngram_map_k4v_size_m, n.spec.ngram_map_k4v_min_hits
    ),
    "ngram-mod": lambda n: NgramMod(n.spec.ngram_mod_n_match, n.spec.ngram_mod_n_min, n.spec.ngram_mod_n_max),
    "ngram-cache": lambda n: NgramCache(),
    "draft-simple": lambda n: DraftModel(_given(n.draft_ctx), n.sampling, n.spec),
    "draft-eagle3": lambda n: Eagle3(_given(n.target_ctx), _given(n.draft_ctx), n.spec),
    "draft-dflash": lambda n: DFlash(_given(n.target_ctx), _given(n.draft_ctx), n.spec),
    "draft-dspark": lambda n: DSpark(_given(n.target_ctx), _given(n.draft_ctx), n.spec),
    "draft-mtp": lambda n: Mtp(_given(n.target_ctx), _given(n.mtp_ctx), n.spec),
}


def build(spec_type: str, needs: Needs) -> Drafter:
    """A new drafter of `spec_type`; the caller has checked that the type is available."""
    return TYPES[spec_type](needs)
