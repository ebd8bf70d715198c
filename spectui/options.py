"""Options described once: each setting's record sits on the dataclass field that holds it
(Setup's in config/setup.py, SpecConfig's in spec_config.py), and the flags, the help, the
chat's words, the settings form, the checks and the stored answers are all read from it. A
new setting is one field line; where an answer keeps it, one migration; a sampler setting is
also implemented in llama/sampling.py's SamplingParams, whose fields the samplers and a
llama-server request read: a per-answer record names what it reaches, and `check_reach` refuses
the package at import where that has no field of its name.
"""

from __future__ import annotations

import functools
import math
from dataclasses import Field, dataclass, field, fields, replace
from typing import Any

from spectui.errors import UserError

# the settings form's kinds of field (Option.form)
NUMBER, CHOICE, TEXT, SWITCH = "number", "choice", "text", "switch"
# a field's annotation as the type of its value; the spec types' tuple is one "a,b" string in a flag
_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "tuple[str, ...]": str, "tuple[Spec, ...]": str}
# what a number flag must be, in words
NUMBERS = {int: "a whole number", float: "a number"}


def number(kind: type, text: str, name: str) -> int | float:
    """A flag's or a form field's text as an int or float, refused in the checks' own words: one
    format for a value that does not parse and one out of range (1e400 as typed, not as inf)."""
    try:
        value = kind(text)
    except ValueError:
        raise UserError(f"{name} must be {NUMBERS[kind]}, got {text!r}") from None
    if not math.isfinite(value):
        raise UserError(f"{name} must be a finite number, got {text!r}")
    return value


@dataclass(frozen=True)
class Option:
    """One setting. The first group is written in its field's record; the last (name, type,
    optional, default) is read from the field itself (described())."""

    flags: tuple[str, ...]
    help: str  # one line; "{default}" marks where the default goes, else "(default X)" is added
    group: str = ""  # the --help section: models, speculation or sampling
    label: str = ""  # the chat's words for it; "" for a speculation size (its flag's words: describe.label)
    choices: tuple[str, ...] = ()
    lo: float | None = None  # the bounds, and the rule they make in words ("0 (greedy) or more")
    hi: float | None = None
    rule: str = ""
    unset: str = ""  # what None means in words ("random"), where it is not "none"
    form: str | None = None  # NUMBER, CHOICE, TEXT or SWITCH: the settings form edits it; None: not in the form
    hint: str = ""  # the form's line beside it
    form_unset: str = ""  # how the form writes None, as the flag does (the seed's -1)
    per_answer: bool = False  # each answer keeps it (a column of the stored answers: store/migrations.py)
    reaches: str = ""  # a per-answer one: "sampler" (a SamplingParams field) or "engine" (a SpecConfig field)
    memory: bool = False  # a pair's memory projection depends on it (chat/memory_check.py)
    calibration: bool = False  # a calibration's acceptance depends on it (plan/identity.py's key)
    recorded: bool = False  # `spectui run --json` names it in its configuration
    owned: bool = False  # a preset chooses it: switching presets replaces it even when a flag gave it
    prose: bool = False  # free text for the model (the system prompt), not a name or a path
    name: str = ""
    type: type = str
    optional: bool = False  # None is a value (unset)
    default: Any = None

    @property
    def flag(self) -> str:
        """How a message names it: "-n/--n-predict", "--temp"."""
        return "/".join(self.flags)

    @property
    def shown_default(self) -> str:
        return shown(self.default)

    @property
    def negated(self) -> str:
        """A switch's off flag, as llama.cpp writes it ("--no-mmap" for "--mmap")."""
        return "--no-" + self.flags[-1].removeprefix("--")

    def argv(self, value) -> str:
        """The value as one command-line word: "--mmap" or "--no-mmap" for a switch, else "--temp=0.5"
        ("=": a value such as -1 is not read as a flag)."""
        if self.type is bool:
            return self.flags[-1] if value else self.negated
        return f"{self.flags[-1]}={value}"

    def help_line(self, preset: Any = None) -> str:
        """The --help line: the help with its default, which is never written by hand, and
        `preset`, the default preset's value where it chooses another."""
        if "{default}" in self.help:
            line = self.help.replace("{default}", self.shown_default)
        else:
            line = self.help if self.default is None else f"{self.help} (default {self.shown_default})"
        if preset is None or shown(preset) == self.shown_default:
            return line
        said = f"the default preset: {shown(preset)}"
        merged = line.endswith(")") and line[line.rindex("(") :].startswith("(default ")
        return f"{line[:-1]}; {said})" if merged else f"{line}; {said}"

    def refused(self, value) -> UserError:
        """The error for a value outside its bounds."""
        return UserError(f"{self.flag} must be {self.rule}, got {value}")

    def check(self, value) -> None:
        """A value against its record (kind, finite, bounds, choices), or a UserError naming the flag."""
        if value is None and self.optional:
            return
        if self.type in (int, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UserError(f"{self.flag} must be a number, got {value!r}")
            if self.type is int and not isinstance(value, int):
                raise UserError(f"{self.flag} must be {NUMBERS[int]}, got {value!r}")
            if not math.isfinite(value):
                raise UserError(f"{self.flag} must be a finite number, got {value}")
            if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
                raise self.refused(value)
        elif self.type is bool and not isinstance(value, bool):
            raise UserError(f"{self.flag} must be on or off, got {value!r}")
        elif not isinstance(value, self.type):
            raise UserError(f"{self.flag} must be text, got {value!r}")
        if self.choices and value not in self.choices:
            raise UserError(f"{self.flag} must be one of {', '.join(self.choices)}, got '{value}'")


def shown(value) -> str:
    """A setting's value as a flag's help and the README write it: a switch "on" or "off", the spec types "a,b"."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return ",".join(value) if isinstance(value, tuple) else str(value)


def option(default, *flags: str, help: str, **record) -> Any:
    """A dataclass field described by its Option record (`record`: Option's other fields)."""
    return field(default=default, metadata={"option": Option(flags, help, **record)})


@functools.cache
def described(cls: Any) -> tuple[Option, ...]:
    """The records of `cls`'s fields, in order, with their name, type and default filled in."""
    return tuple(_filled(f) for f in fields(cls) if "option" in f.metadata)


def _filled(f: Field) -> Option:
    annotation = str(f.type)  # annotations are strings (from __future__ import annotations)
    kind = annotation.removesuffix(" | None")
    return replace(f.metadata["option"], name=f.name, type=_TYPES[kind], optional=kind != annotation, default=f.default)


def check_fields(obj: Any, skip: tuple[str, ...] = ()) -> None:
    """Every described field of `obj` against its record, but the `skip` ones (checked by hand)."""
    for o in described(obj.__class__):
        if o.name not in skip:
            o.check(getattr(obj, o.name))


def check_reach(records: tuple[Option, ...], reached: dict[str, type], whole: tuple[str, ...] = ()) -> None:
    """Refuse (TypeError, at import) a per-answer record whose `reaches` is not one of `reached`
    or whose name is no field of the class it reaches: a setting no sampler or engine reads would
    be stored and shown while doing nothing. Each class named in `whole` must also have a record
    for every field (nothing it reads goes unset)."""
    for o in records:
        if not o.per_answer:
            continue
        if o.reaches not in reached:
            raise TypeError(
                f"per-answer setting {o.name!r}: reaches must be one of {', '.join(reached)}, got {o.reaches!r}"
            )
        if o.name not in {f.name for f in fields(reached[o.reaches])}:
            raise TypeError(
                f"per-answer setting {o.name!r} reaches no {o.reaches}: {reached[o.reaches].__name__} has no field "
                f"{o.name!r}; implement it there or give the record no per_answer"
            )
    for kind in whole:
        named = {o.name for o in records if o.per_answer and o.reaches == kind}
        if unset := [f.name for f in fields(reached[kind]) if f.name not in named]:
            raise TypeError(f"{reached[kind].__name__} fields with no per-answer record: {', '.join(unset)}")
