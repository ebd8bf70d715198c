"""The layering rules of docs/architecture.md, read from the imports (ast).

Every import counts, also one inside a function: a deferred import still ties the layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "spectui"
UI_LIBRARIES = ("textual", "rich", "argparse", "platformdirs")
# Top to bottom: a module imports its own layer and the layers below it, never one above it
# or beside it (bench, trace and plan share a rank). llama is the ground floor, the only one that
# talks to llama.cpp.
LAYERS = (
    ("cli",),
    ("tui",),
    ("chat",),
    ("bench", "trace", "plan"),
    ("launch",),
    ("store",),
    ("config",),
    ("engine",),
    ("drafters",),
    ("llama",),
)
RANK = {layer: rank for rank, layers in enumerate(LAYERS) for layer in layers}
# errors, bounded (the capped readers), spec_types (the table of spec types), options (the
# record each setting is declared with), spec_config (SpecConfig, the speculation's domain
# type) and words (how counts read): every layer's;
# __main__ runs cli
UNLAYERED = (
    "spectui",
    "spectui.errors",
    "spectui.bounded",
    "spectui.spec_types",
    "spectui.options",
    "spectui.spec_config",
    "spectui.words",
    "spectui.__main__",
)
# (importer, imported): layers that, though in order, must not skip what stands between them
SKIPS = (("tui", "bench"),)  # the TUI gets measuring and trace environments through the chat and launch


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


IMPORTS = {name: imports(path) for name, path in MODULES.items()}
GRAPH = {name: {m for m in deps if m in MODULES} for name, deps in IMPORTS.items()}


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


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else None


def against_the_layers(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each module's imports of a layer above its own or beside it."""
    out = {}
    for name, deps in graph.items():
        own = layer_of(name)
        bad = sorted(m for m in deps if own and (layer := layer_of(m)) and layer != own and RANK[layer] <= RANK[own])
        if bad:
            out[name] = bad
    return out


def skipping(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each module's imports that SKIPS forbids."""
    out = {}
    for name, deps in graph.items():
        bad = sorted(m for m in deps if (layer_of(name), layer_of(m)) in SKIPS)
        if bad:
            out[name] = bad
    return out


def importers_outside(imports_of: dict[str, set[str]], library: str, layer: str) -> list[str]:
    """The modules outside `layer` that import `library`."""
    return sorted(name for name, deps in imports_of.items() if library in deps and not in_layer(name, layer))


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_inside_spectui():
    assert cycles(GRAPH) == []


def ui_importers(imports_of: dict[str, set[str]], layer: str, allowed: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """The modules of `layer` that import a UI library, other than the `allowed` ones."""
    ui = set(UI_LIBRARIES) - set(allowed)
    offending = {name: sorted(deps & ui) for name, deps in imports_of.items() if in_layer(name, layer)}
    return {k: v for k, v in offending.items() if v}


@pytest.mark.parametrize("layer", ["llama", "drafters", "engine", "store", "launch", "trace", "plan", "bench", "chat"])
def test_the_core_layers_know_no_ui(layer):
    assert ui_importers(IMPORTS, layer) == {}


def test_the_users_disk_knows_no_ui():
    """config/ reads and writes plain data: Textual themes, the install bar and the flags'
    parser are made above it (platformdirs only finds its folders)."""
    assert ui_importers(IMPORTS, "config", allowed=("platformdirs",)) == {}
    assert ui_importers(IMPORTS, "spec_config") == {}


def test_the_ui_rule_finds_textual_in_config():
    imports_of = {"spectui.config.themes": {"textual", "tomllib"}, "spectui.config.paths": {"platformdirs"}}
    assert ui_importers(imports_of, "config", allowed=("platformdirs",)) == {"spectui.config.themes": ["textual"]}


def test_every_package_has_a_layer():
    assert [name for name in MODULES if layer_of(name) is None and name not in UNLAYERED] == []


def test_imports_run_down_the_layers():
    """Among them: nothing in llama imports the drafters or the engine, the drafters never
    import the engine, and only cli imports a command module."""
    assert against_the_layers(GRAPH) == {}


def test_the_layer_rule_finds_an_import_up_or_aside():
    graph = {
        "spectui.llama.model": {"spectui.drafters.base", "spectui.errors"},
        "spectui.drafters.draft_model": {"spectui.engine.session", "spectui.llama.context"},
        "spectui.bench.protocol": {"spectui.trace.format"},
        "spectui.config.setup": {"spectui.launch.opening"},
        "spectui.engine.session": {"spectui.drafters.base", "spectui.llama.model", "spectui.errors"},
    }
    assert against_the_layers(graph) == {
        "spectui.llama.model": ["spectui.drafters.base"],
        "spectui.drafters.draft_model": ["spectui.engine.session"],
        "spectui.bench.protocol": ["spectui.trace.format"],
        "spectui.config.setup": ["spectui.launch.opening"],
    }


def test_the_tui_never_imports_the_bench():
    assert skipping(GRAPH) == {}


def test_the_skip_rule_finds_the_tui_importing_the_bench():
    graph = {
        "spectui.tui.app": {"spectui.bench.peak_memory", "spectui.chat.controller"},
        "spectui.cli.bench": {"spectui.bench.peak_memory"},
    }
    assert skipping(graph) == {"spectui.tui.app": ["spectui.bench.peak_memory"]}


def importers_of(graph: dict[str, set[str]], importer: str, imported: str) -> dict[str, list[str]]:
    """The modules of layer `importer` that import a module of layer `imported`."""
    out = {n: sorted(m for m in deps if in_layer(m, imported)) for n, deps in graph.items() if in_layer(n, importer)}
    return {k: v for k, v in out.items() if v}


def test_the_tui_never_imports_the_llama_floor():
    """Screens get what they need of llama.cpp through the engine and launch; SpecConfig
    lives in spectui.spec_config."""
    assert importers_of(GRAPH, "tui", "llama") == {}


def test_the_tui_llama_rule_finds_an_import():
    graph = {
        "spectui.tui.messages": {"spectui.llama.model", "spectui.spec_config"},
        "spectui.chat.ab": {"spectui.llama.model"},
    }
    assert importers_of(graph, "tui", "llama") == {"spectui.tui.messages": ["spectui.llama.model"]}


def test_only_the_llama_layer_imports_llama_cpp():
    assert importers_outside(IMPORTS, "llama_cpp", "llama") == []


def test_the_llama_cpp_rule_finds_an_import_elsewhere():
    imports_of = {
        "spectui.llama.context": {"llama_cpp", "numpy"},
        "spectui.launch.environment": {"llama_cpp", "os"},
        "spectui.errors": set(),
    }
    assert importers_outside(imports_of, "llama_cpp", "llama") == ["spectui.launch.environment"]


def test_modules_stay_small():
    """A module past the cap holds more than one job: 400 lines, 300 for a screen or widget."""
    too_long = {
        name: n
        for name, path in MODULES.items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > (300 if in_layer(name, "tui") else 400)
    }
    assert too_long == {}
