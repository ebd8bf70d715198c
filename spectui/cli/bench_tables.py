"""A bench result and a comparison of two as Rich tables for the screen; bench/ gives the
cells and lines, the same the Markdown file has."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from spectui.bench import compare, report


def _hanging(rows: list[tuple[str, str, str]]) -> Table:
    """(mark, text, style) rows whose text wraps at word boundaries under its own first
    word, not under the mark (the causes, the warnings)."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for mark, text, style in rows:
        grid.add_row(Text(mark), Text(text), style=style)
    return grid


def render(doc: dict) -> Group:
    """Everything for the screen: environment, one table and verdict per group, warnings."""
    parts: list = [
        Text(report.environment_line(doc["environment"]), style="dim"),
        Text(report.run_line(doc), style="dim"),
    ]
    verdicts = {v["group"]: v for v in doc["verdicts"]}
    for group in report.groups(doc):
        # the group's line above its tables, whole: a table's title wraps at the table's width
        parts.append(Text(report.title(doc, group), style="italic"))
        for columns in (report.COLUMNS, report.DETAIL_COLUMNS, report.OUTPUT_COLUMNS):
            t = Table()
            for name, _ in columns:
                t.add_column(name, justify="left" if name == "config" else "right", no_wrap=name == "config")
            for r in doc["results"]:
                if r["group"] == group:
                    t.add_row(*(cell(r) for _, cell in columns))
            parts.append(t)
        for line in report.auto_lines(doc, group) + report.inspect_lines(doc, group):
            parts.append(Text(line))
        if group in verdicts:
            v = verdicts[group]
            parts.append(Text(report.verdict_head(v), style="bold"))
            marks = [(f"  {mark}", text, "yellow" * bool(flagged)) for mark, text, flagged in report.verdict_marks(v)]
            parts += [_hanging(marks), Text()]
    if doc["partial"]:
        parts.append(Text(f"partial result: {report.stopped(doc)}", style="bold yellow"))
    if doc["warnings"]:
        parts.append(_hanging([("warning:", w, "yellow") for w in doc["warnings"]]))
    return Group(*parts)


def compare_tables(rows: list[dict], name_a: str, name_b: str) -> list[Table]:
    """One table per group: each configuration's A->B values and change."""
    out = []
    for group in dict.fromkeys(r["group"] for r in rows):
        t = Table(title=f"{group}: A = {name_a}, B = {name_b}", title_justify="left")
        for col in compare.COLUMNS:
            t.add_column(col, justify="left" if col == "config" else "right", no_wrap=col == "config")
        for r in rows:
            if r["group"] == group:
                t.add_row(*compare.row_cells(r))
        out.append(t)
    return out
