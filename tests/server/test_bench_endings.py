"""A server bench keeps its figures however it ends: SIGTERM or SIGHUP write what was measured,
as Ctrl+C does; an output that cannot be written is refused before measuring, and one that
fails at the end anyway leaves the tables on the terminal. Against tests/helpers/fake_llama.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from spectui.cli import bench as bench_command
from tests.cli_helpers import run_cli
from tests.helpers.fake_llama import FakeLlamaServer, Fault, State, metrics_text

pytestmark = pytest.mark.usefixtures("dirs")
SPEC = {"spec_types": "none,ngram-simple", "drafts": [(0, 0), (3, 2), (3, 2), (3, 2)]}


@pytest.fixture
def pair():
    """A baseline and a speculating fake server, both with --metrics."""
    servers = [
        FakeLlamaServer(State(metrics=lambda: metrics_text(0, 0, 0, ()))),
        FakeLlamaServer(State(metrics=lambda: metrics_text(6, 4, 2, (2, 2)), **SPEC)),  # type: ignore[arg-type]
    ]
    yield servers
    for s in servers:
        s.stop()


def bench_args(base: FakeLlamaServer, spec: FakeLlamaServer, out: Path, concurrency: bool) -> list[str]:
    args = ["bench", "--server", f"{base.url},{spec.url}", "--repeat", "3", "-n", "4"]
    args += ["--lang", "en", "--category", "code", "--limit", "1", "--json", str(out)]
    return args + (["--concurrency", "1,2"] if concurrency else [])


# the speculating server's streams before pass 2's first: 2 + 3 with --concurrency 1,2
# (a warm-up burst of 2, then 1 and 2 at once), 1 + 1 without (a warm-up run, one prompt)
PASS_2 = {True: 5, False: 2}


@pytest.mark.parametrize("concurrency", [True, False], ids=["concurrency", "plain"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_after_the_first_pass_writes_what_was_measured(pair, tmp_path, sig, concurrency):
    base, spec = pair
    spec.state.fault = Fault("/completion stream", "stall", after=PASS_2[concurrency])  # held until stop()
    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "spectui", *bench_args(base, spec, out, concurrency)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert spec.state.failing.wait(120), "the bench never reached its second pass"
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    name = signal.Signals(sig).name
    assert proc.returncode == 128 + sig, stderr
    assert "Traceback" not in stderr and f"wrote {out} (partial)" in stderr
    doc = json.loads(out.read_text())
    assert doc["partial"] and not doc["failed"] and doc["interrupted"].startswith(f"stopped by {name} at ")
    measured = doc["bursts"] if concurrency else doc["results"]
    assert measured and stdout  # the first pass's figures, and the tables shown


def test_an_output_that_refuses_every_write_is_refused_before_connecting(pair, tmp_path):
    base, spec = pair
    r = run_cli(*bench_args(base, spec, Path("/dev/full"), True))
    assert r.returncode == 2 and "--json: cannot write /dev/full: No space left on device" in r.stderr
    assert base.state.requests == {} and spec.state.requests == {}  # nothing was asked of the servers


@pytest.mark.parametrize("concurrency", [True, False], ids=["concurrency", "plain"])
def test_an_output_that_fails_at_the_end_leaves_the_tables_then_one_line(pair, monkeypatch, concurrency):
    """The disk filled during the run: the check passed, the write fails."""
    base, spec = pair
    monkeypatch.setattr(bench_command, "writable", lambda name, flag: Path(name))
    r = run_cli(*bench_args(base, spec, Path("/dev/full"), concurrency))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines()[-1] == "error: cannot write /dev/full: No space left on device"
    assert "speculation" in r.stdout or "drafted" in r.stdout  # the verdict reached the terminal
