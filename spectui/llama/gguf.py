"""GGUF files as files: the checks that come before llama.cpp reads one."""

from __future__ import annotations

from pathlib import Path

from spectui.errors import UserError, named


def check_gguf_file(path: Path) -> None:
    """A clear error for a path that is not a GGUF file at all."""
    if not path.exists():
        raise UserError(f"model file not found: {named(path)}")
    if not path.is_file():
        raise UserError(f"model path is not a file: {named(path)}")
    size = path.stat().st_size
    if size == 0:
        raise UserError(f"model file is empty: {named(path)}")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        raise UserError(f"{named(path)} is not a GGUF file (it does not start with GGUF)")
