"""The concurrency section of a plan within 80 columns: aggregate tok/s per configuration at
each level of busy slots, the speedups with the break-even concurrency, the KV memory of the
slots, and aggregate tok/s against slots drawn by hand (the crossings with none marked X)."""

from __future__ import annotations

import textwrap

from spectui.engine import noise
from spectui.plan.concurrency import Concurrency, Row
from spectui.plan.memory_projection import size_text
from spectui.plan.report import PLOT_H, PLOT_W, mark
from spectui.spec_types import BASELINE

NONE_MARK = "n"
WIDTH = 80  # the tables and the picture are laid out for 80 columns


def _label(r: Row) -> tuple[str, str]:
    return r.spec_type, "" if r.n_max is None else str(r.n_max)


def _mark(r: Row) -> str:
    return NONE_MARK if r.spec_type == BASELINE else str(r.n_max) if r.n_max is not None else mark(r.spec_type)


def _short_verdict(r: Row) -> str:
    """Row.verdict within the column: ≈ for its "within noise around it"."""
    be = r.break_even
    every = r.verdict.startswith(f"{noise.LOSES} at every")
    text = f"{noise.PAYS} at all" if be is None else f"{noise.LOSES} at all" if every else f"{noise.LOSES} at {be}"
    return text + (" ≈" if r.uncertain else "")


def table_lines(conc: Concurrency) -> list[str]:
    """Aggregate tok/s, then speedup over none and the break-even concurrency, per configuration."""
    cols = "".join(f"{c:>7}" for c in conc.levels)
    head = f"{'type':<14}{'n-max':>6}{cols}"
    out = [f"Aggregate tok/s at c busy slots (depth {conc.depth})", head, "-" * len(head)]
    for r in conc.rows:
        t, n = _label(r)
        out.append(f"{t:<14}{n:>6}" + "".join(f"{x:>7.1f}" for x in r.tok_per_s))
    head = f"{head}{'break-even':>14}"
    out += ["", "Speedup over none at c busy slots, and where speculation starts to lose", head, "-" * len(head)]
    for r in conc.rows[1:]:
        t, n = _label(r)
        out.append(f"{t:<14}{n:>6}" + "".join(f"{s:>6.2f}x" for s in r.speedup) + f" {_short_verdict(r):>13}")
    most = max((max(r.noise) for r in conc.rows), default=0.0)
    out += _wrap(
        f"loses at c: below none's aggregate from c slots on; ≈: {noise.WITHIN} there or a level before, "
        f"the timing noise of these timings (up to {most:.0%}) could move it a level"
    )
    if moved := conc.moved():
        out += _wrap(f"note: {moved}; run `spectui plan --concurrency ... --remeasure` on a quiet machine")
    return out


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent="    ")


def memory_lines(conc: Concurrency) -> list[str]:
    m = conc.memory
    if not m:
        return []
    n = m["n_ctx_per_slot"]
    need = ", ".join(f"{c}: {size_text(b)}" for c, b in m["need_bytes"].items())
    most = m["max_slots"]
    fit = "free memory unknown" if most is None else f"up to {most} such slots fit ({m['limited_by']})"
    return [
        f"Memory of the slots: KV cache {size_text(m['kv_bytes_per_slot'])} per slot of {n} tokens",
        *_wrap(
            f"llama-server splits -c among its -np slots: S slots of {n} tokens need -np S -c S*{n}; "
            f"with the models, at each level: {need}; {fit}"
        ),
    ]


def picture_lines(conc: Concurrency, height: int = PLOT_H) -> list[str]:
    """Aggregate tok/s (rows) against the levels (columns evenly spaced), one line per
    configuration by its mark; X where a line crosses none's."""
    levels = conc.levels
    width = PLOT_W if len(levels) > 1 else 1
    xs = [i * (width - 1) / max(1, len(levels) - 1) for i in range(len(levels))]

    def at(ys: tuple[float, ...], col: int) -> float:
        if len(ys) == 1:
            return ys[0]
        i = min(int(col / xs[1]), len(ys) - 2)
        f = (col - xs[i]) / xs[1]
        return ys[i] + (ys[i + 1] - ys[i]) * f

    top = max(max(r.tok_per_s) for r in conc.rows) * 1.05
    grid = [[" "] * width for _ in range(height)]

    def row(y: float) -> int:
        return height - 1 - round(max(0.0, y) / top * (height - 1))

    none = conc.rows[0].tok_per_s
    for r in (*conc.rows[1:], conc.rows[0]):  # none drawn last: on top
        for col in range(width):
            grid[row(at(r.tok_per_s, col))][col] = _mark(r)
    for r in conc.rows[1:]:
        for col in range(1, width):
            before = at(r.tok_per_s, col - 1) - at(none, col - 1)
            after = at(r.tok_per_s, col) - at(none, col)
            if before >= 0 > after or before < 0 <= after:
                grid[row(at(none, col))][col] = "X"
    out = []
    for i in range(height):
        y = (height - 1 - i) / (height - 1) * top
        tag = f"{y:6.0f}" if i in (0, height - 1, height // 2) else ""
        out.append(f"{tag:>7} |" + "".join(grid[i]))
    out.append(" " * 8 + "+" + "-" * width)
    axis = [" "] * (width + 4)
    for c, x in zip(levels, xs):
        text = str(c)
        start = min(round(x), width + 4 - len(text))
        axis[start : start + len(text)] = text
    out.append(" " * 9 + "".join(axis).rstrip())
    return out


def render(conc: Concurrency) -> list[str]:
    """The whole section, every line within WIDTH columns."""
    marks = {_mark(r): r.spec_type for r in conc.rows}
    legend = ", ".join(f"{m} {t}" for m, t in marks.items() if not m.isdigit())
    if any(m.isdigit() for m in marks):
        legend += ", digits: the draft model's n-max"
    out = ["", "Several users of one llama-server (-np), every slot busy", *table_lines(conc)]
    if conc.memory:
        out += ["", *memory_lines(conc)]
    out += [
        "",
        *textwrap.wrap(f"Aggregate tok/s (rows) against busy slots (columns); X: crosses none; {legend}", WIDTH),
    ]
    out += picture_lines(conc)
    return [line[:WIDTH] for line in out]
