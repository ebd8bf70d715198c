"""The prompts several test modules send: a short rewrite for `spectui run` and a server, and a
longer one as chat messages, whose answer repeats it so every n-gram type finds drafts."""

from __future__ import annotations

PROMPT = "Rename merge to merge_sorted and show the code: def merge(a, b):\n    return sorted(a + b)\n"

CODE = """def merge(a, b):
    result = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            result.append(a[i])
            i += 1
        else:
            result.append(b[j])
            j += 1
    result.extend(a[i:])
    result.extend(b[j:])
    return result
"""
REWRITE = [
    {
        "role": "user",
        "content": "Rename the function merge to merge_sorted in this code and "
        "show the whole code:\n```python\n" + CODE + "```",
    }
]
