"""Where the shipped presets and themes are: package data in a wheel
(spectui.shipped_presets, from the top-level presets/ folder), or that folder itself when
spectui runs from a source checkout."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path


def shipped_dir(kind: str) -> Traversable:
    """`kind` is "presets" or "themes"."""
    try:
        return resources.files(f"spectui.shipped_{kind}")
    except ModuleNotFoundError:  # a checkout: the folder beside the package
        return Path(__file__).resolve().parent.parent / kind
