"""A trace's token text: whether it lacks any (written by another tool, or stripped for
sharing), and the text rebuilt from the ids with the model's vocabulary, as `spectui replay`
does before showing it."""

from __future__ import annotations

from dataclasses import replace

from spectui.engine.events import Event, Round, TurnEnd
from spectui.trace.format import Trace


def missing_text(trace: Trace) -> bool:
    """A trace can carry token ids without their text (written by another tool, or
    stripped for sharing); replaying it then needs the model's vocabulary."""
    for turn in trace.turns:
        for e in turn.events:
            if isinstance(e, Round) and (e.rejected_text is None or any(t.piece is None for t in e.tokens)):
                return True
            if isinstance(e, TurnEnd) and e.text is None:
                return True
    return False


def fill_text(trace: Trace, detokenizer) -> None:
    """Rebuild the missing token text from the ids as the engine made it: `detokenizer`
    makes a fresh llama.detokenizer.Detokenizer (one per turn). Text that is present is kept."""
    for turn in trace.turns:
        detok = detokenizer()
        out: list[Event] = []
        text: list[str] = []
        for e in turn.events:
            if isinstance(e, Round):
                accepted = [detok.feed(t.id) for t in e.tokens[: e.n_accepted]]
                rejected = detok.peek(e.rejected) if e.rejected else ""
                pieces = accepted + [detok.feed(t.id) for t in e.tokens[e.n_accepted :]]
                tokens = tuple(t if t.piece is not None else replace(t, piece=p) for t, p in zip(e.tokens, pieces))
                text += [t.piece for t in tokens]
                e = replace(e, tokens=tokens, rejected_text=rejected if e.rejected_text is None else e.rejected_text)
            elif isinstance(e, TurnEnd) and e.text is None:
                e = replace(e, text="".join(text) + detok.flush())
            out.append(e)
        turn.events = out
