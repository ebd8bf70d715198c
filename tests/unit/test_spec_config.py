"""Spec-type names, llama.cpp's priority order, and the clear refusals."""

from __future__ import annotations

import pytest

from spectui.errors import UserError
from spectui.spec_config import SpecConfig, parse_types
from tests.cli_helpers import run_cli


def test_combined_types_follow_llama_cpp_priority_not_the_typed_order():
    assert parse_types("draft-simple,ngram-mod,ngram-simple") == ("ngram-simple", "ngram-mod", "draft-simple")
    assert parse_types("ngram-cache, ngram-map-k4v") == ("ngram-map-k4v", "ngram-cache")


def test_none_anywhere_resets_to_none():
    assert parse_types("ngram-mod,none,draft-simple") == ("none",)


def test_hidden_state_types_parse_in_llama_cpp_priority():
    assert parse_types("draft-dspark,draft-eagle3,ngram-mod,draft-mtp") == (
        "ngram-mod",
        "draft-eagle3",
        "draft-mtp",
        "draft-dspark",
    )


def test_unknown_type_lists_the_valid_ones():
    with pytest.raises(UserError, match="ngram-mod"):
        parse_types("ngram-fast")


@pytest.mark.parametrize(
    "kw",
    [
        {"draft_n_max": 65},
        {"draft_n_max": -1},
        {"verify": "exact"},
        {"draft_p_min": 1.5},
        {"draft_sampling": "top"},
        {"draft_n_min": 5, "draft_n_max": 3},  # no draft could be kept: llama.cpp drops those under n-min
    ],
)
def test_bad_values_are_user_errors(kw):
    with pytest.raises(UserError):
        SpecConfig(**kw)


def test_cli_refusals_are_one_line_with_exit_code_2():
    refused = (
        ("--spec-type", "draft-dspark"),
        ("-m", "smollm2-135m-instruct-q4_1", "--spec-type", "draft-mtp"),
        ("--preset", "smollm2", "--spec-draft-n-max", "99"),
        ("--preset", "smollm2", "--spec-ngram-simple-size-m", "0"),
        ("--preset", "smollm2", "--spec-ngram-mod-n-min", "80"),
        ("--preset", "smollm2", "-t", "0"),
        ("--preset", "smollm2", "-t", "-2"),
    )
    runs = [run_cli("run", *args, "hello") for args in refused]
    for args, r in zip(refused, runs):
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.strip().startswith("error:"), r.stderr


def test_the_spec_type_help_names_every_type():
    from spectui.spec_config import ALL_TYPES

    r = run_cli("run", "--help", env={"COLUMNS": "2000"})
    lines = r.stdout.splitlines()
    [at] = [i for i, ln in enumerate(lines) if ln.strip().startswith("--spec-type SPEC_TYPE")]
    text = " " + " ".join(lines[at : at + 2])  # the help may start on the flag's line or the next
    assert all(f" {t}," in text or f" {t} (" in text for t in ALL_TYPES), text
