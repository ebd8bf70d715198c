"""The stats panel (chat), its one-line form for narrow terminals, and the compact stats
(each A/B side): pure functions from a turn's events to Content, and the widgets that show them.

Everything is derived from the events with engine.stats, so the panel agrees with `spectui run`
and the benchmark. The widgets re-render from an attribute the screen sets (`panel.state`).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from spectui.chat.panel import PanelState, plain_step_s, speedup_reading
from spectui.engine import ab, noise, stats
from spectui.engine.events import Event, Round, TurnEnd
from spectui.spec_types import BASELINE
from spectui.tui.widgets.gauges import (
    LABEL,
    MUTED,
    WINDOW,
    bar,
    num,
    pct,
    position_bar,
    rolling_tok_per_s,
    row,
    section,
    sparkline,
)
from spectui.tui.widgets.overlay import legend_lines
from spectui.tui.widgets.redraw import update_in_place
from spectui.tui.widgets.server_rows import server_lines, server_short
from spectui.tui.widgets.stored_rows import stored_lines
from spectui.words import plural

MAX_POSITIONS = 8  # per-position bars shown; longer drafts are summarised in one line


def _n_max_words(spec) -> str:
    """The draft n-max as the panel says it: the number, or why none bounds the drafts."""
    if spec.uses_n_max:
        return str(spec.draft_n_max)
    return "- (no drafting)" if spec.types == (BASELINE,) else "- (n-gram sizes)"


def render(state: PanelState) -> Content:
    spec, events, w = state.spec, state.events, state.width
    rounds = stats.rounds_of(events)
    summary = stats.summarize(events) if events else None
    end = next((e for e in events if isinstance(e, TurnEnd)), None)
    lines: list[Content] = [
        section("Speculation"),
        row("spec type", Content.styled(spec.label, "bold")),
        row("draft n-max", _n_max_words(spec)),
        row("verify", state.verify),
        Content(""),
    ]

    if summary is None:
        lines += [section("This turn"), *stored_lines(state.stored, w, MAX_POSITIONS)]
        lines += _plan(state) + [Content("")]
    else:
        state_line = "live" if end is None else f"{end.stop_reason.value}, {plural(summary.n_generated, 'token')}"
        lines += [section("This turn").append(Content.styled(f"  {state_line}", MUTED))]
        n_acc, n_dr, rate = stats.rolling_acceptance(rounds, WINDOW) if rounds else (0, 0, None)
        lines += [
            row(f"last {plural(min(len(rounds), WINDOW), 'round')}", f"{pct(rate)}  {n_acc}/{n_dr}"),
            row("turn", f"{pct(summary.acceptance_rate)}  {summary.n_accepted}/{summary.n_drafted}"),
            *_plan(state),
        ]
        # A live turn keeps its first rounds' lines from the start, so that updates while
        # the answer streams need no layout pass (streaming.py: the model's CPU time).
        lines += [Content(" ") + line for line in sparkline(rounds, w - 1)] or [Content("")]
        lines.append(row("mean acc. len", num(summary.mean_acceptance_length, ".2f")))
        per_pos = summary.per_position
        lines += [position_bar(i, p, w) for i, p in enumerate(per_pos[:MAX_POSITIONS])]
        expected = min(spec.draft_n_max, MAX_POSITIONS) if end is None and spec.uses_n_max else 0
        for i in range(len(per_pos), expected):
            lines.append(Content.assemble((f" #{i + 1:<3}", MUTED), bar(0, w - 10), ("    -", MUTED)))
        if len(per_pos) > MAX_POSITIONS:
            rest = per_pos[MAX_POSITIONS:]
            which = f"#{MAX_POSITIONS + 1}" + (f"-{len(per_pos)}: mean" if len(rest) > 1 else ":")  # not "#9-9"
            lines.append(Content.styled(f" {which} {sum(rest) / len(rest):.0%}", MUTED))
        lines += _speed(state, summary, events, rounds) + [Content("")]
    if state.server is not None:
        lines += server_lines(state.server, w, MAX_POSITIONS) + [Content("")]

    lines += [section("Context")]
    if state.n_ctx and state.n_past is None:
        lines.append(row("tokens", f"- / {state.n_ctx}"))
        lines.append(Content.styled(" counted at the next answer", MUTED))
    elif state.n_ctx and state.n_past is not None:
        used = state.n_past / state.n_ctx
        lines.append(Content.assemble(" ", bar(used, w - 8), f" {used:4.0%}"))
        lines.append(row("tokens", f"{state.n_past} / {state.n_ctx}"))
    lines += [Content(""), section("Memory")]
    lines += [Content(" " + line) for line in state.memory.splitlines()]
    lines += [Content(""), section("Legend")] + legend_lines()
    return Content("\n").join(lines)


def _plan(state: PanelState) -> list[Content]:
    """Break-even acceptance and the speedup predicted at this turn's, from `spectui plan`'s
    cached curve: two rows, one muted line where they cannot be shown, nothing for `none`."""
    if (reading := state.plan()) is None:
        return []
    if reading.why:
        return [Content.styled(f" {reading.why}", MUTED)]
    be, x = reading.shown
    predicted = Content.assemble((x, "bold"), " ", (reading.word, _side_style(reading.word)))
    return [row("break-even", be.rjust(4)), row("predicted", predicted)]


def _side_style(word: str) -> str:
    return "bold $success" if word == noise.PAYS else "bold $error" if word == noise.LOSES else MUTED


def _speed(state: PanelState, summary: stats.TurnSummary, events: list[Event], rounds: list[Round]) -> list[Content]:
    tm = summary.timing
    lines = [
        row("tok/s turn", num(tm.tok_per_s)),
        row(f"tok/s last {min(len(rounds), WINDOW)}", num(rolling_tok_per_s(events))),
        row("first token", num(tm.ttft_s, ".2f", " s")),
        row("overhead/round", num(tm.overhead_ms_per_round, ".2f", " ms")),
    ]
    total = tm.t_draft_s + tm.t_verify_s + tm.t_other_s
    if total > 0:
        d, v = tm.t_draft_s / total, tm.t_verify_s / total
        width = state.width - LABEL
        nd = round(d * width)
        nv = min(width - nd, round(v * width))
        split = Content.assemble(("█" * nd, "$spec-draft"), ("█" * nv, "$primary"), ("░" * (width - nd - nv), MUTED))
        lines.append(row("draft/verify", split))
        lines.append(Content.styled(f" draft {d:.0%}, verify {v:.0%}, other {1 - d - v:.0%}", MUTED))
    else:  # no round yet
        lines += [row("draft/verify", Content.styled("-", MUTED)), Content("")]
    baseline_turn = (
        summary.spec_types == () and all(r.configured in ((), (BASELINE,)) for r in rounds)
        if rounds
        else state.spec.types == (BASELINE,)
    )
    if baseline_turn:
        lines.append(row("speedup", Content.styled("baseline turn (none)", MUTED)))
        lines.append(Content(""))
    else:
        head, detail = speedup_reading(
            tm.tok_per_s, len(rounds), summary.n_drafted, state.baseline, state.replay, plain_step_s(rounds)
        )
        lines.append(row("speedup", Content.styled(head, "bold" if head.startswith("×") else MUTED)))
        lines.append(Content.styled(f" {detail}", MUTED))
    return lines


def status_strip(state: PanelState) -> Content:
    """The panel in one line, for terminals too narrow for it: configuration, this turn's
    acceptance and speed, the plan's break-even and prediction, the context used."""
    spec, events = state.spec, state.events
    parts: list[Content | str] = [Content.styled(spec.label, "bold")]
    if spec.uses_n_max:
        parts.append(f"n-max {spec.draft_n_max}")
    parts.append(state.verify)
    short = _plan_short(state)
    if events:
        summary = stats.summarize(events)
        acc = Content.assemble(("acc ", MUTED), pct(summary.acceptance_rate).strip())
        parts.append(acc if short is None else Content.assemble(acc, " ", short))
        parts.append(Content.assemble(num(summary.timing.tok_per_s), (" tok/s", MUTED)))
    elif short is not None:
        parts.append(short)
    if state.server is not None and (srv := server_short(state.server)) is not None:
        parts.append(srv)
    if state.n_ctx:
        used = "-" if state.n_past is None else f"{state.n_past / state.n_ctx:.0%}"
        parts.append(Content.assemble(("ctx ", MUTED), used))
    return Content(" · ").join(parts)


def _plan_short(state: PanelState) -> Content | None:
    """The break-even rows in a few cells, beside the acceptance: "≥23% ×0.91"."""
    plan = state.plan()
    if plan is None or plan.shown[0] == "-":
        return None
    be, x = plan.shown
    head = Content.styled("never pays", MUTED) if plan.never else Content.assemble(("≥", MUTED), be)
    return head if plan.speedup is None else Content.assemble(head, " ", (x, _side_style(plan.word)))


def compact(events: list[Event], one_line: bool = False) -> Content:
    """One side of the A/B screen: the panel's speed and acceptance rows, for a narrow pane;
    `one_line`: the first three, for a short screen."""
    if not events:
        return Content.styled(" waiting", MUTED)
    summary = stats.summarize(events)
    tm = summary.timing
    baseline = ab.configured_types(events) == (BASELINE,)
    rows = [
        ("tok/s turn", num(tm.tok_per_s)),
        (
            "accepted",
            "  - (the baseline)"
            if baseline
            else f"{pct(summary.acceptance_rate)}  {summary.n_accepted}/{summary.n_drafted}",
        ),
        ("mean acc. len", num(summary.mean_acceptance_length, ".2f")),
        ("first token", num(tm.ttft_s, ".2f", " s")),
        ("overhead/round", num(tm.overhead_ms_per_round, ".2f", " ms")),
    ]
    if one_line:
        return Content(" ") + Content(" · ").join(
            Content.assemble((label, MUTED), " ", value.strip()) for label, value in rows[:3]
        )
    return Content("\n").join(
        [row(label, value) for label, value in rows]
        + [Content(" ") + line for line in sparkline(stats.rounds_of(events), PanelState.width - 1)]
    )


class StatsPanel(VerticalScroll):
    """The chat's side panel; set `state` to redraw it (nothing is drawn while hidden)."""

    DEFAULT_CSS = """
    StatsPanel {
        width: 38;
        padding: 0 1;
        background: $panel;
        scrollbar-size-vertical: 1;
    }
    StatsPanel #stats {
        height: auto;
    }
    """

    state: reactive[PanelState | None] = reactive(None, always_update=True, layout=False, repaint=False)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._stats = Static(id="stats")

    def compose(self) -> ComposeResult:
        yield self._stats

    def watch_state(self, state: PanelState | None) -> None:
        if state is not None and self.display:
            update_in_place(self._stats, render(state))

    def on_show(self) -> None:
        self.watch_state(self.state)  # it was not drawn while hidden


class StatusStrip(Static):
    """The panel as one line under the transcript, shown instead of it on narrow terminals
    (app.tcss); set `state` to redraw."""

    DEFAULT_CSS = """
    StatusStrip {
        height: 1;
        padding: 0 1;
        background: $panel;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    state: reactive[PanelState | None] = reactive(None, always_update=True, layout=False, repaint=False)

    def watch_state(self, state: PanelState | None) -> None:
        if state is not None and self.display:
            self.update(status_strip(state), layout=False)

    def on_show(self) -> None:
        self.watch_state(self.state)


class CompactStats(Static):
    """One A/B side's numbers; set `events` to redraw."""

    DEFAULT_CSS = """
    CompactStats {
        height: auto;
        background: $panel;
    }
    CompactStats.-one-line {
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    events: reactive[list[Event]] = reactive(list, always_update=True, layout=False, repaint=False)

    def __init__(self, one_line: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.one_line = one_line
        self.set_class(one_line, "-one-line")

    def watch_events(self, events: list[Event]) -> None:
        update_in_place(self, compact(events, self.one_line))
