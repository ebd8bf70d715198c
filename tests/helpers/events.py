"""The engine's events as tests build them: one Round builder, the turns made of its rounds (a
recorded answer, an A/B side), verdicts laid on recorded rounds, and a session's events for a prompt."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from spectui.engine.events import PromptDone, Round, Source, StopReason, Token, TurnEnd, TurnStart
from spectui.engine.interface import ChatSession, GenerationLimits, chat_messages
from spectui.engine.verdicts import Verdict
from spectui.spec_config import NGRAM_TYPES, SpecConfig, parse_types
from tests.helpers.prompts import PROMPT

# Two SmolLM2 runs at temperature 0.8 (`spectui run --preset smollm2 --temp 0.8 --inspect --trace`):
# `--spec-verify rejection --seed 5 -n 40` on helpers/prompts.PROMPT, then (the second turn,
# its header dropped) `--spec-verify match --seed 3 -n 48` on a sentence to shorten
INSPECTED = Path(__file__).parents[1] / "data" / "inspected_smollm2.jsonl"


def a_round(
    drafted: int | Sequence[int] = 0,
    accepted: int = 0,
    *,
    by: str = "draft-simple",
    pieces: Sequence[str] | None = None,
    tokens: Sequence[Token] | None = None,
    index: int = 0,
    t: float = 0.0,
    n_max: int = 3,
    verify: str = "greedy",
    n_past: int = 0,
    **fields: Any,
) -> Round:
    """A consistent Round of the configuration `by` (its `configured`): `drafted` (a count: ids
    100, 101, ...) by `by`, no spec type where it drafted nothing, the first `accepted` accepted
    and the rest rejected; its tokens the accepted drafts and one target token, or `pieces` (the
    first `accepted` drafted), or `tokens`. `fields`: Round's others (a spec_type given is kept
    as given: auto chose a type that drafted nothing)."""
    ids = tuple(range(100, 100 + drafted)) if isinstance(drafted, int) else tuple(drafted)
    if tokens is None:
        source = Source.NGRAM if by in NGRAM_TYPES else Source.DRAFT
        shown = ("x",) * (accepted + 1) if pieces is None else pieces
        tokens = [Token(100 + j, p, source if j < accepted else Source.TARGET) for j, p in enumerate(shown)]
    unset = {"spec_type": by if ids else None, "configured": parse_types(by), "rejected_text": ""}
    unset |= {"t_draft": 0.0, "t_verify": 0.0, "t_other": 0.0}
    return Round(
        index=index, t=t, drafted=ids, n_accepted=accepted, rejected=ids[accepted:], tokens=tuple(tokens),
        n_max=n_max, verify=verify, n_past=n_past, **(unset | fields),
    )  # fmt: skip


# A recorded A/B run: the same answer, per token with spec type none (A) and in draft-simple
# rounds with one rejected draft (B), replayed into the A/B screen; the times are fixed.
ANSWER_ROUNDS = [
    (["def", " add", "(a"], "", ","),
    ([" b"], " c", "):\n"),
    (["   ", " return", " a"], "", " +"),
    ([" b"], "", "\n"),
]


def recorded(spec_type: str, rounds: list[tuple[list[str], str, str]], tok_per_s: float) -> list:
    """A turn from (accepted pieces, rejected text, the target's piece) per round."""
    ids: dict[str, int] = {}
    events: list = [
        TurnStart(t=0.0, n_prompt=20, n_prompt_decoded=20, n_ctx=4096, config=SpecConfig(types=(spec_type,)).as_dict()),
        PromptDone(t=0.25, t_prompt=0.25),
    ]
    t, emitted = 0.25, []
    for i, (accepted, rejected, last) in enumerate(rounds):
        tokens = [Token(ids.setdefault(p, len(ids)), p, Source.DRAFT) for p in accepted]
        tokens.append(Token(ids.setdefault(last, len(ids)), last, Source.TARGET))
        drafted = tuple(range(len(accepted) + bool(rejected)))
        t += len(tokens) / tok_per_s
        emitted += tokens
        events.append(
            a_round(
                drafted,
                len(accepted),
                by=spec_type,
                tokens=tokens,
                index=i,
                t=t,
                n_past=20 + len(emitted),
                rejected_text=rejected,
                t_draft=0.002 * len(drafted),
                t_verify=0.01,
            )  # fmt: skip
        )
    text = "".join(tok.piece for tok in emitted)
    ids_out = tuple(tok.id for tok in emitted)
    events.append(TurnEnd(t=t, stop_reason=StopReason.EOS, text=text, n_generated=len(emitted), tokens=ids_out))
    return events


def run_events(
    spec_type: str,
    ids: list[int],
    per_round: int,
    drafted: int,
    tok_per_s: float,
    stop=StopReason.EOS,
    verify="greedy",
    pieces: dict[int, str] | None = None,
) -> list:
    """A turn emitting `ids` (piece "<id>", or pieces[id]) `per_round` at a time, drafting
    `drafted` per round and accepting per_round - 1 of them, at `tok_per_s`."""
    piece = (lambda t: f"<{t}>") if pieces is None else pieces.__getitem__
    events: list = [
        TurnStart(t=0.0, n_prompt=5, n_prompt_decoded=5, n_ctx=100, config={"spec_type": spec_type}),
        PromptDone(t=1.0, t_prompt=1.0),
    ]
    for i in range(0, len(ids), per_round):
        chunk = ids[i : i + per_round]
        tokens = [
            Token(t, piece(t), Source.NGRAM if j < len(chunk) - 1 else Source.TARGET) for j, t in enumerate(chunk)
        ]
        events.append(
            a_round(
                tuple(range(drafted)),
                len(chunk) - 1 if drafted else 0,
                by=spec_type,
                tokens=tokens,
                index=i,
                t=1.0 + (i + len(chunk)) / tok_per_s,
                verify=verify,
                n_past=5 + i,
            )  # fmt: skip
        )
    events.append(TurnEnd(t=9.0, stop_reason=stop, text="", n_generated=len(ids), tokens=tuple(ids)))
    return events


# Round 2 of ANSWER_ROUNDS drafts " b" then " c"; the target rejects " c" for "):\n" (a near-tie),
# and a second answer's rejection is a confident draft error.
NEAR_TIE_TOP = ((5, 0.46), (99, 0.41), (4, 0.05))  # ids from `recorded`: 5 is "):\n", 4 is " b"
TEXT = {5: "):\n", 99: " d", 4: " b"}  # and 99, never emitted, " d"


def judged(events: list, top=NEAR_TIE_TOP, q: float = 0.6, p_rejected: float = 0.41, draw=None) -> list:
    """`events` with verdicts: every accepted draft p 0.9 (q 0.7), each rejection as given,
    its alternatives' text as the engine records it."""
    out = []
    for e in events:
        if isinstance(e, Round) and e.drafted:
            verdicts = [Verdict(i, t, 0.9, 0.7, None, None, True) for i, t in enumerate(e.drafted[: e.n_accepted])]
            if e.rejected:
                emitted = e.tokens[e.n_accepted].id
                acceptance = None if draw is None else min(1.0, p_rejected / q)
                top_text = tuple(TEXT.get(t, f"<{t}>") for t, _ in top)
                verdicts.append(
                    Verdict(e.n_accepted, e.rejected[0], p_rejected, q, acceptance, draw, False, top, emitted, top_text)
                )
            e = replace(e, verdicts=tuple(verdicts))
        out.append(e)
    return out


def events_of(session: ChatSession, prompt: str = PROMPT, n: int = 48) -> list:
    """One answer's events to `prompt`, at most `n` tokens."""
    return list(session.generate(chat_messages([("user", prompt)]), limits=GenerationLimits(n_predict=n)))
