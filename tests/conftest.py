"""Shared fixtures: real models from the registry packages (no mocks of llama.cpp)."""

from __future__ import annotations

import pytest
from rich.console import Console

from spectui.config import embedded

SMOL = "smollm2-135m-instruct-q4_1"


def model_file(name: str):
    """The model's GGUF, assembled into the user cache on first use (as a user would get it)."""
    return embedded.resolve_model(name, Console(stderr=True))


@pytest.fixture(scope="session")
def smol_path():
    return model_file(SMOL)


@pytest.fixture(scope="session")
def smol(smol_path):
    from spectui.engine.model import Model

    m = Model(smol_path)
    yield m
    m.close()


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory):
    """kind -> the tiny synthetic checkpoint (tests/synthetic_models.py), built once per run."""
    from tests import synthetic_models

    directory = tmp_path_factory.mktemp("synthetic")
    return lambda kind: synthetic_models.build(kind, directory)
