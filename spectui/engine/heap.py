"""A turn runs with the heap frozen, so Python's full collections skip what existed before it.

A full collection walks every object the process holds: in the chat about 93k (the app,
its transcript, the models' Python side), 78-92 ms on 2 cores, holding the GIL that the
generation thread needs between llama.cpp calls. Measured in the chat on SmolLM2: every
other answer had one, and it ran at 44-59 tok/s against 70-77 for the rest.
`gc.freeze()` moves those objects to a generation that collections skip; what the turn
creates is still collected as usual, and `gc.unfreeze()` at its end hands the rest back
to the oldest generation, collected between turns.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def frozen() -> Iterator[None]:
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
