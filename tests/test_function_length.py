"""Functions a reader can hold: none in spectui/ over MAX_LINES lines, its docstring and
nested functions included (a nested function counts in its own right too)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "spectui"
MAX_LINES = 60


def long_functions(root: Path = PACKAGE, most: int = MAX_LINES) -> list[str]:
    """Each function in the modules under `root` longer than `most` lines, as "path:line name (n lines)"."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > most:
                    out.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({n} lines)")
    return out


def test_no_function_is_over_60_lines():
    assert long_functions() == []


def test_a_long_function_is_found(tmp_path):
    """The check itself: a 61-line function is named, a 60-line one is not."""
    body = "".join(f"    x{i} = {i}\n" for i in range(59))
    (tmp_path / "m.py").write_text(f"def ok():\n{body}\n\ndef long():\n{body}    return 1\n", encoding="utf-8")
    assert long_functions(tmp_path) == [f"{tmp_path.name}/m.py:63 long (61 lines)"]
