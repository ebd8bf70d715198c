"""The wheel a user installs carries every module and the shipped presets, themes, styles
and prompts
(the tests themselves run against the checkout, so this is checked on a built wheel)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from spectui.config.embedded import CATALOG, DEFAULT_TARGET

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_ships_every_module_presets_themes_styles_and_prompts(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("spectui-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for preset in (ROOT / "presets").glob("*.toml"):
        assert f"spectui/shipped_presets/{preset.name}" in names
    for theme in (ROOT / "themes").glob("*.toml"):
        assert f"spectui/shipped_themes/{theme.name}" in names
    assert {"spectui/tui/app.tcss", "spectui/data/prompts.toml"} <= names
    # every module of the checkout, so no package is left out of pyproject's list
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "spectui").rglob("*.py")}
    assert modules - names == set()


def test_the_demo_extra_brings_every_model_a_shipped_preset_names():
    """The README's install is '.[demo]', and it offers every shipped preset that names no file
    of the user's (fast included): the packages of each embedded model they name are in it."""
    demo = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["demo"])
    for preset in (ROOT / "presets").glob("*.toml"):
        values = tomllib.loads(preset.read_text())
        for name in (values.get("model", DEFAULT_TARGET), values.get("model_draft")):
            if name in CATALOG:
                assert {p.requirement for p in CATALOG[name].packages} <= demo, (preset.name, name)
                assert CATALOG[name].extra == "demo", name  # what its missing-package error asks for
