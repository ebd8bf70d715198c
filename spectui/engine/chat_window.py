"""Which messages of a chat its prompt holds, once the whole chat no longer fits the context.

The oldest exchanges are left out, as llama.cpp's context shift discards the oldest half:
when the prompt passes three quarters of the context, it is cut to at most half, and the cut
then stays where it is for as many turns as fit, so the KV cache keeps its prefix and a turn's
cost stays bounded by the context, not by the chat's length (docs/storage.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

FULL = 3 / 4  # a prompt past this share of the context is cut...
KEPT = 1 / 2  # ...to at most this share, leaving room for answers before the next cut
CHARS_PER_TOKEN_MAX = 32  # no tokenizer packs more text in a token: more characters cannot fit


class ChatWindow:
    """The cut of one chat, kept between its turns (the engine session's, per conversation)."""

    def __init__(self) -> None:
        self.left_out = 0  # messages after the system message that the prompt no longer holds
        self._cut_at: int | None = None  # hash of the messages left out: the cut holds for that chat only

    def prompt(self, messages: Sequence[dict], tokenize: Callable[[list[dict]], list[int]], n_ctx: int) -> list[int]:
        """The prompt's tokens: every message that fits, newest kept, the system message always."""
        head = list(messages[:1]) if messages and messages[0].get("role") == "system" else []
        rest = list(messages[len(head) :])
        if self.left_out and (self.left_out >= len(rest) or _key(rest[: self.left_out]) != self._cut_at):
            self.left_out = 0  # another chat, or this one edited before its cut
        if _size(rest[self.left_out :]) <= CHARS_PER_TOKEN_MAX * n_ctx:
            tokens = tokenize(head + rest[self.left_out :])
            if len(tokens) <= FULL * n_ctx or len(rest) - self.left_out <= 1:
                return tokens
        self.left_out, tokens = _cut(head, rest, tokenize, int(KEPT * n_ctx))
        self._cut_at = _key(rest[: self.left_out])
        return tokens


def _key(messages: Sequence[dict]) -> int:
    return hash(tuple((m.get("role"), m.get("content")) for m in messages))


def _size(messages: Sequence[dict]) -> int:
    return sum(len(m.get("content", "")) for m in messages)


def _cut(
    head: list[dict], rest: list[dict], tokenize: Callable[[list[dict]], list[int]], room: int
) -> tuple[int, list[int]]:
    """(left out, tokens) for the most recent messages, from a user's message on, that fit in
    `room` tokens; the last message alone when nothing more fits. The kept part grows from the
    end, so only about a context's worth of text is tokenized, whatever the chat's length."""

    def start(kept: int) -> int:  # a prompt opens on the user's side of an exchange
        i = max(len(rest) - kept, 0)
        while i < len(rest) - 1 and rest[i].get("role") != "user":
            i += 1
        return i

    def fitting(kept: int) -> list[int] | None:
        tokens = tokenize(head + rest[start(kept) :])
        return tokens if len(tokens) <= room else None

    best = (len(rest) - 1, tokenize(head + rest[-1:]))
    low, high = 1, 2
    while (tokens := fitting(high)) is not None:  # double what is kept while it fits...
        best = (start(high), tokens)
        if best[0] == 0:
            return best
        low, high = high, 2 * high
    while high - low > 1:  # ...then halve the step between what fits and what does not
        mid = (low + high) // 2
        if (tokens := fitting(mid)) is not None:
            best, low = (start(mid), tokens), mid
        else:
            high = mid
    return best
