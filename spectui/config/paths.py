"""Every directory spectui reads or writes, and the one way it writes a file.

Environment overrides (for tests and portable setups): SPECTUI_CONFIG_DIR (presets,
themes, settings), SPECTUI_DATA_DIR (chats, exports, traces, logs), SPECTUI_MODELS_DIR
(assembled embedded models), SPECTUI_CACHE_DIR (measured cost curves). Shipped presets and
themes are package data in a wheel (spectui.shipped_presets, from the top-level presets/
folder), or that folder itself when spectui runs from a source checkout.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import platformdirs

from spectui.errors import UserError

MODELS_DIR_ENV = "SPECTUI_MODELS_DIR"


def config_dir() -> Path:
    return Path(os.environ.get("SPECTUI_CONFIG_DIR") or platformdirs.user_config_dir("spectui"))


def user_presets_dir() -> Path:
    return config_dir() / "presets"


def user_themes_dir() -> Path:
    return config_dir() / "themes"


def settings_path() -> Path:
    return config_dir() / "settings.toml"


def data_dir() -> Path:
    return Path(os.environ.get("SPECTUI_DATA_DIR") or platformdirs.user_data_dir("spectui"))


def chats_dir() -> Path:
    return data_dir() / "chats"


def exports_dir() -> Path:
    """Where exports go when the current directory is not writable."""
    return data_dir() / "exports"


def traces_dir() -> Path:
    """Where the chat records every chat's trace when asked to (the record_traces setting)."""
    return data_dir() / "traces"


def write_export(name: str, write: Callable[[Path], Path]) -> Path:
    """Write a file the user asked for into the current folder, or into exports_dir() when
    the current folder is not writable; `write(path)` raises UserError on failure."""
    try:
        return write(Path.cwd() / name)
    except UserError:
        return write(exports_dir() / name)


def unsaved_dirs() -> list[Path]:
    """Where a quit keeps a chat it could not save, in the order tried: beside the data dir,
    else the current folder, else the temp folder (the next start looks in each)."""
    try:
        here = [Path.cwd()]
    except OSError:  # the current folder was removed
        here = []
    return [data_dir().parent, *here, Path(tempfile.gettempdir())]


def llama_log_path() -> Path:
    """llama.cpp's log for `spectui chat --verbose` (the app owns stderr)."""
    return data_dir() / "llama.log"


def crash_log_path() -> Path:
    """Where the app appends the traceback of an unexpected error (the screen is gone by then)."""
    return data_dir() / "crash.log"


def models_dir() -> Path:
    """Where assembled models live; read at each call so tests can point it elsewhere."""
    override = os.environ.get(MODELS_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir("spectui")) / "models"


def plan_dir() -> Path:
    """Where `spectui plan` keeps the cost curves it measured (one file per machine and pair)."""
    return Path(os.environ.get("SPECTUI_CACHE_DIR") or platformdirs.user_cache_dir("spectui")) / "plan"


def shipped_dir(kind: str) -> Traversable:
    """`kind` is "presets" or "themes"."""
    try:
        return resources.files(f"spectui.shipped_{kind}")
    except ModuleNotFoundError:  # a checkout: the folder beside the package
        return Path(__file__).resolve().parent.parent.parent / kind


def writable(name: str, flag: str) -> Path:
    """An output file's path (`flag` names it: "--json"), checked before any work starts, so
    a typo does not cost a whole bench: by opening it for writing, as the write will (a new
    file is created and removed again), since permission bits pass for root where /proc or
    a read-only mount still refuse."""
    path = Path(name).expanduser()
    if path.is_dir():
        raise UserError(f"{flag} {name} is a folder; give a file name")
    if not path.parent.is_dir():
        raise UserError(f"{flag}: cannot write {name}: the folder {path.parent} does not exist")
    existed = path.exists()
    try:  # no O_TRUNC: an existing file keeps its content until the real write; a FIFO never blocks
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | (0 if existed else os.O_CREAT | os.O_EXCL), 0o600)
        try:
            os.write(fd, b"")  # writes nothing to a file, but a device that refuses every write (/dev/full) says so
        finally:
            os.close(fd)
    except OSError as e:
        raise UserError(f"{flag}: cannot write {name}: {e.strerror or e}") from None
    if not existed:
        path.unlink(missing_ok=True)
    return path


def open_private(path: Path, mode: str = "w"):
    """Open a file that holds conversation text (a trace, a log) for writing ("w" or "a"),
    created readable by its owner only (0600), as the chat files are."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "a" else os.O_TRUNC)
    return os.fdopen(os.open(path, flags, 0o600), mode, encoding="utf-8", newline="\n")


def private_dir(path: Path) -> Path:
    """Create the folder `path` and any missing parents readable by their owner only (0700):
    they hold chats and traces. A folder that exists keeps its mode."""
    path = Path(path)
    if not path.is_dir():
        if path.parent != path:
            private_dir(path.parent)
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            if not path.is_dir():
                raise
    return path


def write_atomic(path: Path, text: str) -> Path:
    """Write `text` to `path` so readers see the old file or the new one, never a mix:
    a temp file in the same dir, fsync, os.replace, then fsync the dir so the rename
    survives a power cut. An OS error becomes a UserError naming the file."""
    path = Path(path)
    try:
        private_dir(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}") from e
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {e.strerror or e}") from e
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if os.name == "posix":
        try:
            dfd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass  # some filesystems cannot fsync a directory; the file itself is complete
    return path
