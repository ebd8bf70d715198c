"""A turn runs with the heap frozen, so Python's full collections skip what existed before it.

A full collection walks every object the process holds (in the chat: the app, its
transcript, the models' Python side), holding the GIL that the generation thread needs
between llama.cpp calls, long enough that an answer it fell in ran visibly slower
(docs/performance.md).
`gc.freeze()` moves those objects to a generation that collections skip; what the turn
creates is still collected as usual, and `gc.unfreeze()` at its end hands the rest back
to the oldest generation. Every COLLECT_EVERY turns a full collection runs as the turn
ends: left to Python's thresholds it rarely came, and a long chat's garbage cycles piled up
(RSS +46 MiB over 150 turns); one costs ~100 ms in the chat here, so not every turn
(docs/storage.md).
"""

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
