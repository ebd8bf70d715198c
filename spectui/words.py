"""How counts read in every layer's text: "1 token", "2 tokens", never "1 tokens"."""

from __future__ import annotations


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """`n` and the noun agreeing with it; `nouns`: the plural where it is not noun + "s"."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"
