"""The spec-type table (spectui/spec_types.py) walked against the registry, the drafters, the
GGUF rules and the plan; and a throwaway n-gram type, a member and a record of the table, its
drafter module and its line in the registry, seen by every part that lists, builds or prices
types. No model."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from spectui import spec_types
from spectui.config import paths
from spectui.drafters import registry
from spectui.drafters.base import NgramDrafter
from spectui.drafters.draft_model import DraftModel
from spectui.drafters.hidden import HiddenStateDrafter
from spectui.llama import draft_fit
from spectui.llama.sampling import SamplingParams
from spectui.plan.concurrency_report import NONE_MARK
from spectui.plan.report import MARKS
from spectui.spec_config import ALL_TYPES, DRAFT_FILE_TYPES, NGRAM_TYPES, PRIORITY, SpecConfig, parse_types, unpriced

PACKAGE = Path(spec_types.__file__).parent


def test_the_table_is_llama_cpps_name_map_in_its_priority():
    """llama.cpp's COMMON_SPECULATIVE_TYPE names, `none` first, then the order it asks them in."""
    assert [t.name for t in spec_types.TYPES] == ["none", *PRIORITY]
    assert PRIORITY == (
        "ngram-simple",
        "ngram-map-k",
        "ngram-map-k4v",
        "ngram-mod",
        "ngram-cache",
        "draft-simple",
        "draft-eagle3",
        "draft-mtp",
        "draft-dflash",
        "draft-dspark",
    )
    assert len({t.name for t in spec_types.TYPES}) == len(spec_types.TYPES)
    assert ALL_TYPES == ("none", *PRIORITY, spec_types.AUTO)
    assert parse_types("draft-simple,ngram-mod") == ("ngram-mod", "draft-simple")
    for name in (spec_types.SPEC_DEFAULT, spec_types.AUTO_NGRAM, spec_types.DRAFT_SIMPLE, spec_types.DRAFT_EAGLE3):
        assert spec_types.get(name).name == name


@pytest.mark.parametrize("spec_type", PRIORITY)
def test_each_type_has_the_drafter_its_family_says(spec_type):
    t = spec_types.get(spec_type)
    cls = registry.drafter_class(spec_type)
    family = {
        spec_types.NGRAM: NgramDrafter,
        spec_types.DRAFT_MODEL: DraftModel,
        spec_types.HIDDEN_STATE: HiddenStateDrafter,
    }[t.family]
    assert issubclass(cls, family)
    assert spec_type in registry.TYPES
    if t.family == spec_types.NGRAM:  # buildable without a model: the plan replays them
        d = registry.build(spec_type, registry.Needs(SpecConfig(), SamplingParams(), None))
        assert type(d) is cls and d.spec_type == spec_type


def test_every_n_gram_type_has_its_own_mark_in_the_plans_picture():
    """A draft file's lines are marked by n-max (digits) and none by NONE_MARK: an n-gram's mark
    is one other character, unique."""
    assert set(MARKS) == set(NGRAM_TYPES)
    marks = list(MARKS.values())
    assert len(set(marks)) == len(marks)
    assert all(len(m) == 1 and not m.isdigit() and m != NONE_MARK for m in marks)


def _header(arch: str, tensors: frozenset[str] = frozenset()) -> draft_fit.Header:
    return draft_fit.Header(Path("d.gguf"), arch, 64, 4, 0, (1,), None, None, 0, tensors)


@pytest.mark.parametrize("t", [t for t in spec_types.TYPES if t.head_arch], ids=lambda t: t.name)
def test_a_heads_gguf_architecture_names_its_type(t):
    tensors = frozenset({t.head_tensor} - {""})
    assert _header(t.head_arch, tensors).draft_type == t.name


def test_any_other_draft_file_is_a_plain_draft_model():
    assert _header("qwen2").draft_type == spec_types.DRAFT_SIMPLE


def test_what_the_plan_can_price():
    assert unpriced(("ngram-mod",), False) is None
    assert unpriced(("draft-simple",), True) is None and unpriced(("draft-eagle3",), True) is None
    why = unpriced(("draft-simple",), False)
    assert why and why.reason == "no measured step of draft-simple's draft"
    why = unpriced(("draft-mtp",), True)  # the curve does not time the target's NextN layer
    assert why and "MTP" in why.reason and why.short == "this type not timed"
    assert unpriced(("none",), True) and unpriced(("auto",), True) and unpriced(("ngram-mod", "draft-simple"), True)
    assert set(DRAFT_FILE_TYPES) == {"draft-simple", "draft-eagle3", "draft-dflash", "draft-dspark"}


def _constants(path: Path):
    """Every string constant of a module but its docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            yield n.lineno, n.value


def test_a_drafting_types_name_is_a_literal_in_the_table_only():
    names = set(PRIORITY)
    found = [
        f"{p.relative_to(PACKAGE.parent)}:{line} {value}"
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.name != "spec_types.py" or p.parent != PACKAGE
        for line, value in _constants(p)
        if value in names
    ]
    assert found == []


# the throwaway type: what a new type is, each piece added at its place in a copy of the package
ADDED = {
    "spec_types.py": [
        ('    NGRAM_CACHE = "ngram-cache"\n', '    NGRAM_ECHO = "ngram-echo"\n'),
        ('    SpecType(Spec.NGRAM_CACHE, NGRAM, mark="c"),\n', '    SpecType(Spec.NGRAM_ECHO, NGRAM, mark="e"),\n'),
    ],
    "drafters/registry.py": [
        (
            "from spectui.drafters.ngram_cache import NgramCache\n",
            "from spectui.drafters.ngram_echo import NgramEcho\n",
        ),
        ("    Spec.NGRAM_CACHE: NgramCache,\n", "    Spec.NGRAM_ECHO: NgramEcho,\n"),
    ],
}
# its drafter module: drafts the token that followed the last token's latest earlier copy
ECHO = textwrap.dedent(
    """
    from spectui.drafters.base import DraftResult, NgramDrafter

    class NgramEcho(NgramDrafter):
        def draft(self, tokens, n_max, inspect=False):
            t = list(tokens)
            hits = [i for i in range(len(t) - 1) if t[i] == t[-1]]
            return DraftResult([t[hits[-1] + 1]] if hits and n_max else [])
    """
)
THROWAWAY = textwrap.dedent(
    """
    import contextlib, io

    from spectui.bench.protocol import Config
    from spectui.cli import bench_curve
    from spectui.cli.main import build_parser
    from spectui.drafters import registry
    from spectui.plan.acceptance import replay_ngram
    from spectui.plan.curve import Curve, Point
    from spectui.plan.report import Plan, render
    from spectui.spec_config import SpecConfig, parse_types
    from spectui.spec_types import Spec

    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), contextlib.suppress(SystemExit):
        build_parser().parse_args(["run", "--help"])
    assert "ngram-echo" in help_text.getvalue(), "--spec-type's help"
    echo = Spec.NGRAM_ECHO
    assert parse_types("draft-simple,ngram-echo") == (echo, Spec.DRAFT_SIMPLE), "its priority"

    spec = SpecConfig(types=(echo,))
    assert echo in registry.TYPES, "the registry"
    assert registry.build(echo, registry.Needs(spec, None, None)).spec_type is echo

    answer = [5, 6, 7, 5, 6, 7, 5, 6, 7, 5, 6, 7]
    d = replay_ngram(echo, spec, [([1, 2, 3], answer)])
    assert d.share > 0, "the plan replays it"
    curve = Curve({64: (Point(1, 0.1, 0.0), Point(2, 0.1, 0.0))}, {}, 0.0, 0.0)
    text = "\\n".join(render(Plan(curve, 64, None, (), {echo: d}, {echo: "replayed"}), []))
    assert any(line.startswith("ngram-echo") for line in text.splitlines()), "the plan's table"
    assert "e ngram-echo" in text and "|e" in text.replace(" ", ""), "the plan's picture and its legend"

    assert bench_curve.unpriced(Config("ngram-echo", spec), draft_step=False) is None, "the bench prices it"
    print("SEEN")
    """
)


def test_a_new_n_gram_type_is_a_member_a_record_a_drafter_module_and_its_line_in_the_registry(tmp_path):
    """The issue's promise: a throwaway n-gram type, added to a copy of the package as a member
    and a record of the table, a drafter module and its line in the registry, is listed by
    --spec-type's help, built by the registry, predicted in the plan's table and picture, and
    priced by the bench."""
    copy = tmp_path / "spectui"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for kind in ("presets", "themes"):  # beside the copy, as in a checkout: an installed copy's are not on its path
        shutil.copytree(str(paths.shipped_dir(kind)), tmp_path / kind)
    for name, lines in ADDED.items():
        path = copy / name
        text = path.read_text(encoding="utf-8")
        for after, line in lines:
            assert text.count(after) == 1, f"{name}: {after!r}"
            text = text.replace(after, after + line)
        path.write_text(text, encoding="utf-8")
    (copy / "drafters" / "ngram_echo.py").write_text(ECHO, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", THROWAWAY], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("SEEN")


def test_every_drafting_type_has_its_drafter_class_and_no_other_type_has_one():
    assert list(registry.DRAFTERS) == list(PRIORITY) == list(registry.TYPES)
