"""What the empty chat's welcome card says of speed on this machine before the first answer:
the plan's prediction for the configuration in force on the starter prompts, with its noise,
or how to measure one; never a promise the plan does not make (the widget only shows it)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from spectui.chat.starters import Starter
from spectui.config.resolve import resolve
from spectui.config.setup import Setup
from spectui.engine import noise
from spectui.engine.auto import NGRAM
from spectui.errors import UserError
from spectui.plan.acceptance import Calibration
from spectui.plan.curve import Curve
from spectui.plan.loaded_pair import Expected, expected
from spectui.spec_config import AUTO, SpecConfig, unpriced

# The prediction's word (engine.noise's, as the plan's row says it), in the card's sentence.
SAID = {
    noise.PAYS: "it pays",
    noise.LOSES: "it loses",
    noise.WITHIN: f"{noise.WITHIN}, no measurable difference from none",
}


@dataclass(frozen=True)
class Outlook:
    line: str  # the card's line
    side: str  # engine.noise's word (PAYS, LOSES, WITHIN), or UNKNOWN: nothing predicted; the card styles each
    watch: str = ""  # what a starter that `cites` adds to its "watch"


def _figure(e: Expected) -> str:
    return f"×{e.speedup:.2f} (timing noise {e.noise:.0%})"


def plan_command(setup: Setup) -> str:
    """`spectui plan` for the loaded pair: the preset, and the models where they are not the
    preset's (a resumed or switched chat); without them the plan would measure another pair."""
    command = "spectui plan" + (f" --preset {setup.preset}" if setup.preset != "default" else "")
    try:
        own = resolve(setup.preset, {})
    except UserError:  # the preset file is gone: the models say it all
        own = None
    if setup.model and (own is None or (own.model, own.model_draft) != (setup.model, setup.model_draft)):
        command += f" -m {shlex.quote(setup.model)}"
        command += f" -md {shlex.quote(setup.model_draft)}" if setup.model_draft else ""
    return command


def outlook(
    spec: SpecConfig, curve: Curve | None, calibration: Calibration | None, plannable: bool, command: str
) -> Outlook | None:
    """The card's line for `spec` on the loaded pair; None where there is nothing to predict
    (`none`) or nothing a plan could measure (a server's models)."""
    if not plannable or not spec.drafting:
        return None
    if curve is None or calibration is None:  # auto may draft little: its costs here say whether drafts pay
        return Outlook(
            f"speedup unknown on this machine: press f6 (or run `{command}`, about a minute) to measure it",
            noise.UNKNOWN,
            "auto drafts them only where it expects a gain here, maybe seldom (f11: why, round by round)"
            if spec.types == (AUTO,)
            else "whether they are faster here is not measured yet",
        )
    if len(spec.drafting) > 1 and (why := unpriced(spec.types, draft_step=True)):
        return Outlook(f"predicted speed: {why.short} (`{command}` lists each)", noise.UNKNOWN)
    spec_type = spec.drafting[0]
    e = expected(curve, calibration, NGRAM if spec_type == AUTO else spec_type, spec)
    if isinstance(e, str):
        return Outlook(f"{spec.label}: no prediction on this machine ({e})", noise.UNKNOWN)
    if spec_type == AUTO:  # its n-gram source alone: auto drafts it only where it expects a gain
        return Outlook(
            f"auto drafts only where this machine's costs say it pays, else runs as none; on these prompts "
            f"{e.label} alone is predicted at {_figure(e)}: {SAID[e.word]}",
            noise.PAYS if e.word == noise.PAYS else noise.WITHIN,  # auto's own: where its source loses, none's speed
            f"auto drafts them only where they pay here ({e.label} alone: ×{e.speedup:.2f})",
        )
    now = e.word
    advice = "; try auto (ctrl+t), which drafts only where it pays" if now == noise.LOSES else ""
    watch = {
        noise.PAYS: f"here {e.label} is predicted at ×{e.speedup:.2f}: it pays",
        noise.LOSES: f"here {e.label} is predicted at ×{e.speedup:.2f}: it loses, the drafts show, a speedup does not",
        noise.WITHIN: f"here {e.label} is predicted at ×{e.speedup:.2f}, {noise.WITHIN} (timing noise {e.noise:.0%})",
    }[now]
    line = f"on this machine, on these prompts, {e.label} is predicted at {_figure(e)}: {SAID[now]}{advice}"
    return Outlook(line, now, watch)


def watch(starter: Starter, seen: Outlook | None) -> str:
    """A starter's "what to watch", with the card's prediction where the starter is about speed."""
    return f"{starter.watch}; {seen.watch}" if starter.cites and seen is not None and seen.watch else starter.watch
