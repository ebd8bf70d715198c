"""Three first prompts an empty chat offers, one key each: one whose drafts are accepted in
long runs (whether that is faster here: chat/outlook.py), one where its acceptance shows, and
one where it loses, each with what to watch for."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Starter:
    key: str  # typed in the empty message box of an empty chat
    title: str
    watch: str  # what the person should look at while it answers
    prompt: str
    cites: bool = False  # its watch adds the plan's prediction for this machine (chat/outlook.py)


STARTERS = (
    Starter(
        "1",
        "a code rewrite",
        "long runs of accepted drafts, as the answer repeats your code",
        "Rename the function area to rectangle_area and add type hints. Show the whole code:\n"
        "```python\ndef area(width, height):\n    return width * height\n\n\n"
        "print(area(3, 4))\nprint(area(5, 6))\n```",
        cites=True,
    ),
    Starter(
        "2",
        "a question",
        "how often drafts are accepted, per draft position, in the panel",
        "What is the difference between a list and a tuple in Python? Answer in three short points.",
    ),
    Starter(
        "3",
        "an open story",
        "more rejected drafts: little is predictable, so speculation can be slower than none",
        "Write a short, surprising story about a lighthouse keeper and a cat.",
    ),
)
BY_KEY = {s.key: s for s in STARTERS}
PROMPTS = [s.prompt for s in STARTERS]  # what `spectui plan` calibrates on, and its cache key names
