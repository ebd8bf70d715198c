"""The interface every drafter implements, as llama.cpp's common_speculative_impl does.

The engine asks a drafter for tokens and tells it how many were accepted; it never looks
inside one. As llama.cpp passes a draft's inputs and outputs in a params struct, draft()
takes what one call needs as arguments and returns a DraftResult. Per-type statistics
(#gen drafts, #acc tokens, ...) are kept by the engine's events, not here, as llama.cpp
keeps them in the dispatcher.

A new draft type: subclass Drafter (NgramDrafter for one bound by its own sizes) in its own
module, with build() where it needs more than no arguments, then add its member and record to
spec_types.py and its class to drafters/registry.py's DRAFTERS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from spectui.spec_types import Spec

if TYPE_CHECKING:
    from spectui.llama.context import Context
    from spectui.llama.sampling import SamplingParams
    from spectui.spec_config import SpecConfig


def as_token_list(tokens: Sequence[int]) -> list[int]:
    """The tokens as a list of Python ints (no copy when already a list)."""
    if isinstance(tokens, list):
        return tokens
    tolist = getattr(tokens, "tolist", None)  # numpy arrays: plain ints, not numpy scalars
    return tolist() if tolist is not None else list(tokens)


@dataclass(frozen=True)
class Needs:
    """What a drafter may be built from: the settings, the draft model's context, and for
    the hidden-state types the target's context and its MTP context."""

    spec: SpecConfig
    sampling: SamplingParams
    draft_ctx: Context | None
    target_ctx: Context | None = None
    mtp_ctx: Context | None = None


def given(ctx: Context | None) -> Context:
    """A context a type needs: the session builds only the types its contexts allow."""
    assert ctx is not None
    return ctx


@dataclass
class DraftResult:
    """What one draft() gives back."""

    tokens: list[int] = field(default_factory=list)
    # The distributions the tokens were sampled from (rejection sampling needs them), one row
    # per token; None: the tokens were chosen greedily (one-hot).
    q_rows: list[np.ndarray] | None = None
    # Asked for (inspect): a model drafter's own probability of each token it drafted (its
    # draft sampler's); None: not asked, or a drafter without a model.
    q_probs: list[float] | None = None
    # What the draft spent bringing its own cache up to the context first, apart from drafting
    # proper, and for how many tokens (auto prices catching up and drafting separately).
    t_sync: float = 0.0
    n_synced: int = 0


class Drafter:
    """One speculation type. The defaults fit a drafter without a model of its own."""

    spec_type: Spec = Spec.NONE  # its type, set by the registry
    # A follower's state is for the text's first `covered` tokens (see process()).
    covered: int = 0

    @classmethod
    def build(cls, needs: Needs) -> Drafter:
        """A new drafter from what the session has (the registry calls it)."""
        return cls()

    def begin(self, prompt: Sequence[int]) -> None:
        """A new context (a turn's prompt, without the last sampled token)."""

    def limit(self, n_max: int, room: int) -> int:
        """The most tokens the next draft may have: --spec-draft-n-max (`n_max`) within the
        `room` the context and the answer leave. Each type owns its bound, as in llama.cpp."""
        return min(n_max, room)

    def draft(self, tokens: Sequence[int], n_max: int, inspect: bool = False) -> DraftResult:
        """Up to n_max tokens to follow `tokens` (whose last one is not yet verified); with
        `inspect`, a model drafter also returns its own probability of each (q_probs)."""
        raise NotImplementedError

    def behind(self, tokens: Sequence[int]) -> int:
        """History tokens the next draft(tokens) must decode before it can draft."""
        return 0

    def accept(self, n_accepted: int) -> None:
        """The target accepted the first n_accepted tokens of the last draft."""

    def configure(self, spec) -> None:
        """Settings changed live (a SpecConfig); applies from the next draft."""

    def process(self, tokens: Sequence[int], pos0: int) -> None:
        """The target decoded `tokens` at positions pos0..: a follower (a hidden-state type)
        reads its hidden rows now, as llama.cpp's common_speculative_process."""

    def reset(self) -> None:
        """Forget everything: the target is about to decode a text from position 0."""

    def close(self) -> None:
        """Free what the drafter holds outside Python."""


class NgramDrafter(Drafter):
    """An n-gram type: its own sizes bound a draft, not --spec-draft-n-max (llama.cpp's
    --spec-ngram-*-size-m and the like), so only the room left does."""

    def limit(self, n_max: int, room: int) -> int:
        return room
