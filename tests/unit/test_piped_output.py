"""Tables written to a file or a pipe: no line cut at Rich's 80 columns (a model's path stays
whole, so it can be copied or grepped), and no line padded with trailing spaces."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

from rich.table import Table
from rich.text import Text

from spectui.cli import streams
from spectui.config import embedded, paths
from tests.cli_helpers import run_cli


def test_a_table_into_a_file_has_no_trailing_spaces():
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column()
    grid.add_column()
    grid.add_row(Text("[ok]"), Text("a short cause"))
    grid.add_row(Text("[!]"), Text("a longer cause that sets the column's width"))
    out = io.StringIO()
    with redirect_stdout(out):
        streams.console().print(grid)
    assert out.getvalue().splitlines() == ["[ok] a short cause", "[!]  a longer cause that sets the column's width"]


def test_models_list_into_a_file_keeps_each_path_whole(tmp_path, monkeypatch):
    models = tmp_path / "a-folder-whose-name-is-long-enough-to-pass-eighty-columns" / "models"
    monkeypatch.setenv(paths.MODELS_DIR_ENV, str(models))  # the assembled models' paths, past 80 columns
    r = run_cli("models", "list", env={"COLUMNS": None})
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and all(line == line.rstrip() for line in lines), lines
    shown = {line.strip() for line in lines}
    wanted = [str(embedded.model_path(name)) for name, model in embedded.CATALOG.items() if model.in_place is None]
    assert wanted and all(path in shown for path in wanted), lines


def test_presets_list_into_a_file_has_no_trailing_spaces():
    lines = run_cli("presets", "list", env={"COLUMNS": None}).stdout.splitlines()
    assert lines and all(line == line.rstrip() for line in lines), lines
