"""`spectui plan` in this process: from a cached (recorded) curve without a model, and the
bad input it refuses with one line and exit 2 before any measurement (as
tests/unit/test_bad_input_corpus.py holds every other command's)."""

from __future__ import annotations

import json
import os

import pytest

from spectui.cli import plan as plan_command
from spectui.plan import identity, memory_projection
from tests.cli_helpers import run_cli
from tests.conftest import RECORDED_CURVE as RECORDED
from tests.conftest import Measured

pytestmark = pytest.mark.usefixtures("dirs")


def one_line_error(ran, *says: str) -> None:
    assert ran.returncode == 2, ran
    lines = [line for line in ran.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in ran.stderr, ran.stderr
    for s in says:
        assert s in lines[0], lines[0]


def test_a_cached_plan_prints_every_section_within_an_80_column_terminal_and_cuts_no_word(
    cached, unmeasured, monkeypatch
):
    whole = run_cli("plan", "--preset", "fast", env={"COLUMNS": "200"}).stdout  # a file: every line whole
    monkeypatch.setattr(plan_command, "_width", lambda: 80)
    ran = run_cli("plan", "--preset", "fast")
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    for section in ("Cost curve", "t/t(1)", "noise", "memory: not projected here", "break-even α", "Speedup against α"):
        assert section in ran.stdout
    assert ran.stdout.split() == whole.split()  # wrapped at whole words: the same words, none cut
    # no draft model in the fast pair: no draft model's overhead is claimed
    assert "ms without a draft\n" in whole and "with a draft model's draft" not in whole
    assert max(len(line) for line in whole.splitlines()) > 80


def test_the_table_is_explained_and_the_plan_ends_with_what_to_do(cached, unmeasured):
    out = run_cli("plan", "--preset", "fast").stdout
    for term in ("draft:", "drafts:", "α now:", "never:", "no drafts:"):
        assert f"  {term}" in out or f"; {term}" in out, term
    *_, verdict, step = out.strip().splitlines()
    # the recorded SmolLM2 curve: ngram-cache is the best at 0.94x, on timings 24% apart
    assert verdict.startswith("Best here: ngram-cache, predicted 0.94x") and "within noise" in verdict, verdict
    doc = json.loads(cached.read_text())
    for pts in doc["curve"]["target"].values():
        for p in pts:
            p[2] = 0.01  # steady timings: 0.94x is a loss
    cached.write_text(json.dumps(doc))
    out = run_cli("plan", "--preset", "fast").stdout
    *_, verdict, step = out.strip().splitlines()
    assert verdict.startswith("Speculation does not pay on this machine") and "ngram-cache" in verdict
    assert "0.94x: loses" in verdict and step.startswith("Next:") and "--spec-type auto" in step
    doc = json.loads(run_cli("plan", "--preset", "fast", "--json").stdout)
    assert doc["conclusion"] == [verdict, step]


def test_a_configuration_that_pays_is_named_with_the_flags_to_run_it(cached, unmeasured):
    doc = json.loads(cached.read_text())
    doc["curve"]["overhead_none_s"] = 0.05  # a costly round: fewer, longer rounds pay
    cached.write_text(json.dumps(doc))
    *_, verdict, step = run_cli("plan", "--preset", "fast").stdout.strip().splitlines()
    # ×1.16 on timings 24% apart: the welcome card's word on the same cache, never "it pays"
    assert verdict.endswith("(timing noise 24%): within noise, no measurable difference from none."), verdict
    assert step.startswith("Next: `spectui plan --remeasure` on a quiet machine, or try spectui --preset fast"), step
    for pts in (*doc["curve"]["target"].values(), *doc["curve"].get("draft", {}).values()):
        for p in pts:
            p[2] = 0.0  # steady timings
    cached.write_text(json.dumps(doc))
    *_, verdict, step = run_cli("plan", "--preset", "fast").stdout.strip().splitlines()
    assert verdict.startswith("Best here: ") and verdict.endswith("it pays."), verdict
    assert step.startswith("Next: spectui --preset fast --spec-type ngram-"), step  # the pair measured


@pytest.mark.model
def test_the_plan_shows_llama_cpps_memory_projection_of_the_pair(cached, unmeasured, monkeypatch):
    monkeypatch.undo()  # the real projection: a no_alloc load of SmolLM2, nothing allocated
    monkeypatch.setattr(identity, "key", lambda setup, target, draft: json.loads(RECORDED.read_text())["key"])
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(cached.parent.parent))
    monkeypatch.setattr(plan_command, "_measure", lambda *args: pytest.fail("measured despite the cache"))
    ran = run_cli("plan", "--preset", "fast", "-c", "2048")
    assert ran.returncode == 0, ran.stderr
    assert "Memory at -c 2048, as llama.cpp projects it" in ran.stdout and ": fits" in ran.stdout
    doc = json.loads(run_cli("plan", "--preset", "fast", "-c", "2048", "--json").stdout)
    assert doc["memory"]["fits"] is True and doc["memory"]["n_ctx"] == 2048


def test_the_json_holds_the_same_plan(cached, unmeasured):
    text = run_cli("plan", "--preset", "fast").stdout
    ran = run_cli("plan", "--preset", "fast", "--json")
    assert ran.returncode == 0, ran.stderr
    doc = json.loads(ran.stdout)
    assert {"curve", "ratios", "table", "picture", "memory", "sources", "identity"} <= set(doc)
    assert [r["spec_type"] for r in doc["table"]] == [
        "ngram-simple",
        "ngram-map-k",
        "ngram-map-k4v",
        "ngram-mod",
        "ngram-cache",
    ]
    simple = doc["table"][0]
    assert f"{simple['break_even_alpha']:.2f}" in text and f"{simple['speedup']:.2f}x" in text
    assert len(doc["picture"]["alpha"]) == len(doc["picture"]["speedup"]["ngram-simple"])


def test_a_corrupt_cached_curve_is_one_note_and_measured_again(cached, unmeasured, monkeypatch):
    cached.write_text("{not json")
    ran = run_cli("plan", "--preset", "fast", reached=Measured)
    assert ran.returncode == 0  # reached the measurement
    monkeypatch.setattr(plan_command, "_measure", lambda *a: json.loads(RECORDED.read_text()))
    ran = run_cli("plan", "--preset", "fast")
    assert ran.returncode == 0, ran.stderr
    notes = [line for line in ran.stderr.splitlines() if line.startswith("note:") and "corrupt" in line]
    assert len(notes) == 1 and "measuring again" in notes[0]
    assert json.loads(cached.read_text())["curve"]  # replaced whole


def test_remeasure_measures_even_with_a_curve_cached(cached, unmeasured):
    assert run_cli("plan", "--preset", "fast", "--remeasure", reached=Measured).returncode == 0


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--server", "http://127.0.0.1:9"], ["not --server"]),
        (["--depth", "0"], ["--depth must be at least 1"]),
        (["--depth", "4096"], ["--depth must be at least 1 and below -c (4096)"]),
        (["-c", "100000"], ["context size 100000 is larger than", "allows (8192)", "-c 8192"]),
        (["-m", "/nonexistent/model.gguf"], ["/nonexistent/model.gguf"]),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_any_measurement(tmp_path, monkeypatch, unmeasured, argv, says):
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))
    ran = run_cli("plan", "--preset", "fast", *argv, reached=Measured)
    one_line_error(ran, *says)


def test_a_model_file_that_does_not_load_is_one_line(tmp_path, monkeypatch, unmeasured):
    bad = tmp_path / "cut.gguf"
    bad.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\xff" * 12)
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))
    one_line_error(run_cli("plan", "-m", str(bad), reached=Measured), str(bad))


def test_a_draft_that_does_not_fit_the_target_is_one_line(tmp_path, monkeypatch, unmeasured, synthetic):
    """A draft with another vocabulary (the synthetic checkpoints') for the SmolLM2 target."""
    from spectui.config.embedded import resolve_model

    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))
    target = str(resolve_model("smollm2-135m-instruct-q4_1"))
    ran = run_cli("plan", "-m", target, "-md", str(synthetic("eagle3")), "--spec-type", "draft-simple")
    assert ran.returncode == 2 and "Traceback" not in ran.stderr and len(ran.stderr.strip().splitlines()) == 1


def test_an_unwritable_cache_is_one_line_and_nothing_measured(tmp_path, monkeypatch, unmeasured):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(blocker))
    one_line_error(run_cli("plan", "--preset", "fast", reached=Measured), "cannot write the plan cache")
    assert os.path.isfile(blocker)


def test_a_pair_that_does_not_fit_says_what_would_and_is_not_measured(tmp_path, monkeypatch, unmeasured):
    class Projection:
        fits = False

        def render_lines(self, width):
            return ["needs 9.00 GiB of 2.00 GiB free: does not fit", "would fit: -c 1024"]

    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(memory_projection, "for_setup", lambda setup, target, draft: (Projection(), None))
    ran = run_cli("plan", "--preset", "fast")
    assert ran.returncode == 1 and "would fit: -c 1024" in ran.stdout, ran


def test_a_curve_timed_on_a_busy_machine_is_said_to_be_uncertain_and_one_outlier_is_not(cached, unmeasured):
    quiet = run_cli("plan", "--preset", "fast")
    assert quiet.returncode == 0 and "varied" not in quiet.stderr
    doc = json.loads(cached.read_text())
    doc["curve"]["target"]["64"][0][2] = 0.8  # one size's repeats 80% apart: a hiccup, not the machine
    cached.write_text(json.dumps(doc))
    assert "varied" not in run_cli("plan", "--preset", "fast").stderr
    for points in doc["curve"]["target"].values():
        for p in points:
            p[2] = 0.4  # every size's repeats 40% apart
    cached.write_text(json.dumps(doc))
    busy = run_cli("plan", "--preset", "fast")
    assert busy.returncode == 0 and "repeats were 40% apart" in busy.stderr and "--remeasure" in busy.stderr
    doc = json.loads(RECORDED.read_text())
    doc["curve"]["drift"] = -0.3  # t(1) re-timed at the end 30% faster
    cached.write_text(json.dumps(doc))
    moved = run_cli("plan", "--preset", "fast")
    assert "t(1) moved -30% between the first and the last timing" in moved.stderr and "--remeasure" in moved.stderr


@pytest.mark.parametrize("calibration", [{}, {"positions": ["x"]}, {"positions": 5}, "broken"])
def test_a_damaged_calibration_is_one_note_and_measured_again(cached, unmeasured, monkeypatch, calibration):
    doc = json.loads(cached.read_text())
    doc["calibration"] = (
        calibration
        if calibration == {} or isinstance(calibration, str)
        else {
            **doc["calibration"],
            **calibration,
        }
    )
    cached.write_text(json.dumps(doc))
    monkeypatch.setattr(plan_command, "_measure", lambda *a: json.loads(RECORDED.read_text()))
    ran = run_cli("plan", "--preset", "fast")
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    notes = [line for line in ran.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "corrupt" in notes[0] and notes[0].endswith("measuring again"), notes
    again = run_cli("plan", "--preset", "fast")  # the file was replaced whole: no note the second time
    assert again.returncode == 0 and "note:" not in again.stderr


def test_the_json_says_how_long_each_phase_took(cached, unmeasured):
    doc = json.loads(run_cli("plan", "--preset", "fast", "--json").stdout)
    assert {"cache", "memory", "predictions", "total"} <= set(doc["phases"]) and doc["phases"]["total"] >= 0
