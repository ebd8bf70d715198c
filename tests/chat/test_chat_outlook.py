"""The welcome card's word on speed (chat/outlook.py, plan/loaded_pair.py): a recorded plan of
SmolLM2 and constructed curves, no model; then the card and its refresh with Pilot on a
FakeSession."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from spectui.chat import outlook as ol
from spectui.chat.starters import BY_KEY, STARTERS
from spectui.config.resolve import resolve
from spectui.engine import noise
from spectui.plan import loaded_pair, predict
from spectui.plan.acceptance import Calibration
from spectui.plan.curve import Curve, Point
from spectui.spec_config import SpecConfig
from tests.helpers.curves import costs
from tests.tui_helpers import sync

DOC = json.loads((Path(__file__).parents[1] / "data" / "plan_smollm2.json").read_text())
STEEP = Curve.from_dict(DOC["curve"])  # SmolLM2 on a 2-core CPU: t(2) = 1.7 t(1)
CAL = Calibration.from_dict(DOC["calibration"])  # its answers to the starter prompts
FAST = resolve("fast", {}).spec  # auto, its n-gram candidate at size-n 3
FAST_PLAN = ol.plan_command(resolve("fast", {}))


def test_the_side_is_the_plan_rows_word_only_where_the_timings_noise_cannot_carry_it_across_1():
    simple = FAST.with_types("ngram-simple")
    for ratio, spread, word in ((1.0, 0.06, noise.PAYS), (1.0, 0.9, noise.WITHIN)):  # a busy curve decides nothing
        e = loaded_pair.expected(costs({1: 1.0, 65: ratio}, t1=0.01, spread=spread), CAL, "ngram-simple", simple)
        assert isinstance(e, loaded_pair.Expected) and e.word == word == noise.judge(e.speedup, e.noise).word
    e = loaded_pair.expected(STEEP, CAL, "ngram-simple", simple)
    assert isinstance(e, loaded_pair.Expected) and e.word == noise.LOSES


def test_a_fixed_ngram_type_that_loses_here_says_so_with_its_noise_and_points_to_auto():
    simple = FAST.with_types("ngram-simple")
    e = loaded_pair.expected(STEEP, CAL, "ngram-simple", simple)
    # verifying a batch costs nearly a step a token
    assert isinstance(e, loaded_pair.Expected) and e.speedup < 1 - e.noise
    seen = ol.outlook(simple, STEEP, CAL, True, FAST_PLAN)
    assert seen is not None and seen.side == noise.LOSES
    assert f"ngram-simple is predicted at ×{e.speedup:.2f} (timing noise {e.noise:.0%})" in seen.line
    assert seen.line.endswith("it loses; try auto (ctrl+t), which drafts only where it pays")
    assert ol.watch(BY_KEY["1"], seen) == f"{BY_KEY['1'].watch}; {seen.watch}" and "does not" in seen.watch
    assert [ol.watch(s, seen) for s in STARTERS[1:]] == [s.watch for s in STARTERS[1:]]  # not about speed


def test_the_same_type_pays_where_a_batch_costs_one_step_and_is_near_within_the_noise():
    simple = FAST.with_types("ngram-simple")
    pays = ol.outlook(simple, costs({1: 1.0, 65: 1.0}, t1=0.01), CAL, True, FAST_PLAN)
    assert pays is not None and pays.side == noise.PAYS and pays.line.endswith(": it pays")
    near = ol.outlook(simple, costs({1: 1.0, 65: 1.0}, t1=0.01, spread=5.0), CAL, True, FAST_PLAN)
    assert near is not None and near.side == noise.WITHIN and near.line.endswith("no measurable difference from none")
    assert near.watch.endswith("within noise (timing noise 500%)")


def test_auto_cites_its_ngram_source_alone_and_never_a_loss_of_its_own():
    seen = ol.outlook(FAST, STEEP, CAL, True, FAST_PLAN)
    assert seen is not None and seen.side == noise.WITHIN
    assert seen.line.startswith("auto drafts only where this machine's costs say it pays, else runs as none")
    assert "ngram-simple alone is predicted at ×0." in seen.line and seen.line.endswith("it loses")


def test_without_a_cached_plan_the_card_says_how_to_measure_instead_of_promising():
    seen = ol.outlook(FAST, None, None, True, FAST_PLAN)
    assert seen is not None and seen.side == noise.UNKNOWN
    assert seen.line.startswith("speedup unknown on this machine: press f6 (or run `spectui plan --preset fast`")
    assert "run `spectui plan`," in ol.outlook(FAST, None, None, True, ol.plan_command(resolve("default", {}))).line


def test_without_a_plan_auto_promises_no_runs_of_drafts_it_may_not_make():
    """The fast preset's auto, on this CPU, drafted in 5 rounds of 26 ("no draft pays"): the code
    rewrite's "long runs of accepted drafts" is said with why there may be few."""
    seen = ol.outlook(FAST, None, None, True, FAST_PLAN)
    said = ol.watch(BY_KEY["1"], seen)
    assert said.startswith("long runs of accepted drafts") and "auto drafts them only where it expects a gain" in said
    ngram = ol.outlook(FAST.with_types("ngram-simple"), None, None, True, FAST_PLAN)
    assert ol.watch(BY_KEY["1"], ngram).endswith("whether they are faster here is not measured yet")


def test_the_cards_plan_command_names_the_loaded_models_where_they_are_not_the_presets():
    """A resumed fast chat runs under the default preset's name: `spectui plan` alone would
    measure the default pair, not the loaded one."""
    fast = resolve("fast", {})
    resumed = resolve("default", {}).with_values({"model": fast.model, "model_draft": None})
    assert ol.plan_command(resumed) == f"spectui plan -m {fast.model}"
    assert ol.plan_command(fast) == "spectui plan --preset fast"
    both = resolve("default", {}).with_values({"model": "/my models/t.gguf", "model_draft": "d.gguf"})
    assert ol.plan_command(both) == "spectui plan -m '/my models/t.gguf' -md d.gguf"


def test_nothing_to_say_for_none_or_a_server_and_a_reason_where_the_plan_cannot_price():
    assert ol.outlook(SpecConfig(), STEEP, CAL, True, FAST_PLAN) is None  # none
    assert ol.outlook(FAST, None, None, False, FAST_PLAN) is None  # a server's models
    mod = ol.outlook(FAST.with_types("ngram-mod"), STEEP, CAL, True, FAST_PLAN)
    assert (
        mod is not None
        and mod.line == "ngram-mod: no prediction on this machine (it drafted nothing on the starter prompts)"
    )
    model = ol.outlook(SpecConfig(types=("draft-simple",)), STEEP, CAL, True, FAST_PLAN)
    assert model is not None and "(no measured step of draft-simple's draft)" in model.line  # no draft model timed
    mtp = ol.outlook(SpecConfig(types=("draft-mtp",)), STEEP, CAL, True, FAST_PLAN)
    assert mtp is not None and "the curve does not time the target's MTP layer" in mtp.line  # the table's priced=False
    both = ol.outlook(FAST.with_types("ngram-simple,ngram-mod"), STEEP, CAL, True, FAST_PLAN)
    assert both is not None and both.side == noise.UNKNOWN and "one type at a time" in both.line


def test_a_draft_model_is_priced_at_the_n_max_in_force_within_what_the_plan_measured():
    timed = replace(STEEP, draft={64: (Point(1, 0.001, 0.1), Point(2, 0.001, 0.1))})
    with_model = replace(CAL, positions=(0.9, 0.8, 0.7, 0.6))
    seen = ol.outlook(SpecConfig(types=("draft-simple",), draft_n_max=2), timed, with_model, True, FAST_PLAN)
    assert seen is not None and "draft-simple n-max 2 is predicted at ×" in seen.line
    far = loaded_pair.expected(timed, with_model, "draft-simple", SpecConfig(types=("draft-simple",), draft_n_max=8))
    assert far == "the plan measured n-max 1 to 4"


def test_the_noise_is_the_spread_of_the_decodes_the_prediction_prices():
    pts = (Point(1, 0.01, 0.05), Point(2, 0.012, 0.3), Point(4, 0.02, 0.1), Point(5, 0.03, 0.9))
    curve = Curve({64: pts}, {}, 0.0, 0.0)
    from spectui.plan.predict import Drafting

    assert predict.timing_spread(curve, Drafting(0.5, 3.0, 1.0, False)) == 0.1  # b = 1 and b = 4
    assert predict.timing_spread(curve, Drafting(0.5, 1.0, 1.0, False)) == 0.3  # b = 2


# --- the card ------------------------------------------------------------------------------


@pytest.mark.usefixtures("dirs")  # conftest.py: own config, data and cache dirs
@sync
async def test_the_welcome_card_shows_the_prediction_and_follows_the_spec_type(fake, setup):
    from spectui.tui.app import SpecApp

    app = SpecApp(setup, session=fake)
    state = app.controller.state
    state.curve, app.controller.switcher.calibration, state.plannable = STEEP, CAL, True  # as a cached plan loads them
    state.setup = replace(state.setup, spec=FAST.with_types("ngram-simple"))
    fake.configure(state.setup.spec)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        line = app.query_one("#welcome-outlook").visual.plain
        assert "ngram-simple is predicted at ×0." in line and "it loses; try auto" in line
        assert "drafts show, a speedup does not" in app.query_one("#starter-1").visual.plain
        app.controller.switcher.set_spec_type("auto")  # the card follows the configuration in force
        await pilot.pause()
        assert app.query_one("#welcome-outlook").visual.plain.startswith("auto drafts only where")
        state.curve = None  # no plan cached: the card offers the command, promises nothing
        app.controller.switcher.set_spec_type("ngram-simple")
        await pilot.pause()
        line = app.query_one("#welcome-outlook").visual.plain
        assert line.startswith("speedup unknown on this machine: press f6")
        app.controller.switcher.set_spec_type("none")
        await pilot.pause()
        assert not app.query_one("#welcome-outlook").display


# --- measuring from the chat (f6) -------------------------------------------------------------


def test_the_plans_command_line_resolves_to_the_setup_the_chat_runs():
    from spectui.chat.planning import plan_argv
    from spectui.cli.main import build_parser
    from spectui.cli.setup_flags import overrides_from

    chat = resolve("fast", {"seed": -1, "threads": 1, "system": "Be brief.\nVery.", "temp": 0.0})
    argv = plan_argv(chat)
    assert argv[1:4] == ("-m", "spectui", "plan")
    args = build_parser().parse_args(list(argv[3:]))
    assert resolve(args.preset, overrides_from(args)).values() == chat.values()  # the plan's cache key and calibration


def test_a_failed_plan_is_its_own_error_line_and_a_stopped_one_ends_at_once():
    import sys
    import threading
    import time

    from spectui.chat.planning import PlanRun

    fails = (sys.executable, "-c", "import sys; print('measuring', file=sys.stderr); sys.exit('error: no model')")
    assert PlanRun(fails).wait() == "`spectui plan` failed (exit 1): error: no model"
    steps: list[str] = []
    writes = "import sys; print('loaded the pair: 1.0 s', file=sys.stderr); print('Cost curve')"
    assert PlanRun((sys.executable, "-c", writes)).wait(steps.append) is None
    assert steps == ["loaded the pair: 1.0 s"]  # each line of the plan's stderr, as it writes it
    slow, said = PlanRun((sys.executable, "-c", "import time; time.sleep(60)")), []
    waiting = threading.Thread(target=lambda: said.append(slow.wait()))
    t0 = time.monotonic()
    waiting.start()
    while slow._process is None:
        time.sleep(0.01)
    slow.stop()  # the chat quits
    waiting.join(10)
    assert said == ["`spectui plan` was stopped"] and time.monotonic() - t0 < 10


@pytest.mark.usefixtures("dirs")
@sync
async def test_f6_measures_this_machine_while_messages_wait_then_the_card_predicts(fake, setup, monkeypatch):
    import threading

    from spectui.chat import planning
    from spectui.tui.app import SpecApp
    from tests.textual_private import notices
    from tests.tui_helpers import answered, send, until

    release, ran = threading.Event(), []

    def wait(run, progress):
        ran.append(run.argv)
        progress("loaded the pair: 1.0 s (elapsed 2 s, about 40 s left)")
        release.wait(10)
        return None

    monkeypatch.setattr(planning.PlanRun, "wait", wait)
    app = SpecApp(setup, session=fake)
    state = app.controller.state
    state.plannable = True  # a local pair, no plan cached
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.query_one("#welcome-outlook").visual.plain.startswith("speedup unknown on this machine: press f6")
        await pilot.press("f6")
        await until(pilot, lambda: bool(ran))
        assert ran[0][3:6] == ("plan", "--preset", setup.preset) and state.measuring
        await until(pilot, lambda: "about 40 s left" in app.chat_screen.query_one("#status").visual.plain)
        assert "measuring this machine: loaded the pair" in app.chat_screen.query_one("#status").visual.plain
        await send(pilot, app, "Hello")  # waits: a turn beside the plan would skew its timings
        assert app.controller.conversation.queued == ["Hello"] and not app.controller.state.chat.messages
        assert "sent when the measurement ends" in app.chat_screen.query_one("#outbox").visual.plain  # no answer runs
        monkeypatch.setattr(
            loaded_pair, "for_pair", lambda setup, status, prompts: (STEEP, CAL, True)
        )  # what the plan cached
        release.set()
        await until(pilot, lambda: any(n.title == "Measured" for n in notices(app)))  # the notice's message
        assert state.curve is STEEP and not state.measuring
        await answered(pilot, app)  # then the message goes
        assert [m.content for m in app.controller.state.chat.messages if m.role == "user"] == ["Hello"]
        await pilot.press("f6")  # measured already: says how to measure again, runs nothing
        assert len(ran) == 1 and any("--remeasure" in n.message for n in notices(app))
