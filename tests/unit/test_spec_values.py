"""Spec types are values (spec_types.Spec), not strings: outside the table no code compares a
type, a configuration or a label with a type's name, splits a label back into types or joins
types but through spec_config's one label function; drafters are referenced by class (ast)."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest

from spectui.spec_types import Spec
from spectui.trace import format as trace_format
from tests.helpers.events import a_round

PACKAGE = Path(__file__).resolve().parents[2] / "spectui"
NAMES = {s.value for s in Spec}
# the same words in another vocabulary, each with what it is there
OTHER_WORDS = {
    ("llama/context.py", "auto"): "--backend-sampling's auto",
    ("bench/report.py", "auto"): "the key of an auto row's pooled rounds",
    ("bench/results.py", "auto"): "the key of an auto row's pooled rounds",
}
SPECISH = ("type", "config", "label", "spec")  # a name that holds spec types, a configuration or a label
# the label and the parser: the one place a label is joined and "--spec-type" text split
JOIN_SPLIT = {("spec_config.py", f) for f in ("types_label", "parse_types", "server_types")}


def _strings(node: ast.expr) -> list[str]:
    """The string constants a comparison's side is or lists."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [n.value for n in items if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _functions(tree: ast.AST) -> dict[int, str]:
    """The enclosing function of each node, by id."""
    owner = {}
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for n in ast.walk(f):
                owner.setdefault(id(n), f.name)  # the outermost function
    return owner


def offences(source: str, where: str) -> list[str]:
    """The string comparisons, label joins and splits and importlib uses of one module."""
    tree = ast.parse(source)
    owner = _functions(tree)
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare):
            words = [w for side in (n.left, *n.comparators) for w in _strings(side) if w in NAMES]
            found += [f"{where}:{n.lineno} compares {w!r}" for w in words if (where, w) not in OTHER_WORDS]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.args:
            f = n.func
            joined = f.attr == "join" and _strings(f.value) == [","]
            split = f.attr == "split" and _strings(n.args[0]) == [","]
            text = ast.unparse(n.args[0] if joined else f.value).lower()
            if (joined or split) and any(w in text for w in SPECISH) and (where, owner.get(id(n))) not in JOIN_SPLIT:
                found.append(f"{where}:{n.lineno} {f.attr}s spec types")
        elif isinstance(n, (ast.Import, ast.ImportFrom)) and where in ("spec_types.py", "drafters/registry.py"):
            modules = [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or ""]
            found += [f"{where}:{n.lineno} imports importlib" for m in modules if m.split(".")[0] == "importlib"]
    return sorted(found, key=lambda o: int(o.split(":")[1].split()[0]))


def test_no_spec_type_is_a_string_outside_the_table():
    found = [
        o
        for p in sorted(PACKAGE.rglob("*.py"))
        if (where := p.relative_to(PACKAGE).as_posix()) != "spec_types.py"
        for o in offences(p.read_text(encoding="utf-8"), where)
    ]
    assert found == []


def test_the_table_and_the_registry_import_no_drafter_by_name():
    for where in ("spec_types.py", "drafters/registry.py"):
        assert offences((PACKAGE / where).read_text(encoding="utf-8"), where) == []


def test_the_rule_finds_each_kind_of_offence():
    source = (
        "if spec.label == 'none': pass\n"
        "x = r['config'] != 'draft-simple'\n"
        "y = any(c in ('', 'none') for c in rounds)\n"
        "types = event.configured.split(',')\n"
        "label = ','.join(spec_types)\n"
        "import importlib\n"
        "ok = urls.split(',') + [mode == 'auto', ','.join(choices)]\n"
    )
    assert offences(source, "drafters/registry.py") == [
        "drafters/registry.py:1 compares 'none'",
        "drafters/registry.py:2 compares 'draft-simple'",
        "drafters/registry.py:3 compares 'none'",
        "drafters/registry.py:4 splits spec types",
        "drafters/registry.py:5 joins spec types",
        "drafters/registry.py:6 imports importlib",
        "drafters/registry.py:7 compares 'auto'",
    ]
    assert offences("ok = mode == 'auto'", "llama/context.py") == []


def test_a_rounds_types_are_written_as_spec_type_text_and_read_back_as_values():
    """A trace keeps the text it always held ("ngram-mod,draft-simple"); reading makes values
    of it, once, and refuses a name that is no type."""
    r = a_round(3, 1, by="ngram-mod")
    r = replace(r, configured=(Spec.NGRAM_MOD, Spec.DRAFT_SIMPLE))
    record = json.loads(json.dumps(trace_format.event_record(r)))
    assert record["configured"] == "ngram-mod,draft-simple"
    back = trace_format.event_from_record(record)
    assert back == r and all(type(t) is Spec for t in back.configured)
    assert trace_format.event_from_record({**record, "configured": ""}).configured == ()  # a trace from before
    with pytest.raises(ValueError, match="ngram-echo"):
        trace_format.event_from_record({**record, "configured": "ngram-echo"})
    with pytest.raises(ValueError, match="must be text"):  # hypothesis found a damaged trace with [0]
        trace_format.event_from_record({**record, "configured": [0]})
