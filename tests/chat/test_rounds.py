"""f11's rounds in words (chat/rounds.py): a rejected draft and auto's note whole, where the
table's cells cut them."""

from __future__ import annotations

from dataclasses import replace

from spectui.engine.events import Round


def test_a_round_in_words_says_its_rejected_draft_and_note_whole_where_its_cells_cut_them():
    from spectui.chat.rounds import REJECTED_CHARS, cells, detail
    from tests.helpers.events import recorded

    long = "word\n" * 10
    drafted, plain = (
        e for e in recorded("ngram-mod", [([" a"], long, " b"), ([], "", " c")], 20.0) if isinstance(e, Round)
    )
    drafted = replace(drafted, note="auto: ngram-mod k=4, expected 1.30x over what the draft model gives")
    cell = cells(drafted)
    assert len(cell[-2]) == REJECTED_CHARS and cell[-2].endswith("…") and cell[-1] == drafted.note
    said = detail(drafted)
    assert repr(long.replace("\n", "↵")) in said and said.endswith("\n" + drafted.note)
    assert said.startswith("round 1: ngram-mod drafted 2 tokens, 1 accepted, 1 rejected: ")
    assert detail(plain) == "round 2: nothing drafted; 1 token emitted"
