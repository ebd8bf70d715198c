"""A module's `_private` names are its own: no spectui module takes one from another, by
import or as an attribute of a module it imports (ast), so what a sibling needs is public API."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "spectui"


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(source: str, modules: set[str]) -> list[str]:
    """The private names `source` takes from the spectui modules (dotted names in `modules`)."""
    tree = ast.parse(source)
    bound: set[str] = set()  # local names of the spectui modules it imports
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("spectui")):
            for a in node.names:
                if f"{node.module}.{a.name}" in modules:
                    bound.add(a.asname or a.name)
                elif private(a.name):
                    found.append(f"{node.module}.{a.name}")
        elif isinstance(node, ast.Import):
            bound.update(a.asname for a in node.names if a.asname and a.name.startswith("spectui"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in bound and private(node.attr):
                found.append(f"{node.value.id}.{node.attr}")
    return found


def test_no_module_takes_a_private_name_from_another():
    files = sorted(PACKAGE.rglob("*.py"))
    modules = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts) for p in files}
    offending = {}
    for path in files:
        if found := private_uses(path.read_text(encoding="utf-8"), modules):
            offending[str(path.relative_to(PACKAGE.parent))] = found
    assert offending == {}


def test_the_rule_finds_a_private_import_and_a_private_attribute():
    modules = {"spectui.store.chat_store", "spectui.store"}
    source = (
        "from spectui.store.chat_store import _db, db_path\n"
        "from spectui.store import chat_store\n"
        "import spectui.store.chat_store as cs\n"
        "from __future__ import annotations\n"
        "chat_store._errors('x'); cs._lock; chat_store.query('x', 'y'); self._own; chat_store.__name__\n"
    )
    assert sorted(private_uses(source, modules)) == ["chat_store._errors", "cs._lock", "spectui.store.chat_store._db"]
