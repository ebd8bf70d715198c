"""A turn runs with the heap frozen, so Python's full collections skip what existed before it.

A full collection walks every object the process holds (in the chat: the app, its
transcript, the models' Python side), holding the GIL that the generation thread needs
between llama.cpp calls, long enough that an answer it fell in ran visibly slower
(docs/performance.md).
`gc.freeze()` moves those objects to a generation that collections skip; what the turn
creates is still collected as usual, and `gc.unfreeze()` at its end hands the rest back
to the oldest generation, collected between turns.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frozen() -> Iterator[None]:
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
