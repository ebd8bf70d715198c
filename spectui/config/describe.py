"""Settings in words, for the messages a person reads: each option by the name the chat
shows it under ("draft n-max", not spec_draft_n_max), each value as words ("none", a model's
title), a change of settings as "draft n-max 8 → 16", and why a setting does nothing under
the spec type in force."""

from __future__ import annotations

from spectui.config.model_choice import model_name
from spectui.config.setup import OPTIONS, SPEC_FIELDS
from spectui.options import shown
from spectui.spec_config import SpecConfig

NAMED = ("model", "model_draft")  # a new model is named alone: two titles make too long a line
SHOWN_CHARS = 24  # a system prompt's characters quoted


def label(name: str) -> str:
    """An option's name in words; a speculation size by its type and llama.cpp's own word
    for it ("--spec-ngram-mod-n-match": "ngram-mod n-match", "--spec-draft-n-max": "draft n-max")."""
    if OPTIONS[name].label:
        return OPTIONS[name].label
    words = OPTIONS[name].flags[-1].removeprefix("--spec-").split("-")
    return " ".join(filter(None, ("-".join(words[:-2]), "-".join(words[-2:]))))


def value_words(name: str, value) -> str:
    if value is None:
        return OPTIONS[name].unset or "none"
    if name in NAMED:
        return model_name(value)
    if OPTIONS[name].prose:
        return "“" + (value if len(value) <= SHOWN_CHARS else value[: SHOWN_CHARS - 1] + "…") + "”"
    return shown(value)  # a switch: on or off


def changes(before: dict, after: dict) -> list[str]:
    """Each option `after` gives that differs from `before`, in words: "draft n-max 8 → 16",
    a model by its new value alone ("draft model: none")."""
    out = []
    for name, new in after.items():
        old = before.get(name)
        if old == new:
            continue
        if name in NAMED:
            out.append(f"{label(name)}: {value_words(name, new)}")
        else:
            out.append(f"{label(name)} {value_words(name, old)} → {value_words(name, new)}")
    return out


DRAFT_MODEL = ("spec_draft_n_max", "spec_draft_n_min", "spec_draft_p_min")  # a draft model's, head's or auto's


def sizes(spec: SpecConfig, spec_type: str) -> str:
    """A type's own sizes in words: "size-n 3, size-m 16" for ngram-simple ("" for none)."""
    prefix = "spec_" + spec_type.replace("-", "_") + "_"
    own = [n for n in OPTIONS if n.startswith(prefix) and n not in DRAFT_MODEL]
    return ", ".join(f"{label(n).removeprefix(spec_type + ' ')} {getattr(spec, SPEC_FIELDS[n])}" for n in own)


def unused(name: str, spec: SpecConfig) -> str | None:
    """Why option `name` does nothing under `spec`, or None: the draft settings under types that
    run no draft model (the n-gram types draft up to their own sizes, as in llama.cpp)."""
    if name not in DRAFT_MODEL or spec.uses_n_max:
        return None
    if not spec.drafting:
        return "not used by none: nothing is drafted"
    own = [s for s in (sizes(spec, t) for t in spec.drafting) if s]
    whose = "its" if len(spec.drafting) == 1 else "their"
    said = f": {whose} sizes are {'; '.join(own)}" if own else ": it drafts up to its own sizes"
    return f"not used by {', '.join(spec.drafting)}{said}"
