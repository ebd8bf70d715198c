"""llama.cpp's draft/target compatibility rules (common_speculative_are_compatible).

A failure names the rule and the two values, so a user knows which model to change.
"""

from __future__ import annotations

from spectui.errors import UserError
from spectui.llama.draft_fit import VOCAB_MAX_SIZE_DIFFERENCE
from spectui.llama.model import Model

VOCAB_CHECK_START_TOKEN_ID = 5  # SPEC_VOCAB_CHECK_START_TOKEN_ID


def incompatibility(target: Model, draft: Model) -> str | None:
    """The first rule the pair breaks, as a sentence; None when compatible."""
    if target.vocab_type != draft.vocab_type:
        return f"vocab type differs: target {target.vocab_type}, draft {draft.vocab_type}"
    if target.add_bos != draft.add_bos or (target.add_bos and target.bos != draft.bos):
        return (
            f"BOS differs: target add_bos={target.add_bos} id={target.bos}, "
            f"draft add_bos={draft.add_bos} id={draft.bos}"
        )
    if target.add_eos != draft.add_eos or (target.add_eos and target.eos != draft.eos):
        return (
            f"EOS differs: target add_eos={target.add_eos} id={target.eos}, "
            f"draft add_eos={draft.add_eos} id={draft.eos}"
        )
    diff = abs(target.n_vocab - draft.n_vocab)
    if diff > VOCAB_MAX_SIZE_DIFFERENCE:
        return (
            f"vocab sizes differ by {diff} (max {VOCAB_MAX_SIZE_DIFFERENCE}): "
            f"target {target.n_vocab}, draft {draft.n_vocab}"
        )
    for i in range(VOCAB_CHECK_START_TOKEN_ID, min(target.n_vocab, draft.n_vocab)):
        a, b = target.token_text(i), draft.token_text(i)
        if a != b:
            return f"token {i} differs: target {a!r}, draft {b!r}"
    return None


def check_compatible(target: Model, draft: Model) -> None:
    why = incompatibility(target, draft)
    if why:
        raise UserError(
            f"draft {draft.path.name} cannot draft for target {target.path.name}: {why}. "
            "A draft model must share the target's tokenizer (same model family)"
        )
