"""engine/heap.py between turns: every COLLECT_EVERY turns the garbage a chat left behind is
collected as a turn ends (Python's own thresholds rarely got to it: a long chat's RSS grew)."""

from __future__ import annotations

import gc
import weakref

from spectui.engine import heap


class Node:
    pass


def garbage_cycle() -> weakref.ref:
    node = Node()
    node.self = node  # type: ignore[attr-defined]
    return weakref.ref(node)


def test_every_tenth_turn_ends_with_a_full_collection(monkeypatch):
    monkeypatch.setattr(heap, "_turns", 0)
    gc.disable()  # only the turns' own collection may free it
    try:
        ref = garbage_cycle()
        for _ in range(heap.COLLECT_EVERY - 1):
            with heap.frozen():
                pass
        assert ref() is not None  # nine turns: left for later
        with heap.frozen():
            assert ref() is not None  # not during the turn
        assert ref() is None  # the tenth turn's end collects it
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()
