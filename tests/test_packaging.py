"""The wheel a user installs carries every module and the shipped presets, themes, styles
and prompts
(the tests themselves run against the checkout, so this is checked on a built wheel)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

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
