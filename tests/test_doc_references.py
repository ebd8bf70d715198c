"""Every module and symbol that README.md and docs/*.md name in code spans exists: a document
that cites a moved or renamed module misleads the reader who follows it."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SPAN = re.compile(r"`([^`\n]+)`")
FILE = re.compile(r"^[\w./-]+\.(?:py|sh|toml|tcss|jsonl|json|db|md|c|cpp)$")
SYMBOL = re.compile(r"^([\w/]+)\.(\w+)(?:\(\))?$")
ROOTS = ("", "spectui/", "tests/", "benchmarks/")
# the user's database and a column of its table, and llama.cpp's converter: not this repository's
ELSEWHERE = {"chats.db", "messages.content", "convert_hf_to_gguf.py"}
LLAMA_CPP = ("tools/", "common/", "examples/", "ggml/", "src/", "include/")  # the vendored llama.cpp's tree


@cache
def _files() -> dict[str, list[Path]]:
    """Every tracked-looking file by its name, for a doc that names one without its folder."""
    out: dict[str, list[Path]] = {}
    for folder in ("spectui", "tests", "benchmarks", ".ci", "presets", "themes"):
        for p in (REPO / folder).rglob("*"):
            if p.is_file() and "build" not in p.parts:
                out.setdefault(p.name, []).append(p)
    return out


def _file_exists(name: str) -> bool:
    if "/" not in name:
        return name in _files() or (REPO / name).is_file()
    return any((REPO / root / name).is_file() for root in ROOTS) or any(
        str(p).endswith("/" + name) for p in _files().get(Path(name).name, [])
    )


@cache
def _names(path: Path) -> frozenset[str]:
    """The names a module defines at its top level or in its classes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)


def _modules(stem: str) -> list[Path]:
    """The spectui modules a doc may mean by `stem` ("plan/curve" or "curve")."""
    if "/" in stem:
        return [p for p in (REPO / "spectui" / f"{stem}.py", REPO / f"{stem}.py") if p.is_file()]
    return [p for p in _files().get(f"{stem}.py", []) if "spectui" in p.parts]


def references() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        for span in SPAN.findall(doc.read_text(encoding="utf-8")):
            span = span.strip()
            if span in ELSEWHERE or span.startswith(LLAMA_CPP):
                continue
            if FILE.match(span) or SYMBOL.match(span):
                out.append((doc.name, span))
    return out


def missing(span: str) -> str | None:
    """Why `span` names nothing that exists, or None."""
    if FILE.match(span):
        return None if _file_exists(span) else "no such file"
    m = SYMBOL.match(span)
    assert m
    stem, name = m.groups()
    modules = _modules(stem)
    if not modules:
        return None if "/" not in stem else "no such module"  # `obj.attr` prose, not a module
    return None if any(name in _names(p) for p in modules) else f"{name} is not defined in {stem}"


def test_the_documents_name_real_modules():
    refs = references()
    assert len(refs) > 50  # the scan sees the documents' code spans
    wrong = [f"{doc}: `{span}`: {why}" for doc, span in refs if (why := missing(span))]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    "span, found",
    [
        ("spectui/plan/curve.py", True),
        ("plan/curve.py", True),
        ("plan/loaded_pair.cached_for", True),
        ("loaded_pair.cached_for", True),
        ("plan/curve.cached_for", False),
        ("plan/curve.no_such_thing", False),
        ("config/chat_store.answer_stats", False),
        ("spectui/plan/gone.py", False),
    ],
)
def test_a_missing_module_or_symbol_is_found(span, found):
    assert (missing(span) is None) is found
