"""Every file, stream and server answer spectui parses is read with a size cap and a depth
check, so a huge, endless (/dev/zero) or deeply nested input is one error naming it, never a
MemoryError or a RecursionError.

The depth is counted by scanning brackets outside strings before parsing; the parsers (json,
tomllib) recurse per level. A too deep document raises the parser's own error type, so every
reader's existing handling of a syntax error names the file.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any, Protocol

from spectui.errors import UserError

MIB = 1024 * 1024
MAX_DEPTH = 64  # arrays and objects inside each other; spectui's own files use 4
CONFIG_BYTES = 1 * MIB  # presets, themes, settings, the recent models
TEXT_BYTES = 16 * MIB  # a prompt, a prompts file
DATA_BYTES = 64 * MIB  # traces, bench results: some 200,000 rounds

_JSON_TOKENS = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.DOTALL)
_TOML_TOKENS = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]', re.DOTALL
)
_TOML_STRINGS = re.compile(_TOML_TOKENS.pattern.removesuffix(r"|[\[\]{}]"), re.DOTALL)
_DOTTED_KEY = re.compile(r'(?<![A-Za-z0-9_-])(?:(?:[A-Za-z0-9_-]++|"")[ \t]*\.[ \t]*){' + str(MAX_DEPTH) + "}")


class Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


def read_stream(stream: Readable, what: str, limit: int) -> bytes:
    """At most `limit` bytes of an open stream, or a UserError saying `what` is too large."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise UserError(f"{what} is larger than {_size(limit)}: not something spectui reads")
    return data


def read_bytes(path: str | Path, what: str, limit: int) -> bytes:
    """A regular file's bytes (`what` names its role: "trace", "preset"); a folder, a FIFO or
    a device (which can block or never end), an unreadable or too large file is a UserError
    naming it."""
    try:  # non-blocking: a FIFO's open waits for a writer, maybe forever
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise UserError(f"cannot read {what} {path}: it is a folder; give a file")
            if not stat.S_ISREG(mode):
                raise UserError(f"cannot read {what} {path}: not a regular file (a pipe or a device); save it as one")
            return read_stream(f, f"{what} {path}", limit)
    except OSError as e:
        raise UserError(f"cannot read {what} {path}: {e.strerror or e}") from e


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n >= MIB else f"{n} bytes"


def too_deep(text: str, tokens: re.Pattern[str] = _JSON_TOKENS) -> int | None:
    """The offset where `text` opens its (MAX_DEPTH + 1)th nested bracket, or None."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    for m in tokens.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif c in "]}":
            depth = max(depth - 1, 0)
    return None


def loads_json(text: str | bytes) -> Any:
    """json.loads, with too deep nesting and integers too long for Python (over 4300
    digits) as a json.JSONDecodeError."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if (at := too_deep(text)) is not None:
        raise json.JSONDecodeError(f"nested deeper than {MAX_DEPTH} levels", text, at)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as e:  # int digits limit; RecursionError: a belt over the braces
        raise json.JSONDecodeError(str(e).split(":")[0], text, 0) from None


def _toml_too_deep(text: str) -> int | None:
    """Where `text` nests too deep: brackets, or a dotted key of more than MAX_DEPTH parts
    (tomllib's cost grows with the square of a key's length)."""
    if (at := too_deep(text, _TOML_TOKENS)) is not None:
        return at
    if text.count(".") <= MAX_DEPTH:
        return None
    bare = _TOML_STRINGS.sub(lambda m: '""' if m.group()[0] in "\"'" else " " * len(m.group()), text)
    m = _DOTTED_KEY.search(bare)
    return m.start() if m else None


def loads_toml(text: str) -> dict[str, Any]:
    """tomllib.loads, with too deep nesting and too long integers as a TOMLDecodeError."""
    if (at := _toml_too_deep(text)) is not None:
        line = text.count("\n", 0, at) + 1
        raise tomllib.TOMLDecodeError(f"nested deeper than {MAX_DEPTH} levels (at line {line})")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except (ValueError, RecursionError) as e:
        raise tomllib.TOMLDecodeError(str(e).split(":")[0]) from None
