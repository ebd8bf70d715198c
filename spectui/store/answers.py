"""Every stored answer's statistics, read for `spectui plan`'s measured acceptance."""

from __future__ import annotations

import json

from spectui.store.chat_store import _db, _errors, db_path  # the store's own connection and error wording


def answer_stats() -> list[tuple[dict, str, dict]]:
    """(the chat's setup, the answer's configuration label, its statistics) of every stored
    answer with statistics, for `spectui plan`'s measured acceptance; none without a database
    (plan never creates one)."""
    if not db_path().is_file():
        return []
    with _errors("read the answers' statistics"):
        rows = (
            _db()
            .execute(
                "SELECT c.setup, m.config, m.stats FROM messages m JOIN chats c ON c.id = m.chat "
                "WHERE m.role = 'assistant' AND m.stats != '{}'"
            )
            .fetchall()
        )
    out = []
    for setup, config, stats in rows:
        try:
            out.append((json.loads(setup), config, json.loads(stats)))
        except ValueError:
            continue  # a row another version wrote: it only lacks its statistics here
    return out
