"""`spectui run` as a user runs it: a real process, the real SmolLM2 preset."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers.processes import interruptible, spectui
from tests.helpers.prompts import PROMPT

pytestmark = pytest.mark.model  # every test runs `spectui run` on SmolLM2 in a child process


def test_json_output_is_one_object_with_the_documented_keys():
    r = spectui("run", "--preset", "smollm2", "--temp", "0", "-n", "40", "--json", PROMPT)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)  # nothing else on stdout
    assert {"text", "tokens", "stop_reason", "config", "stats"} <= data.keys()
    assert {"spec_type", "draft_n_max", "temp", "verify"} <= data["config"].keys()
    assert data["config"]["spec_type"] == "draft-simple" and data["config"]["temp"] == 0.0
    stats = data["stats"]
    for key in (
        "n_generated",
        "n_drafted",
        "n_accepted",
        "acceptance_rate",
        "mean_acceptance_length",
        "rounds",
        "tok_per_s",
        "ttft_s",
    ):
        assert key in stats
    assert stats["n_generated"] == len(data["tokens"]) <= 40
    assert 0 < stats["n_accepted"] <= stats["n_drafted"]
    # SmolLM2 drafting for itself at temperature 0 agrees with itself almost always
    assert stats["acceptance_rate"] > 0.8
    assert data["stop_reason"] in ("eos", "n-predict")


def test_ignore_eos_goes_on_to_n_tokens_as_llama_cpp_does():
    """A one-word answer ends at the end of generation; with --ignore-eos it runs to -n."""
    args = (
        "run",
        "--preset",
        "smollm2",
        "--spec-type",
        "ngram-simple",
        "--temp",
        "0",
        "-n",
        "60",
        "--json",
        "Reply with one word: yes or no. Is water wet?",
    )
    short, long = (json.loads(spectui(*args, *extra).stdout) for extra in ((), ("--ignore-eos",)))
    assert short["stop_reason"] == "eos" and short["stats"]["n_generated"] < 10
    assert long["stop_reason"] == "n-predict" and long["stats"]["n_generated"] == 60
    assert (short["config"]["ignore_eos"], long["config"]["ignore_eos"]) == (False, True)
    assert long["text"].startswith(short["text"])


def test_stdin_and_file_input_and_plain_output(tmp_path):
    f = tmp_path / "prompt.txt"
    f.write_text(PROMPT, encoding="utf-8")
    a = spectui("run", "--preset", "smollm2", "--temp", "0", "-n", "24", "--no-color", "-f", str(f))
    b = spectui("run", "--preset", "smollm2", "--temp", "0", "-n", "24", "--no-color", stdin=PROMPT)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert a.stdout == b.stdout and a.stdout.strip()
    assert "\x1b[" not in a.stdout  # no colour codes in a pipe
    assert "speculation summary" in a.stderr and "accepted / drafted" in a.stderr


def test_rejected_tokens_shown_struck_through_but_not_in_the_answer():
    # n-gram drafts (one-hot q) at a high temperature: the target often rejects them
    args = (
        "run",
        "--preset",
        "smollm2",
        "--temp",
        "1.2",
        "--seed",
        "3",
        "-n",
        "48",
        "--spec-type",
        "ngram-cache",
        "--spec-draft-n-max",
        "6",
        "--spec-verify",
        "rejection",
    )
    env = dict(os.environ, PYTHONUNBUFFERED="1", FORCE_COLOR="1", TERM="xterm-256color")
    shown = subprocess.run(
        [sys.executable, "-m", "spectui", *args, PROMPT], capture_output=True, text=True, timeout=180, env=env
    )
    data = json.loads(spectui(*args, "--json", PROMPT).stdout)
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"\x1b\[[0-9;]*;9;[0-9;]*m", shown.stdout)  # SGR 9: rejected drafts struck through
    assert data["stats"]["n_accepted"] < data["stats"]["n_drafted"]
    # the answer is what remains once the struck-through pieces are taken out (whitespace
    # aside: the terminal renders a rejected newline outside the styled span)
    answer = re.sub(r"\x1b\[[0-9;]*;9;[0-9;]*m.*?\x1b\[0m", "", shown.stdout, flags=re.S)
    assert re.sub(r"\s", "", re.sub(r"\x1b\[[0-9;]*m", "", answer)) == re.sub(r"\s", "", data["text"])


def test_ctrl_c_stops_cleanly_and_still_prints_the_summary():
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "spectui",
            "run",
            "--preset",
            "smollm2",
            "--temp",
            "0",
            "--no-color",
            "Count from 1 to 1000, one number per line.",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        preexec_fn=interruptible,
    )
    deadline = time.time() + 120
    first = p.stdout.read(8)  # wait until tokens stream
    assert first and time.time() < deadline
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "cancelled" in err and "Traceback" not in err


def test_verbose_says_which_threads_and_openmp_setting_and_the_users_setting_wins():
    r = spectui(
        "run",
        "--preset",
        "smollm2",
        "--spec-type",
        "none",
        "-n",
        "2",
        "--verbose",
        PROMPT,
        env={"GOMP_SPINCOUNT": None},
    )  # this process's import of spectui set it
    assert r.returncode == 0, r.stderr
    assert "threads (default: the physical cores), GOMP_SPINCOUNT=20000 (chosen by spectui)" in r.stderr
    r = spectui(
        "run",
        "--preset",
        "smollm2",
        "--spec-type",
        "none",
        "-n",
        "2",
        "--verbose",
        "-t",
        "1",
        PROMPT,
        env={"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": None},
    )
    assert r.returncode == 0, r.stderr
    assert "1 thread (-t), OMP_WAIT_POLICY=ACTIVE (chosen by you)" in r.stderr


def test_an_answer_cut_off_says_why_and_a_prompt_past_the_context_fails():
    r = spectui("run", "--preset", "smollm2", "--temp", "0", "-n", "4", "--no-color", PROMPT)
    assert r.returncode == 0, r.stderr
    assert "[answer cut off: -n/--n-predict 4 tokens reached]" in r.stderr
    r = spectui("run", "--preset", "smollm2", "-c", "256", "--json", "word " * 400)
    assert r.returncode == 2 and r.stdout == ""
    assert (
        r.stderr.startswith("error: the prompt has")
        and "the context holds 256: give a larger -c (the model allows up to" in r.stderr
    )
