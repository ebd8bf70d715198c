"""How the chat's header and status line read: the loaded pair by its models' names and the GPU
devices it runs on, and what the chat is doing, styled with the theme's variables."""

from __future__ import annotations

from spectui.chat.state import ChatState
from spectui.chat.updates import StatusLine
from spectui.config.model_choice import model_name
from spectui.words import plural

Span = tuple[str, str]  # (text, style): a style is a theme variable such as "$warning", or ""


def pair_line(target: str, draft: str | None) -> str:
    """The loaded pair, each model by the name the catalog and the pickers give it."""
    return f"{target} (no draft model)" if draft is None else f"{target} ⇠ draft {draft}"


def header(state: ChatState, narrow: bool = False) -> tuple[str, str]:
    """(the configuration, the models), or the app's name and what keeps it from a session;
    `narrow`: the models only, in the first place (a status strip shows the configuration).
    Where they do not fit, the header's ellipsis cuts them: a name keeps one form."""
    status = state.status()
    if status is None:
        return "spectui", "loading…" if state.loading else "no model loaded"
    spec = status.spec
    n_max = f"n-max {spec.draft_n_max} · " if spec.uses_n_max else ""
    config = f"{spec.label} · {n_max}verify {status.verify}"
    models = pair_line(model_name(status.target_path), model_name(status.draft_path) if status.draft_path else None)
    if status.devices:
        models += f" on {', '.join(status.devices)}"
    return (models, "") if narrow else (config, models)


def status_spans(line: StatusLine) -> tuple[Span, ...]:
    """The status line's text in spans; none hides it."""
    match line.doing:
        case "generating":
            return (("● ", "$success"), (line.text or "generating", ""), ("  esc stops", "$text-muted"))
        case "stopping":
            return (("stopping at the end of this round…", "$warning"),)
        case "editing":
            n = line.later
            return (
                ("✎ ", "$accent"),
                ("editing: enter resends", ""),
                (f" and replaces the {plural(n, 'message')} after it" if n else "", "$text-muted"),
                ("  esc cancels", "$text-muted"),
            )
        case "loading" | "measuring":
            return (("◌ ", "$accent"), (line.text, ""), ("…", ""))
        case "failed":
            return ((f"could not load the models: {line.text}", "$error"),)
    return ()
