"""`pytest -m "not model" tests` is the README's command with its folder typed out: it runs on
workers as the bare command does (tests/conftest.py), where naming a file or a test does not."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import whole_suite

ROOT = Path(__file__).resolve().parent.parent


def named(*args: str, cwd: Path = ROOT) -> SimpleNamespace:
    return SimpleNamespace(
        args_source=pytest.Config.ArgsSource.ARGS,
        args=list(args),
        invocation_params=SimpleNamespace(dir=cwd),
        rootpath=ROOT,
        getini=lambda name: ["tests"],
    )


def test_naming_the_tests_folder_is_the_whole_suite():
    assert whole_suite(SimpleNamespace(args_source=pytest.Config.ArgsSource.TESTPATHS))
    assert whole_suite(named("tests")) and whole_suite(named("tests/")) and whole_suite(named(".", cwd=ROOT / "tests"))
    assert whole_suite(named(str(ROOT / "tests")))
    assert not whole_suite(named("tests/unit"))
    assert not whole_suite(named("tests", "tests/unit/test_stats.py::test_x"))
    assert not whole_suite(named("tests/unit/test_stats.py"))
