"""The guard of the `model` marker: loading a GGUF with llama.cpp (weights or vocabulary,
through spectui's Model or llama-cpp-python's Llama) fails in a test not marked
`@pytest.mark.model`, so a mismarked test fails instead of silently slowing
`pytest -m "not model"`.

conftest.py installs it once per run and names the test being set up, run and torn
down, before its fixtures: a module- or session-scoped fixture that loads a model is
allowed while a marked test sets it up. A load refused on another thread (a Textual
worker) is kept in `violations` as well: tests/tui_helpers.until fails on it at once,
and conftest.py fails the test after it.

Not caught: a model loaded by a child process (`python -m spectui run ...`, the
llama-server of tests/server/test_server.py); those tests are marked by hand.
"""

from __future__ import annotations

import functools

LOADERS = ("llama_model_load_from_file", "llama_load_model_from_file", "llama_model_load_from_splits")

current = None  # the pytest item being set up, run or torn down (None: collection, or no test yet)
violations: list[str] = []  # refusals since the current test began


class UnmarkedModelLoad(RuntimeError):
    pass


def _check() -> None:
    if current is not None and current.get_closest_marker("model") is not None:
        return
    where = current.nodeid if current is not None else "outside any test (at collection?)"
    message = (
        f"{where} loads a GGUF model with llama.cpp: mark the test @pytest.mark.model "
        "(or its module: pytestmark = pytest.mark.model) so that `pytest -m 'not model'` stays fast"
    )
    violations.append(message)
    raise UnmarkedModelLoad(message)


def _guarded(load):
    @functools.wraps(load, assigned=("__name__", "__doc__"))
    def guarded(*args, **kwargs):
        _check()
        return load(*args, **kwargs)

    guarded.unguarded = load
    return guarded


def install() -> None:
    """Wrap llama.cpp's model loaders where spectui (llama_cpp.X) and llama-cpp-python's
    own classes (llama_cpp.llama_cpp.X) look them up, at call time."""
    import llama_cpp
    import llama_cpp.llama_cpp as bindings

    for module in (llama_cpp, bindings):
        for name in LOADERS:
            load = getattr(module, name, None)
            if load is not None and not hasattr(load, "unguarded"):
                setattr(module, name, _guarded(load))


def begin(item) -> None:
    global current
    current = item
    violations.clear()
