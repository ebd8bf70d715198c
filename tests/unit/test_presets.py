"""Presets: shipped ones load, user ones override by name, bad ones stop with the file,
the line or key, and the fix."""

from __future__ import annotations

import pytest

from spectui.cli.main import build_parser
from spectui.cli.setup_flags import overrides_from
from spectui.config import presets
from spectui.config.resolve import resolve
from spectui.config.setup import Setup, kept_across_presets
from spectui.errors import UserError
from spectui.spec_config import SpecConfig
from tests.cli_helpers import run_cli


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTUI_CONFIG_DIR", str(tmp_path))
    return tmp_path


def write_user(config_dir, name: str, text: str):
    d = config_dir / "presets"
    d.mkdir(exist_ok=True)
    (d / f"{name}.toml").write_text(text, encoding="utf-8")
    return d / f"{name}.toml"


def test_shipped_presets_load():
    names = presets.available()
    assert {"default", "ngram", "ngram-simple", "smollm2", "qwen3-8b-0.6b"} <= names.keys()
    d = presets.load("default")
    assert d.shipped and d.values["spec_type"] == "draft-simple" and d.values["spec_draft_n_max"] == 3
    assert presets.load("ngram").values["spec_type"] == "ngram-mod"


def test_template_preset_says_to_fill_in_the_model_path():
    with pytest.raises(UserError, match=r"qwen3-8b-0.6b.toml: key 'model': model file not found.*copy it to"):
        presets.load("qwen3-8b-0.6b")


def test_a_preset_list_says_what_each_one_is_and_which_need_model_files(config_dir):
    """f5 and the palette: the description, "needs model files" for a template, and the
    error of a file that cannot be used, in the one line each row has."""
    write_user(config_dir, "broken", "spec_type = [\n")
    by_name = {p.name: p for p in presets.listed()}
    fast, template, broken = by_name["fast"], by_name["qwen3-8b-0.6b"], by_name["broken"]
    assert fast.problem == "" and fast.about == presets.load("fast").description
    assert template.problem == "needs model files"
    assert template.about.startswith("needs model files · TEMPLATE: Qwen3-8B")
    assert broken.about.startswith("cannot be used: ") and "broken.toml: TOML syntax error" in broken.about
    assert not any(str(p.path) in p.about for p in by_name.values() if p.description)


def test_a_preset_whose_embedded_model_misses_its_packages_says_the_pip_command(monkeypatch):
    """`presets list` called fast "ready" where SmolLM2's package was not installed, and f5 then
    failed; now the row says what to install."""
    import dataclasses

    from spectui.config import assembly, embedded

    smol = embedded.CATALOG["smollm2-135m-instruct-q4_1"]
    ghost = assembly.ChunkPackage("spectui-no-such-chunk", "9.9.9", "spectui_no_such_chunk")
    monkeypatch.setitem(embedded.CATALOG, smol.name, dataclasses.replace(smol, packages=(ghost,)))
    by_name = {p.name: p for p in presets.listed()}
    for name in ("fast", "smollm2"):
        assert by_name[name].problem == "needs pip install 'spectui[demo]'", name
        assert by_name[name].about.startswith("needs pip install 'spectui[demo]' · ")
    assert by_name["default"].problem == "" and by_name["qwen3-8b-0.6b"].problem == "needs model files"


def test_user_preset_overrides_a_shipped_one_by_name(config_dir):
    write_user(config_dir, "ngram", 'model = "smollm2-135m-instruct-q4_1"\nspec_type = "ngram-simple"\n')
    p = presets.load("ngram")
    assert not p.shipped and p.values["spec_type"] == "ngram-simple"


@pytest.mark.parametrize(
    "text, match",
    [
        ('spec_type = "ngram-mod"\nspec_draft_n_max = \n', r"bad\.toml: TOML syntax error.*line 2"),
        ('spec_typo = "ngram-mod"\n', r"bad\.toml: unknown key 'spec_typo'; valid keys"),
        ('spec_draft_n_max = "five"\n', r"bad\.toml: key 'spec_draft_n_max' must be int"),
        ('flash_attn = "maybe"\n', r"bad\.toml: key 'flash_attn' must be one of on, off, auto"),
        ('model = "/nowhere/model.gguf"\n', r"bad\.toml: key 'model': model file not found: /nowhere/model.gguf"),
    ],
)
def test_bad_presets_name_file_and_key(config_dir, text, match):
    write_user(config_dir, "bad", text)
    with pytest.raises(UserError, match=match):
        presets.load("bad")


def test_a_bad_preset_stops_the_cli_before_anything_starts(config_dir):
    write_user(config_dir, "bad", "spec_typo = 1\n")
    r = run_cli("run", "--preset", "bad", "hello")
    assert r.returncode == 2 and "unknown key 'spec_typo'" in r.stderr and "Traceback" not in r.stderr


def test_flags_override_the_preset_and_zero_is_a_value():
    args = build_parser().parse_args(["run", "--preset", "smollm2", "--temp", "0", "--spec-draft-n-max", "5", "x"])
    setup = resolve(args.preset, overrides_from(args))
    assert setup.temp == 0.0 and setup.spec.draft_n_max == 5 and setup.spec.types == ("draft-simple",)


def test_target_without_draft_drops_the_presets_draft():
    args = build_parser().parse_args(["run", "-m", "smollm2-135m-instruct-q4_1", "x"])
    setup = resolve(args.preset, overrides_from(args))
    assert setup.model_draft is None and setup.spec.types == ("ngram-mod",) and setup.notes


def test_save_user_preset_round_trips_atomically(config_dir):
    setup = resolve("smollm2", {"spec_type": "ngram-simple", "temp": 0.0})
    path = presets.save_user("mine", setup.values(), "my setup")
    assert path.parent == config_dir / "presets" and not list(path.parent.glob("*.tmp"))
    p = presets.load("mine")
    assert p.description == "my setup" and p.values["spec_type"] == "ngram-simple" and p.values["temp"] == 0.0
    with pytest.raises(UserError, match="invalid preset name"):
        presets.save_user("../evil", {})


def test_presets_cli_list_and_show(tmp_path):
    r = run_cli("presets", "list", env={"COLUMNS": "80", "SPECTUI_CONFIG_DIR": str(tmp_path)})
    assert r.returncode == 0 and r.stderr == ""
    rows = {ln.split()[0]: ln for ln in r.stdout.splitlines() if ln.strip()}
    for template in ("qwen3-8b-dspark", "qwen3-8b-dflash", "qwen3-8b-eagle3", "gemma4-12b-dspark"):
        assert "needs model files" in rows[template] and "error" not in rows[template]
    assert "ready" in rows["default"]
    # the folders in full, never cut to a prefix
    assert f"user presets (they win): {tmp_path / 'presets'}/NAME.toml" in r.stdout
    assert f"shipped presets: {presets.shipped_dir('presets')}/NAME.toml" in r.stdout
    r = run_cli("presets", "show", "ngram")
    assert r.returncode == 0 and 'spec_type = "ngram-mod"' in r.stdout
    r = run_cli("presets", "show", "nope")
    assert r.returncode == 2 and "unknown preset 'nope'" in r.stderr


def test_presets_show_is_a_preset_file_at_any_width(tmp_path):
    """`show NAME > p.toml` gives a file tomllib reads back to the preset's own values,
    however long its lines (a template's description) and however narrow the terminal."""
    names = list(presets.available())
    shown = [run_cli("presets", "show", name, env={"COLUMNS": "40"}) for name in names]
    for name, r in zip(names, shown):
        assert r.returncode == 0, r.stderr
        copy = tmp_path / f"{name}.toml"
        copy.write_text(r.stdout, encoding="utf-8")
        original = presets.load_file(presets.available()[name][0], check_models=False)
        again = presets.load_file(copy, check_models=False)
        assert (again.description, again.values) == (original.description, original.values)


def test_spec_default_means_ngram_mod_even_over_a_spec_type():
    args = build_parser().parse_args(
        ["run", "--preset", "smollm2", "--spec-type", "ngram-simple", "--spec-default", "x"]
    )
    assert resolve(args.preset, overrides_from(args)).spec.types == ("ngram-mod",)


def test_the_flat_keys_of_a_preset_give_the_spec_back():
    spec = SpecConfig(
        types=("ngram-simple", "draft-simple"),
        draft_n_max=7,
        draft_n_min=2,
        draft_p_min=0.5,
        draft_sampling="probabilistic",
        verify="rejection",
        ngram_mod_n_max=60,
    )
    values = Setup(model="m", spec=spec).values()
    assert values["spec_type"] == "ngram-simple,draft-simple" and values["spec_ngram_mod_n_max"] == 60
    assert Setup().with_values(values).spec == spec and Setup().with_values(values).values() == values


def test_a_preset_switch_keeps_sampling_and_context_but_not_models_or_speculation():
    kept = kept_across_presets(
        {
            "temp": 0.0,
            "ctx_size": 2048,
            "system": "hi",
            "model": "x.gguf",
            "model_draft": "y.gguf",
            "spec_type": "ngram-mod",
            "spec_draft_n_max": 9,
        }
    )
    assert kept == {"temp": 0.0, "ctx_size": 2048, "system": "hi"}


@pytest.mark.parametrize("value", ["5", "[1, 2]", "{ a = 1 }"])
def test_a_description_that_is_not_text_names_the_file_and_key_everywhere(config_dir, value):
    path = write_user(config_dir, "odd", f'description = {value}\nspec_type = "ngram-simple"\n')
    listed = run_cli("presets", "list")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    assert listed.stderr.startswith("warning: preset 'odd' skipped: ") and "'description'" in listed.stderr
    shown = run_cli("presets", "show", "odd")
    assert shown.returncode == 0 and "# not usable yet: " in shown.stdout and "'description'" in shown.stdout
    used = run_cli("run", "--preset", "odd", "hi")
    assert used.returncode == 2 and used.stderr.count("\n") == 1
    assert f"{path}: key 'description'" in used.stderr and "give a string in quotes" in used.stderr
