"""The server tests' shared fixture: the built llama-server, or a skip that says how to build it."""

from __future__ import annotations

import pytest

from tests.server.llama_server import built


@pytest.fixture(scope="module")
def server_bin():
    path = built()
    if path is None:
        pytest.skip("no llama-server built: run tests/server/build.sh (about 20 minutes; .ci/run does)")
    return path
