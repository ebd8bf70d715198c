"""Every stored answer's configuration and statistics, read for `spectui plan`'s measured acceptance."""

from __future__ import annotations

import json

from spectui.store import chat_store, columns
from spectui.store.chat_types import AnswerConfig
from spectui.store.columns import CONFIG_COLUMNS


def answer_stats() -> list[tuple[dict, AnswerConfig, dict]]:
    """(the chat's setup, the configuration the answer was generated with, its statistics) of
    every stored answer with both, for `spectui plan`'s measured acceptance; none without a
    database (plan never creates one)."""
    if not chat_store.db_path().is_file():
        return []
    rows = chat_store.query(
        "read the answers' statistics",
        f"SELECT c.setup, m.stats, {', '.join('m.' + name for name in CONFIG_COLUMNS)} "
        "FROM messages m JOIN chats c ON c.id = m.chat "
        "WHERE m.role = 'assistant' AND m.stats != '{}' AND m.spec_types IS NOT NULL",
    )
    out = []
    for setup, stats, *config in rows:
        answer = columns.config(dict(zip(CONFIG_COLUMNS, config, strict=True)), [])
        if answer is None:  # a configuration that cannot be read: the answer counts for no type
            continue
        try:
            out.append((json.loads(setup), answer, json.loads(stats)))
        except ValueError:
            continue  # a row another version wrote: it only lacks its statistics here
    return out
