"""The plan's cache: one file per identity (plan/identity.py), holding the curve and what else
its writer keeps beside it (`spectui plan`'s calibrations, one per calibration key). A file
measured for another identity, or that cannot be read, is none: its writer measures again and
replaces it."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from spectui.bounded import CONFIG_BYTES, loads_json, read_bytes
from spectui.errors import UserError
from spectui.plan.curve import Curve

FORMAT = "spectui-plan/2"
# keyed by the model files' paths and times (a reinstall measured again): never read again
STALE_FORMATS = ("spectui-plan/1", "spectui-plan-concurrency/1")
KEPT_CALIBRATIONS = 4  # per curve: one per set of prompts and sampling, the newest first


def cache_dir() -> Path:
    from spectui.config.paths import plan_dir

    return plan_dir()


def cache_path(key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return cache_dir() / f"{digest}.json"


def check_writable() -> Path:
    """The cache folder, created and writable, before any measurement: else one line."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot write the plan cache {folder}: {e.strerror or e}; set SPECTUI_CACHE_DIR") from e
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"cannot write the plan cache {folder}: permission denied; set SPECTUI_CACHE_DIR")
    return folder


def load_cached(key: dict, also: Callable[[dict], object] = lambda doc: None) -> tuple[dict | None, str | None]:
    """The cached document for `key`, or None and why not (None: nothing cached). `also` reads the
    document's other sections: what it raises makes the file corrupt, as a bad curve does."""
    path = cache_path(key)
    if not path.is_file():
        return None, None
    try:
        doc = loads_json(read_bytes(path, "a cached curve", CONFIG_BYTES).decode("utf-8"))
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            return None, f"{path} is not a {FORMAT} curve: measuring again"
        if doc.get("key") != key:
            return None, f"{path} was measured for another model file, build or device: measuring again"
        Curve.from_dict(doc["curve"])
        also(doc)
    except UserError as e:
        return None, f"{e}: measuring again"
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, UnicodeDecodeError) as e:
        return None, f"{path} is corrupt ({type(e).__name__}: {e}): measuring again"
    return doc, None


def calibrations(doc: dict) -> list[dict]:
    """The document's calibrations, each {"key": its calibration key, "calibration": ...}, newest
    first (a file from before they were kept side by side holds one, under calibration_key)."""
    if "calibrations" in doc:
        return list(doc["calibrations"])
    return [{"key": doc.get("calibration_key"), "calibration": doc["calibration"]}] if "calibration" in doc else []


def calibration_for(doc: dict, calibration_key: dict) -> dict | None:
    """The calibration answered with `calibration_key`'s prompts and sampling; None where none was."""
    return next((c["calibration"] for c in calibrations(doc) if c["key"] == calibration_key), None)


def with_calibrations(measured: dict, earlier: dict | None) -> dict:
    """A newly measured document that keeps, beside its own calibration, those of the file it
    replaces for other prompts or sampling (up to KEPT_CALIBRATIONS): f6 at the chat's sampling
    and `spectui plan` at its own share one curve instead of measuring each other's away."""
    own = calibrations(measured)
    keys = [c["key"] for c in own]
    kept = [c for c in calibrations(earlier or {}) if c["key"] not in keys]
    rest = {k: v for k, v in measured.items() if k not in ("calibration", "calibration_key")}
    return {**rest, "calibrations": (own + kept)[:KEPT_CALIBRATIONS]}


def store(key: dict, doc: dict) -> Path:
    """Write the document atomically: a reader sees the old file or the new one."""
    from spectui.config.paths import write_atomic

    forget_stale()
    return write_atomic(cache_path(key), json.dumps({"format": FORMAT, "key": key, **doc}, indent=1))


def forget_stale() -> None:
    """Remove the files of a format no reader takes any more, as a new file is written beside them."""
    for path in cache_dir().glob("*.json"):
        try:
            doc = loads_json(read_bytes(path, "a cached curve", CONFIG_BYTES).decode("utf-8"))
        except (UserError, ValueError, UnicodeDecodeError):
            continue  # not ours to judge: a reader says it is corrupt and measures again
        if isinstance(doc, dict) and doc.get("format") in STALE_FORMATS:
            path.unlink(missing_ok=True)
