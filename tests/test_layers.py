"""The layering rules of the README's layout section, read from the imports (ast).

Every import counts, also one inside a function: a deferred import still ties the layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "spectui"
UI_LIBRARIES = ("textual", "rich", "argparse", "platformdirs")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path) -> set[str]:
    """Every module `path` imports: spectui modules resolved to the module (a name imported
    from a package that is itself a module counts as that module), others by their top name."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in MODULES)
    return {name if name.startswith("spectui") else name.split(".")[0] for name in found}


GRAPH = {name: {m for m in imports(path) if m in MODULES} for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def in_layer(module: str, layer: str) -> bool:
    return module == f"spectui.{layer}" or module.startswith(f"spectui.{layer}.")


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_inside_spectui():
    assert cycles(GRAPH) == []


@pytest.mark.parametrize("layer", ["engine", "drafters", "trace"])
def test_engine_and_drafters_know_no_ui(layer):
    offending = {name: sorted(imports(path) & set(UI_LIBRARIES))
                 for name, path in MODULES.items() if in_layer(name, layer)}
    assert {k: v for k, v in offending.items() if v} == {}


def test_only_cli_imports_command_modules():
    offending = {name: sorted(m for m in deps if in_layer(m, "cli"))
                 for name, deps in GRAPH.items() if not in_layer(name, "cli") and name != "spectui.__main__"}
    assert {k: v for k, v in offending.items() if v} == {}


@pytest.mark.parametrize("layer", ["bench", "trace"])
def test_bench_and_trace_import_engine_and_config_only(layer):
    allowed = ("engine", "config", layer, "drafters")
    offending = {name: sorted(m for m in deps if not any(in_layer(m, a) for a in allowed)
                              and m not in ("spectui", "spectui.errors"))
                 for name, deps in GRAPH.items() if in_layer(name, layer)}
    assert {k: v for k, v in offending.items() if v} == {}


def test_engine_and_config_never_import_the_ui_or_the_commands():
    for name, deps in GRAPH.items():
        if any(in_layer(name, layer) for layer in ("engine", "drafters", "config")):
            assert not [m for m in deps if in_layer(m, "tui") or in_layer(m, "cli") or in_layer(m, "bench")], name
