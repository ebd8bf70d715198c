"""What every test module shares: the real models from the registry packages (`smol_path`,
`smol`, the `synthetic` checkpoints; no mocks of llama.cpp), the chat app's fixtures for the
Pilot modules (`dirs`: own config and data dirs and a fixed memory line; `setup`: the SmolLM2
preset at -n 48, which a module may override; `fake` and `slow_fake`: the recorded answer
replayed, no model; `session` and `fresh`: a real SmolLM2 session, one per module), and the
guard of the `model` marker (tests/model_guard.py): a test that loads a GGUF with llama.cpp
without `@pytest.mark.model` fails, so `pytest -m "not model"` stays fast; that run spread
over worker processes (pytest-xdist); and the run's settings that keep the Pilot modules
quick (Pilot's idle wait, the garbage collector's thresholds, Textual's styles cache emptied
after each test). The Pilot helpers (`send`,
`until`, `answered`, ...) are plain functions in tests/tui_helpers.py.
"""

from __future__ import annotations

import gc
import json
import os
import tempfile
from pathlib import Path

import pytest
from rich.console import Console

from spectui.cli.progress import ConsoleReport
from spectui.config import embedded
from tests import model_guard, textual_private

SMOL = "smollm2-135m-instruct-q4_1"
GEMMA = "gemma-3-270m-q4_k_m"  # its tokenizer differs from the others': the incompatible pair
RECORDED_CURVE = Path(__file__).parent / "data" / "plan_smollm2.json"  # a SmolLM2 curve `spectui plan` measured
# `pytest -m "not model"`: one worker more than the cores, as the Pilot tests and the child
# processes leave a core idle while they wait (pytest_cmdline_main below)
FAST_WORKERS = len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


def model_file(name: str):
    """The model's GGUF, assembled into the user cache on first use (as a user would get it)."""
    return embedded.resolve_model(name, ConsoleReport(Console(stderr=True)))


@pytest.fixture(scope="session")
def smol_path():
    return model_file(SMOL)


@pytest.fixture(scope="session")
def smol(smol_path):
    from spectui.llama.model import Model

    m = Model(smol_path)
    yield m
    m.close()


@pytest.fixture(scope="session")
def synthetic():
    """kind -> the tiny synthetic checkpoint (tests/synthetic_models.py), built once per machine
    into ${XDG_CACHE_HOME:-~/.cache}/spectui-synthetic: its name carries the recipe's digest and
    it is written through a rename, so every run and worker reuses it (a build reads SmolLM2's
    tokenizer for seconds)."""
    from tests import synthetic_models

    directory = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "spectui-synthetic"
    return lambda kind: synthetic_models.build(kind, directory)


# --- the chat app's fixtures (the Pilot modules) ----------------------------------------


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    """Own config, data and plan cache dirs, tmp_path as the working directory, a fixed memory line, the
    desktop's clipboard left alone (the Pilot modules use it for every test:
    pytestmark = pytest.mark.usefixtures("dirs"))."""
    from spectui.tui import app as app_module
    from spectui.tui import clipboard

    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SPECTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))  # no curve a plan run cached here
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where unsaved chats are looked for, too
    monkeypatch.setattr(app_module, "memory_text", lambda: "GPU: none (CPU)\nRSS 100 MiB")
    monkeypatch.setattr(clipboard, "copy_elsewhere", lambda text: (None, False))  # not the desktop's clipboard
    return tmp_path


@pytest.fixture(scope="module")
def setup():
    """The SmolLM2 preset at temperature 0, -n 48; a module may override it (the fixtures below follow)."""
    from tests.tui_helpers import chat_args, resolved

    return resolved(chat_args("-n", "48"))


@pytest.fixture(scope="module")
def session(smol, setup):
    """A real SmolLM2 session (drafting for itself), one per module that uses it: tests that use
    it (or `fresh`) load the model and are marked `model`."""
    from spectui.engine.session import Session

    s = Session(smol, smol, setup.ctx_params(), setup.ctx_params(draft=True), setup.spec, setup.sampling())
    yield s
    s.close()


@pytest.fixture
def fresh(session, setup):
    """The shared session, back at the preset's configuration."""
    session.configure(setup.spec)
    return session


@pytest.fixture
def fake(setup):
    """No model: a recorded SmolLM2 answer replayed, one round every 5 ms (its 12 rounds reach
    the app between the turn's start and end, as a real answer's do; no test of `fake` acts
    mid-answer: slow_fake is for that)."""
    from tests.fake_session import FakeSession

    return FakeSession(spec=setup.spec, round_s=0.005)


@pytest.fixture
def slow_fake(setup):
    """The recorded answer at 0.1 s a round: long enough to act mid-answer."""
    from tests.fake_session import FakeSession

    return FakeSession(spec=setup.spec, round_s=0.1)


# --- `spectui plan` without a model: the recorded SmolLM2 curve ------------------------


class Measured(Exception):
    """The command got past its checks to where it would load the models and measure."""


@pytest.fixture
def cached(tmp_path, monkeypatch):
    """The recorded SmolLM2 curve in the cache, as this machine's, and no memory projection: no model loads."""
    from spectui.plan import cache, identity, memory_projection

    monkeypatch.setattr(memory_projection, "for_setup", lambda setup, target, draft: (None, "not projected here"))
    doc = json.loads(RECORDED_CURVE.read_text())
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(identity, "key", lambda setup, target, draft: doc["key"])
    path = cache.cache_path(doc["key"])
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def unmeasured(monkeypatch):
    """`spectui plan` stops with Measured where it would load the models."""
    from spectui.cli import plan as plan_command

    def measure(*args):
        raise Measured

    monkeypatch.setattr(plan_command, "_measure", measure)


# --- the run: the guard of the `model` marker (tests/model_guard.py), the Pilot modules' speed


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which turns -n into workers
def pytest_cmdline_main(config):
    """`pytest -m "not model"` on the whole suite runs on FAST_WORKERS processes (pytest-xdist).
    -n N chooses (-n 0: one process). A run that names other files or -k stays in one process
    (a worker spends seconds importing and collecting), and so does any other -m and the full
    suite (its model tests time llama.cpp on every core)."""
    if (
        config.pluginmanager.hasplugin("xdist")
        and config.option.numprocesses is None
        and not hasattr(config, "workerinput")  # a worker itself
        and whole_suite(config)
        and not config.option.keyword
        and not (config.option.collectonly or config.option.usepdb)
        and config.option.markexpr.split() == ["not", "model"]
    ):
        config.option.numprocesses = FAST_WORKERS
        if config.option.dist == "no":
            config.option.dist = "worksteal"  # an idle worker takes tests from a busy one: no long tail


def whole_suite(config) -> bool:
    """No paths given, or the suite's own folder named (`pytest -m "not model" tests`)."""
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        return True
    named = {(config.invocation_params.dir / arg).resolve() for arg in config.args}
    return named == {(config.rootpath / path).resolve() for path in config.getini("testpaths")}


def pytest_configure(config):
    model_guard.install()
    textual_private.settle_pilot_in_5_ms_windows()
    # Textual makes garbage fast: at Python's default thresholds full collections ran often and
    # each outlasted a slow_fake round (a test acting between two rounds could miss its moment;
    # docs/performance.md has the figures). Nothing asserted depends on when garbage goes
    # (models/test_engine.py's heap test controls the collector itself).
    gc.set_threshold(10_000, 10, 10)
    # The user's measured cost curves (spectui plan) change what the chat shows and where auto
    # starts: tests see only the curves they measure or write themselves.
    os.environ["SPECTUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="spectui-test-cache-")


def pytest_collection_finish(session):
    """Every embedded model is assembled before the first test that may load one, so no
    test's output depends on whether the cache was cold (assembly prints on stderr)."""
    if session.config.option.collectonly or not any(item.get_closest_marker("model") for item in session.items):
        return
    for name in embedded.CATALOG:
        model_file(name)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    model_guard.begin(item)  # before its fixtures: a module-scoped one that loads a model runs under it


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    textual_private.drop_dead_widgets_styles()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    if model_guard.violations:  # refused on a worker thread and swallowed there (a failed load shown in the app)
        pytest.fail(model_guard.violations[0], pytrace=False)
    return result
