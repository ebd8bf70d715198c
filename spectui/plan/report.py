"""A plan as text, and as JSON with the same content: the curve with its noise, the type x n-max
table and its legend, speedup against acceptance drawn by hand (one line per n-max, the
break-even line at speedup 1), and the conclusion: the best configuration and what to run next.
The text is wrapped at whole words to a terminal's width, never cut; in a file lines are whole."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from spectui import spec_types
from spectui.engine import noise
from spectui.plan.curve import Curve
from spectui.plan.predict import (
    DEPTH,
    N_MAX,
    Drafting,
    Prediction,
    alphas,
    model_drafting,
    predict,
    speedup_line,
    tok_per_s_none,
)

PLOT_W, PLOT_H = 61, 13
# an n-gram type's mark in the picture (a draft model's lines are marked by their n-max)
MARKS: dict[str, str] = {t.name: t.mark for t in spec_types.TYPES if t.mark}


@dataclass(frozen=True)
class Plan:
    """Every prediction for a pair on this machine: the draft model's type at each n-max (its
    acceptance per position `positions`, empty where unknown; or `at`: its drafting read at
    some n-max, None where nothing drafted) and each n-gram type; `sources`: where each type's
    acceptance came from."""

    curve: Curve
    depth: int
    model_type: str | None
    positions: tuple[float, ...]
    ngram: dict[str, Drafting]
    sources: dict[str, str]
    pair_flags: str = ""  # the flags that load this pair in the chat ("--preset fast"), for "Next:"
    at: Mapping[int, Drafting | None] | None = None  # None: each n-max of N_MAX from `positions`

    def model_rows(self) -> Mapping[int, Drafting | None]:
        """The draft model's drafting by n-max; None: no acceptance known (break-even alone)."""
        if self.at is not None:
            return self.at
        return {k: model_drafting(self.positions, k) if len(self.positions) >= k else None for k in N_MAX}

    @property
    def rows(self) -> list[Prediction]:
        out = []
        if self.model_type:
            for k, d in self.model_rows().items():
                shape = d or Drafting(1.0, float(k), 0.0, True)
                out.append(predict(self.curve, self.model_type, shape, k, measured=d is not None, depth=self.depth))
        for t, d in self.ngram.items():
            out.append(predict(self.curve, t, d, None, measured=d.share > 0, depth=self.depth))
        return out

    def row(self, spec_type: str, n_max: int | None) -> Prediction | None:
        """The prediction for `spec_type` at `n_max` (None: an n-gram type), where the plan has one."""
        return next((p for p in self.rows if (p.spec_type, p.n_max) == (spec_type, n_max)), None)

    def lines(self) -> dict[str, list[float]]:
        """The picture's lines: speedup at each α, per n-max of the draft model (else per
        n-gram type that drafts)."""
        xs = alphas(PLOT_W)
        if self.model_type:
            return {str(k): speedup_line(self.curve, Drafting(1.0, float(k), 0.0, True), xs, self.depth) for k in N_MAX}
        return {t: speedup_line(self.curve, d, xs, self.depth) for t, d in self.ngram.items() if d.share > 0}

    def as_dict(self) -> dict:
        return {
            "depth": self.depth,
            "curve": self.curve.as_dict(),
            "ratios": [{"b": b, "ratio": r, "spread": s} for b, r, s in self.curve.ratios(self.depth)],
            "none_tok_per_s": tok_per_s_none(self.curve, self.depth),
            "model_type": self.model_type,
            "positions": list(self.positions),
            "sources": self.sources,
            "table": [p.as_dict() for p in self.rows],
            "picture": {"alpha": alphas(PLOT_W), "speedup": self.lines()},
            "conclusion": conclusion(self),
        }


def curve_lines(curve: Curve, depth: int = DEPTH) -> list[str]:
    """t(b)/t(1) and its noise, 10 sizes to a row, then the single steps and overheads."""
    out = []
    for d in sorted(curve.target):
        t1 = next(p.median for p in curve.target[d] if p.b == 1)
        out.append(
            f"target decode at depth {d}: t(1) = {1000 * t1:.1f} ms; t(b)/t(1), noise (max-min)/median, "
            "one hiccup left out:"
        )
        pts = curve.ratios(d)
        for i in range(0, len(pts), 10):
            chunk = pts[i : i + 10]
            out.append("  b       " + "".join(f"{b:>7}" for b, _, _ in chunk))
            out.append("  t/t(1)  " + "".join(f"{r:>7.2f}" for _, r, _ in chunk))
            out.append("  noise   " + "".join(f"{100 * s:>6.0f}%" for _, _, s in chunk))
        off = max(curve.target[d], key=lambda p: abs(p.residual))
        if off.residual:
            out.append(
                f"  fitted non-decreasing in b: the measured t({off.b}) is {off.residual:+.0%} off the fit, "
                "the most of any size"
            )
    for d in sorted(curve.draft):
        step = curve.t_draft(1, d)
        out.append(
            f"draft step at depth {d}: {1000 * step:.1f} ms ({step / curve.t(1, d):.2f} of the target's), "
            f"2 tokens {curve.t_draft(2, d) / step:.2f}x"
        )
    if curve.loop_scale != 1.0:
        out.append(f"decodes timed apart, scaled by {curve.loop_scale:.2f} to the generation loop's own single step")
    with_model = (
        f", {1000 * curve.overhead_spec:.1f} ms with a draft model's draft of {curve.overhead_length:.1f} tokens"
        if curve.draft  # a pair without a draft model measured no draft model's overhead
        else ""
    )
    out.append(f"overhead per round outside llama.cpp: {1000 * curve.overhead_none:.1f} ms without a draft{with_model}")
    return out


def _num(x: float | None, fmt: str, none: str = "-") -> str:
    return none if x is None else format(x, fmt)


def table_lines(plan: Plan) -> list[str]:
    """One row per configuration: break-even α, and at the measured α the predicted speed."""
    head = (
        f"{'type':<14}{'n-max':>6}{'draft':>7}{'drafts':>7}{'break-even α':>14}{'α now':>7}{'tok/s':>8}{'speedup':>9}"
    )
    out = [head, "-" * len(head)]
    out.append(
        f"{spec_types.BASELINE:<14}"
        f"{'':>6}{'':>7}{'':>7}{'':>14}{'':>7}{tok_per_s_none(plan.curve, plan.depth):>8.2f}{'1.00x':>9}"
    )
    for p in plan.rows:
        be = "no drafts" if not p.drafting.share else "never" if p.break_even is None else f"{p.break_even:.2f}"
        word = "" if p.word is None else f"  {p.word}"
        out.append(
            f"{p.spec_type:<14}{_num(p.n_max, 'd'):>6}{p.drafting.length:>7.1f}{100 * p.drafting.share:>6.0f}%"
            f"{be:>14}{_num(p.alpha, '.2f'):>7}{_num(p.tok_per_s, '.2f'):>8}"
            f"{_num(p.speedup, '.2f') + ('x' if p.speedup is not None else ''):>9}{word}"
        )
    return out


LEGEND = (
    "draft: tokens a drafting round proposes, on average; drafts: the share of rounds that draft "
    "(a draft model drafts every round, an n-gram type where its lookup matches)",
    "break-even α: the acceptance (accepted / drafted) at which it runs as fast as none; never: it is "
    "slower even if every drafted token were accepted; no drafts: it drafted nothing on the answers "
    "measured, so there is nothing to price",
    f"α now: the acceptance measured (see below); tok/s and speedup: predicted at α now; {noise.PAYS} / "
    f"{noise.LOSES} / {noise.WITHIN}: the speedup is above / below / within 1 ± the noise of the timings it "
    "rests on",
)


def conclusion(plan: Plan) -> list[str]:
    """The best configuration at the measured acceptance and its row's word (engine.noise's, as
    the table and the welcome card say it), then what to run."""
    from spectui.spec_config import config_label

    priced = [p for p in plan.rows if p.speedup is not None]
    best = max(priced, key=lambda p: p.speedup or 0.0, default=None)
    if best is None or best.word == noise.LOSES:
        found = (
            f"the best, {config_label((best.spec_type,), best.n_max or 0)}, is predicted at {best.speedup:.2f}x: "
            f"{best.word}"
            if best is not None
            else "no type has a measured acceptance"
        )
        return [
            f"Speculation does not pay on this machine at the measured acceptance ({found}).",
            "Next: chat with --spec-type none, or try --spec-type auto (it drafts only where drafts pay) "
            "or a GPU (-ngl).",
        ]
    flags = f"--spec-type {best.spec_type}" + (f" --spec-draft-n-max {best.n_max}" if best.n_max else "")
    run = f"spectui {plan.pair_flags + ' ' if plan.pair_flags else ''}{flags}"
    said = f"Best here: {config_label((best.spec_type,), best.n_max or 0)}, predicted {best.speedup:.2f}x"
    said += f" the speed of none at the measured α {best.alpha:.2f} (timing noise {best.noise:.0%})"
    if best.word == noise.WITHIN:
        return [
            f"{said}: {noise.WITHIN}, no measurable difference from none.",
            f"Next: `spectui plan --remeasure` on a quiet machine, or try {run}; the chat's panel shows "
            "whether it pays as you go.",
        ]
    return [f"{said}: it {best.word}.", f"Next: {run}; the chat's panel shows whether it pays as you go."]


def mark(label: str) -> str:
    """A line's mark in the picture: its type's (the table's), else its label's first character."""
    return MARKS.get(label, label[:1])


def picture_lines(lines: dict[str, list[float]], height: int = PLOT_H) -> list[str]:
    """Speedup (rows) against α from 0 to 1 (columns): each line by its mark(), the break-even
    speedup 1 as a row of dashes."""
    if not lines:
        return ["(nothing to draw: no type drafts)"]
    width = len(next(iter(lines.values())))
    top = max(1.2, max(max(v) for v in lines.values()))
    bottom = min(0.0, min(min(v) for v in lines.values()))
    grid = [[" "] * width for _ in range(height)]

    def row(y: float) -> int:
        return height - 1 - round((y - bottom) / (top - bottom) * (height - 1))

    grid[row(1.0)] = ["-"] * width
    for label, ys in lines.items():
        for x, y in enumerate(ys):
            grid[row(y)][x] = mark(label)
    out = []
    for r in range(height):
        y = bottom + (height - 1 - r) / (height - 1) * (top - bottom)
        tag = "1.00x" if r == row(1.0) else f"{y:5.2f}x" if r in (0, height - 1) else ""
        out.append(f"{tag:>7} |" + "".join(grid[r]))
    out.append(" " * 8 + "+" + "-" * width)
    mid = width // 2
    out.append(" " * 9 + "α 0" + " " * (mid - 4) + "0.5" + " " * (width - mid - 4) + "1")
    return out


def wrapped(lines: Sequence[str], width: int | None) -> list[str]:
    """Each line longer than `width` wrapped at whole words, its continuation indented under it;
    a word longer than the width stays whole. None: every line whole (a file, a pipe)."""
    if width is None:
        return list(lines)
    out = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        out += textwrap.wrap(
            line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False, drop_whitespace=True
        ) or [line]
    return out


def render(plan: Plan, memory: Sequence[str], width: int | None = None) -> list[str]:
    """The whole plan, wrapped to `width` (a terminal's) or, None, with every line whole."""
    if plan.model_type:
        legend = f"{plan.model_type}, marked by n-max 1..8"
    else:
        legend = ", ".join(f"{mark(t)} {t}" for t in plan.lines())
    out = ["Cost curve (this machine)", *curve_lines(plan.curve, plan.depth), "", *memory, ""]
    out += [f"Predictions at depth {plan.depth} (α: accepted / drafted)", *table_lines(plan)]
    out += [f"  {line}" for line in LEGEND]
    by_source: dict[str, list[str]] = {}
    for t, source in plan.sources.items():
        by_source.setdefault(source, []).append(t)
    out += [f"  α of {', '.join(types)}: {source}" for source, types in by_source.items()]
    out += ["", f"Speedup against α; '-': break-even ({legend})", *picture_lines(plan.lines())]
    out += ["", *conclusion(plan)]
    return wrapped(out, width)
