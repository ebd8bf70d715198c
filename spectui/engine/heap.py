"""A turn runs with the heap frozen, so full collections skip what existed before it (docs/architecture.md)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

COLLECT_EVERY = 10
_turns = 0


@contextmanager
def frozen() -> Iterator[None]:
    global _turns
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        _turns += 1
        if _turns % COLLECT_EVERY == 0:
            gc.collect()
