"""Spec-type names, llama.cpp's priority order, and the clear refusals."""

from __future__ import annotations

import struct

import pytest

from spectui.engine.model import check_draft_architecture, gguf_architecture
from spectui.engine.spec_config import SpecConfig, parse_types
from spectui.errors import UserError
from tests.test_run_command import spectui


def test_combined_types_follow_llama_cpp_priority_not_the_typed_order():
    assert parse_types("draft-simple,ngram-mod,ngram-simple") == ("ngram-simple", "ngram-mod", "draft-simple")
    assert parse_types("ngram-cache, ngram-map-k4v") == ("ngram-map-k4v", "ngram-cache")


def test_none_anywhere_resets_to_none():
    assert parse_types("ngram-mod,none,draft-simple") == ("none",)


@pytest.mark.parametrize("name", ["draft-eagle3", "draft-dflash", "draft-dspark", "draft-mtp"])
def test_hidden_state_types_are_known_but_refused_with_what_they_need(name):
    with pytest.raises(UserError, match="hidden states"):
        parse_types(name)


def test_unknown_type_lists_the_valid_ones():
    with pytest.raises(UserError, match="ngram-mod"):
        parse_types("ngram-fast")


@pytest.mark.parametrize("kw", [{"draft_n_max": 65}, {"draft_n_max": -1}, {"verify": "exact"},
                                {"draft_p_min": 1.5}, {"draft_sampling": "top"}])
def test_bad_values_are_user_errors(kw):
    with pytest.raises(UserError):
        SpecConfig(**kw)


def _gguf_with_arch(path, arch: str):
    def s(text: str) -> bytes:
        b = text.encode()
        return struct.pack("<Q", len(b)) + b

    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + s("general.architecture")
                     + struct.pack("<I", 8) + s(arch))
    return path


def test_a_hidden_state_draft_gguf_is_refused_before_loading(tmp_path):
    eagle = _gguf_with_arch(tmp_path / "eagle3-draft.gguf", "eagle3")
    assert gguf_architecture(eagle) == "eagle3"
    with pytest.raises(UserError, match="eagle3.*hidden states"):
        check_draft_architecture(eagle)
    check_draft_architecture(_gguf_with_arch(tmp_path / "plain.gguf", "qwen2"))  # a plain draft passes


def test_cli_refusals_are_one_line_with_exit_code_2(tmp_path):
    eagle = _gguf_with_arch(tmp_path / "eagle3-draft.gguf", "eagle3")
    for args in (("--spec-type", "draft-dspark"),
                 ("-m", "smollm2-135m-instruct-q4_1", "-md", str(eagle), "--spec-type", "draft-simple"),
                 ("--preset", "smollm2", "--spec-draft-n-max", "99")):
        r = spectui("run", *args, "hello")
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.strip().startswith("error:"), r.stderr
