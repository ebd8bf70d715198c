"""Settings in words, for the messages a person reads: each option by the name the chat
shows it under ("draft n-max", not spec_draft_n_max), each value as words ("none", a model's
title), and a change of settings as "draft n-max 8 → 16"."""

from __future__ import annotations

from spectui.config.model_choice import model_name
from spectui.config.setup import OPTIONS

LABELS = {
    "server": "server",
    "model": "target model",
    "model_draft": "draft model",
    "n_gpu_layers": "target GPU layers",
    "n_gpu_layers_draft": "draft GPU layers",
    "ctx_size": "context size",
    "batch_size": "batch size",
    "threads": "threads",
    "flash_attn": "flash attention",
    "backend_sampling": "backend sampling",
    "cache_type_k_draft": "draft K cache",
    "cache_type_v_draft": "draft V cache",
    "spec_type": "spec type",
    "spec_draft_sampling": "draft sampling",
    "spec_verify": "verify",
    "n_predict": "n-predict",
    "temp": "temperature",
    "top_k": "top-k",
    "top_p": "top-p",
    "min_p": "min-p",
    "seed": "seed",
    "system": "system prompt",
}
UNSET = {"seed": "random", "threads": "auto"}  # what None means, where it is not "none"
NAMED = ("model", "model_draft")  # a new model is named alone: two titles make too long a line
SHOWN_CHARS = 24  # a system prompt's characters quoted


def label(name: str) -> str:
    """An option's name in words; a speculation size by its type and llama.cpp's own word
    for it ("--spec-ngram-mod-n-match": "ngram-mod n-match", "--spec-draft-n-max": "draft n-max")."""
    if name in LABELS:
        return LABELS[name]
    words = OPTIONS[name].flags[-1].removeprefix("--spec-").split("-")
    return " ".join(filter(None, ("-".join(words[:-2]), "-".join(words[-2:]))))


def value_words(name: str, value) -> str:
    if value is None:
        return UNSET.get(name, "none")
    if name in NAMED:
        return model_name(value)
    if name == "system":
        return "“" + (value if len(value) <= SHOWN_CHARS else value[: SHOWN_CHARS - 1] + "…") + "”"
    return str(value)


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
