"""Every drafting type of the spec-type table (spec_types.py), built by the drafter its record
names: the engine's one way to get a drafter. A new type is its record there and its module
here, with no entry in this file."""

from __future__ import annotations

import importlib

from spectui import spec_types
from spectui.drafters.base import Drafter, Needs
from spectui.spec_config import PRIORITY

__all__ = ["Needs", "TYPES", "build", "drafter_class"]

TYPES = PRIORITY  # the types that draft: every one the table names a drafter for


def drafter_class(spec_type: str) -> type[Drafter]:
    """The class the table names for `spec_type` ("module.Class" under spectui/drafters)."""
    module, name = spec_types.get(spec_type).drafter.rsplit(".", 1)
    return getattr(importlib.import_module(f"spectui.drafters.{module}"), name)


def build(spec_type: str, needs: Needs) -> Drafter:
    """A new drafter of `spec_type`; the caller has checked that the type is available."""
    d = drafter_class(spec_type).build(needs)
    d.spec_type = spec_type
    return d
