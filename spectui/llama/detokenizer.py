"""Token ids to text as they stream, one token at a time."""

from __future__ import annotations

import codecs
from collections.abc import Sequence

from spectui.llama.model import Model


class Detokenizer:
    """Incremental, UTF-8 safe: a token whose bytes end inside a character yields ""
    and its bytes are held until the character is complete (Korean, emoji)."""

    def __init__(self, model: Model):
        self.model = model
        self._dec = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, token: int) -> str:
        return self._dec.decode(self.model.piece(token))

    def peek(self, tokens: Sequence[int]) -> str:
        """Text these tokens would add, without consuming them (rejected drafts)."""
        state = self._dec.getstate()
        text = "".join(self._dec.decode(self.model.piece(t)) for t in tokens)
        self._dec.setstate(state)
        return text

    def flush(self) -> str:
        return self._dec.decode(b"", final=True)
