"""Every app command in one table: the key bindings, the command palette and the help
screen are all generated from it, so they cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True)
class Command:
    keys: str  # Textual key names, comma-separated; "" for palette-only commands
    action: str  # an App action, e.g. "spec_type(1)"
    label: str  # short, for the footer
    title: str  # for the palette and the help screen
    help: str
    footer: bool = False
    chat: bool = True  # an action of the chat screen (its keys work there only); else the app's
    priority: bool = False  # the key wins over the focused widget's own use of it
    wide: bool = False  # in the footer on wide terminals only (a narrow one has no room)


COMMANDS = (
    Command("escape", "stop", "stop", "Stop generation", "Stop the answer being written; what is shown is kept", True),
    Command(
        "ctrl+c",
        "interrupt",
        "stop / quit",
        "Stop, or quit",
        "Stop the answer being written; pressed again (or twice when idle), quit, saving the chat. "
        "With text selected in the input, copy it",
        priority=True,
    ),
    Command(
        "ctrl+t",
        "spec_type(1)",
        "spec type",
        "Next spec type",
        "Cycle forward through the spec types the loaded models allow (applies at the next round)",
        True,
    ),
    Command("ctrl+g", "spec_type(-1)", "spec type back", "Previous spec type", "Cycle backward through the spec types"),
    Command(
        "ctrl+up", "n_max(1)", "n-max +", "Draft n-max up", "Allow one more drafted token per round (up to 64)", True
    ),
    Command(
        "ctrl+down", "n_max(-1)", "n-max -", "Draft n-max down", "Allow one fewer drafted token per round (at least 1)"
    ),
    Command(
        "ctrl+o",
        "toggle_overlay",
        "overlay",
        "Overlay on/off",
        "Colour tokens by where they came from, or show answers as Markdown",
        True,
        wide=True,
    ),
    Command(
        "ctrl+f",
        "toggle_rejected",
        "rejected",
        "Rejected tokens on/off",
        "Show or hide rejected draft tokens (struck through)",
    ),
    Command(
        "ctrl+b",
        "toggle_panel",
        "panel",
        "Stats panel on/off",
        "Show or hide the stats panel (below 100 columns: its one-line form, remembered apart from the panel)",
        True,
        wide=True,
    ),
    Command(
        "ctrl+n", "new_chat", "new chat", "New chat", "Start a new chat (the current one stays saved)", True, wide=True
    ),
    Command(
        "ctrl+r",
        "regenerate",
        "regenerate",
        "Regenerate the last answer",
        "Ask again for the last answer, with the current configuration",
    ),
    Command(
        "ctrl+s",
        "export",
        "export",
        "Export chat to Markdown",
        "Write the transcript (never rejected tokens) to a Markdown file in the folder spectui was started in",
    ),
    Command(
        "ctrl+l",
        "chats",
        "chats",
        "Saved chats…",
        "Open, rename (r), delete (d then y) or search (/) saved chats; opening restores its models and settings",
    ),
    Command(
        "",
        "edit_message",
        "edit",
        "Edit an earlier message…",
        "Pick one of your messages to edit and resend; the conversation after it is replaced",
    ),
    Command(
        "f3",
        "save_trace",
        "trace",
        "Save the chat's trace",
        "Write this chat's answers, round by round, as a trace to replay or export (spectui replay FILE)",
    ),
    Command(
        "",
        "toggle_record_traces",
        "record",
        "Record every chat on/off",
        "Append every answer to a trace per chat in the data folder (remembered)",
        chat=False,
    ),
    Command(
        "f5", "switch_preset", "preset", "Switch preset…", "Load another preset's models in the background", chat=False
    ),
    Command(
        "f4",
        "save_preset",
        "save preset",
        "Save configuration as a preset…",
        "Save the models, the speculation and the settings (f10) as a user preset",
        chat=False,
    ),
    Command(
        "f10",
        "settings",
        "settings",
        "Settings…",
        "Sampling, system prompt, n-predict, draft n-max/n-min/p-min, verify; the palette has one entry each",
        chat=False,
    ),
    Command(
        "",
        "switch_models",
        "models",
        "Switch models…",
        "Pick a target and a draft (embedded or recent GGUF files); the current pair stays until they load",
        chat=False,
    ),
    Command(
        "f2",
        "compare",
        "A/B",
        "A/B comparison…",
        "Run one prompt with two configurations, side by side, then compare speed, acceptance and output",
        chat=False,
    ),
    Command(
        "f6",
        "measure",
        "measure",
        "Measure this machine",
        "Run `spectui plan` for the loaded pair (about a minute on a small CPU; messages wait): the welcome card "
        "and the panel then predict the speedup from this machine's costs",
        chat=False,
        priority=True,  # over the input's own f6 (select the line)
    ),
    Command("f8", "cycle_theme", "theme", "Next theme", "Cycle through the themes (remembered)", chat=False),
    Command("f9", "choose_theme", "themes", "Choose theme…", "Pick a theme from a list (remembered)", chat=False),
    Command(
        "f12",
        "copy_answer",
        "copy",
        "Copy the last answer",
        "Copy the last answer to the clipboard (never rejected tokens; OSC 52 in a terminal without one)",
    ),
    Command(
        "shift+f12",
        "copy_answer(True)",
        "copy code",
        "Copy the last code block",
        "Copy the last answer's last code block to the clipboard",
    ),
    Command(
        "f11",
        "rounds",
        "rounds",
        "Round details",
        "The last answer's rounds: who drafted, drafted/accepted/rejected, timings, auto's reasons",
    ),
    Command(
        "f7",
        "inspect",
        "inspect",
        "Inspect the last answer's tokens",
        "Why was it rejected? A cursor on the last answer (←/→ token, ↑/↓ rejected draft, pgup/pgdn answer, "
        "esc leaves) and a panel with the token's p, q, the decision and the target's top 3; f11, then enter "
        "on a round, starts there",
        priority=True,  # over the input's own f7 (select all, which ctrl+a does too)
    ),
    Command(
        "shift+f7",
        "toggle_inspect",
        "inspect on/off",
        "Inspect on/off",
        "Record why each draft was accepted or rejected (p, q, the target's top 3), from the next round, "
        "for f7 to read; on by default where llama.cpp runs on the CPU, off with a GPU build",
    ),
    Command("f1,question_mark", "help", "help", "Help", "Keys, commands and the overlay legend", True, chat=False),
)

# Keys the input and Textual provide; listed in the help screen only.
OTHER_KEYS = (
    ("enter", "Send the message", "While an answer streams it is queued, and sent when the answer ends"),
    (
        "up",
        "Edit the last message",
        "In the empty box: the last queued one, else the last sent one (enter resends, "
        "replacing what followed; esc cancels)",
    ),
    ("ctrl+j", "New line in the message", "shift+enter too, where the terminal reports it"),
    ("ctrl+p", "Command palette", "Every command, spec type, preset and saved chat"),
    ("ctrl+q", "Quit", "A streaming answer is stopped and saved first"),
)


def key_display(keys: str) -> str:
    """ "f1,question_mark" -> "f1 / ?", "ctrl+up" -> "ctrl+↑": for the palette and the help screen."""
    names = {"question_mark": "?", "up": "↑", "down": "↓", "escape": "esc"}
    out = []
    for key in keys.split(","):
        out.append("+".join(names.get(part, part) for part in key.split("+")))
    return " / ".join(out)


WIDE_FOOTER = {c.action for c in COMMANDS if c.wide} | {"newline"}  # and the input's ctrl+j


def bindings(chat: bool) -> list[BindingType]:
    """The key bindings of the chat screen (chat=True) or of the app."""
    return [
        Binding(c.keys, c.action, c.label, show=c.footer, tooltip=c.help, priority=c.priority)
        for c in COMMANDS
        if c.keys and c.chat == chat
    ]
