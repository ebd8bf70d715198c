"""The settings screen (f10): sampling, the system prompt, the answer limit and the draft
settings, on the loaded models. Speculation changes apply from the next round, the others
from the next answer; f4 saves them all into a preset.

The form applies the changed values only (Setup option names) through the chat's switcher,
checked by Setup's and SpecConfig's own validation: a bad value is one line under the form, and
nothing is applied.
A setting the spec type in force does not use (config/describe.unused) is greyed, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, Switch, TextArea

from spectui.chat.switcher import SetupSwitcher
from spectui.config import describe
from spectui.config.setup import OPTIONS, Setup
from spectui.errors import UserError
from spectui.options import CHOICE, TEXT, number
from spectui.options import shown as flag_words


@dataclass(frozen=True)
class Field:
    """A field of the form, from its option's record (spectui/options.py)."""

    name: str  # the Setup option
    kind: type  # int, float, str or bool (a switch)
    about: str
    blank: bool = False  # an empty value means None (no seed, no system prompt)
    choices: tuple[str, ...] = ()
    unset: str = ""  # how None is written, as the flag writes it (the seed's -1: random)

    @property
    def label(self) -> str:
        return describe.label(self.name)


# every option with a kind of form field: the sampling an answer keeps, the rest of the sampling
# (the answer limit), the speculation, and the free text last (under the grid)
FIELDS = tuple(
    Field(o.name, o.type, o.hint, o.optional, o.choices if o.form == CHOICE else (), o.form_unset)
    for o in sorted(
        (o for o in OPTIONS.values() if o.form),
        key=lambda o: (o.form == TEXT, o.group != "sampling", o.reaches != "sampler"),
    )
)
BY_NAME = {f.name: f for f in FIELDS}
TEXT_FIELD = FIELDS[-1].name  # the system prompt


def parse(field: Field, text: str):
    """The typed value of a field's text (its bounds are Setup's: `checked`), or a UserError
    that says what it must be."""
    text = text.strip() if field.name != TEXT_FIELD else text
    if field.blank and not text.strip():
        return None
    if field.kind is str:
        return text
    if field.kind is bool:  # a switch's value, as the form reads it
        return text == flag_words(True)
    return number(field.kind, text, OPTIONS[field.name].flag)  # named as the checks name it


def checked(current: Setup, texts: dict[str, str]) -> dict:
    """Each field's value from its text, the whole checked as Setup and SpecConfig check a flag
    or a preset; a UserError names the first bad one."""
    values = {name: parse(BY_NAME[name], text) for name, text in texts.items()}
    current.with_values(values)
    return values


def shown(field: Field, value) -> str:
    return field.unset if value is None else flag_words(value) if field.kind is bool else str(value)


class SettingsScreen(ModalScreen[dict | None]):
    DEFAULT_CSS = """
    SettingsScreen {
        align: center middle;
    }
    #settings {
        width: 100;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        padding: 0 1;
        background: $panel;
        border: round $primary;
    }
    #settings .heading {
        text-style: bold;
        color: $primary;
    }
    #fields {
        grid-size: 3;
        grid-columns: 15 16 1fr;
        grid-rows: auto;
        grid-gutter: 0 1;
        height: auto;
        margin: 1 0;
    }
    #fields .about {
        color: $text-muted;
        width: 1fr;
        height: auto;
    }
    #fields .about.-unused {
        color: $warning;
    }
    #fields Input, #fields Select, #fields Switch {
        width: 16;
    }
    #system {
        height: 4;
        background: $boost;
    }
    #error {
        color: $error;
        height: auto;
    }
    #buttons {
        height: auto;
        margin: 1 0 0 0;
        align-horizontal: right;
    }
    #buttons Button {
        margin: 0 0 0 2;
    }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "cancel"), Binding("ctrl+s", "apply", "apply")]

    def __init__(self, switcher: SetupSwitcher, focus: str | None = None):
        """`switcher`: the chat's, whose setup is in force (the speculation as the session runs
        it) and which applies the changes; `focus`: the field to start in (a palette command names one)."""
        super().__init__()
        self.switcher = switcher
        self.current = switcher.state.setup
        self.start = focus

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="settings"):
            yield Static(
                Content.assemble(
                    ("Settings", "bold $primary"),
                    ("  speculation from the next round, the rest from the next answer", "$text-muted"),
                )
            )
            with Grid(id="fields"):
                for f in FIELDS[:-1]:
                    yield Label(f.label)
                    value, unused = self.current.value(f.name), describe.unused(f.name, self.current.spec)
                    if f.kind is bool:
                        yield Switch(bool(value), id=f.name, disabled=unused is not None)
                    elif f.choices:
                        yield Select(
                            [(c, c) for c in f.choices], value=value, allow_blank=False, id=f.name, compact=True
                        )
                    else:
                        yield Input(shown(f, value), id=f.name, compact=True, disabled=unused is not None)
                    about = Label(unused or f.about, classes="about -unused" if unused else "about")
                    yield about
            text = BY_NAME[TEXT_FIELD]
            yield Label(text.label.capitalize() + " (" + text.about + ")", classes="heading")
            yield TextArea(shown(text, self.current.value(text.name)), id=text.name, soft_wrap=True, compact=True)
            yield Static(id="error")
            with Horizontal(id="buttons"):
                yield Button("Apply (ctrl+s)", variant="primary", id="apply", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one(f"#{self.start or FIELDS[0].name}").focus()

    def values(self) -> dict:
        """Every field's value, checked; a UserError names the first bad one."""
        texts = {}
        for f in FIELDS:
            widget = self.query_one(f"#{f.name}")
            if isinstance(widget, TextArea):
                texts[f.name] = widget.text
            elif isinstance(widget, Switch):
                texts[f.name] = flag_words(widget.value)
            else:
                texts[f.name] = str(cast("Input | Select", widget).value)
        return checked(self.current, texts)

    def action_apply(self) -> None:
        try:
            values = self.values()
        except UserError as e:
            error = self.query_one("#error", Static)
            error.update(str(e))
            self.call_after_refresh(error.scroll_visible)  # below the fields, off a 24-line screen
            return
        was = {k: shown(BY_NAME[k], self.current.value(k)) for k in values}  # a seed of -1 is the setup's none
        self._applied({k: v for k, v in values.items() if shown(BY_NAME[k], v) != was[k]})

    def _applied(self, changed: dict) -> None:
        """Close with the changed values, applied (none changed: nothing is applied or said)."""
        if changed:
            self.switcher.apply_settings(changed)
        self.dismiss(changed)

    def on_input_submitted(self) -> None:
        self.action_apply()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.action_apply()
        else:
            self.dismiss(None)
