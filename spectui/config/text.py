"""User text from files, arguments and stdin: UTF-8, or one UserError naming the source.

spectui does not guess encodings: a prompt decoded with replacement characters would be
answered as something the user never wrote, so non-UTF-8 input is refused instead.
"""

from __future__ import annotations

from pathlib import Path

from spectui.bounded import TEXT_BYTES, read_bytes
from spectui.errors import UserError


def from_bytes(data: bytes, source: str, fix: str = "save it as UTF-8") -> str:
    """`data` decoded as UTF-8; `source` names it in the error ("the prompt on stdin")."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{source} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); {fix}") from None


def from_argv(text: str, source: str) -> str:
    """An argument as Python got it: bytes the locale could not decode arrive as lone
    surrogates (surrogateescape), which no model can tokenize."""
    return from_bytes(text.encode("utf-8", "surrogateescape"), source, "give it as UTF-8")


def read_text(path: str | Path, what: str, limit: int = TEXT_BYTES) -> str:
    """The UTF-8 text of a user's file, at most `limit` bytes; `what` names its role
    ("preset", "prompt file")."""
    return from_bytes(read_bytes(path, what, limit), f"{what} {path}")
