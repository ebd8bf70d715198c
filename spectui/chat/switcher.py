"""The setup in force and its changes: the speculation (even mid-answer: the live turn is told,
for its trace), inspect, settings, presets, loading or switching the models (the loaded pair
stays until the new one works), and f6's measuring with what the plan then predicts."""

from __future__ import annotations

from dataclasses import replace

from spectui.chat import planning
from spectui.chat.outlook import Outlook, outlook, plan_command
from spectui.chat.starters import PROMPTS
from spectui.chat.state import ChatState
from spectui.chat.updates import ConfigShown, Load, Measure, StatusLine, SwitchFailed
from spectui.config import describe, presets
from spectui.config.embedded import CATALOG
from spectui.config.recent import remember_models
from spectui.config.resolve import resolve, restored
from spectui.config.setup import OPTIONS, Setup, kept_across_presets
from spectui.engine.auto import auto_costs
from spectui.engine.interface import ChatSession
from spectui.engine.session import Session
from spectui.errors import UserError
from spectui.llama.build import crash_risk
from spectui.plan import identity, loaded_pair
from spectui.plan.acceptance import Calibration
from spectui.spec_config import AUTO, MODEL_TYPES, N_MAX_LIMIT, Choice, SpecConfig, choice_types
from spectui.spec_types import Spec
from spectui.store import chat_types


class SetupSwitcher:
    def __init__(self, state: ChatState):
        self.state = state
        self.inspect = False  # record what the verifier saw (the inspector's data); chosen when a pair loads
        self._inspect_chosen = False  # shift+f7 was pressed: the person's choice stays from then on
        self.plan_run: planning.PlanRun | None = None  # f6's `spectui plan`, while it runs
        self._owns_session = False  # only sessions the chat loaded are closed by it
        self.calibration: Calibration | None = None  # the plan's, on the starter prompts: the welcome card's

    # --- the speculation -----------------------------------------------------------

    def choices(self) -> tuple[Choice, ...]:
        return self.state.session.choices() if self.state.session else ()

    def configure(self, spec: SpecConfig) -> bool:
        """Speculate as `spec` from the next round, even mid-answer."""
        s = self.state
        if s.comparing:
            s.notify(
                "The A/B view uses the models: choose its configurations there, or close it (esc).", severity="warning"
            )
            return False
        if (session := s.need_session()) is None:
            return False
        try:
            session.configure(spec)
        except UserError as e:
            s.notify(str(e), severity="error")
            return False
        s.setup = replace(s.setup, spec=spec)
        self._config_changed()
        return True

    def set_spec_type(self, types: Choice | Spec) -> None:
        self.configure(self.state.setup.spec.with_types(types))

    def cycle_spec_type(self, step: int) -> None:
        if session := self.state.need_session():
            choices = self.choices()
            if len(choices) == 1 and (server := session.status().server) and server.idle:
                self.state.notify(server.idle, title="llama-server", severity="warning", timeout=15)
                return  # one server that does not speculate: nothing to switch to, and why
            current = self.state.setup.spec.types
            i = choices.index(current) if current in choices else 0
            self.set_spec_type(choices[(i + step) % len(choices)])

    def step_n_max(self, step: int) -> None:
        spec = self.state.setup.spec
        n_max = min(max(spec.draft_n_max + step, spec.draft_n_min, 1), N_MAX_LIMIT)
        if self.configure(spec.replace(draft_n_max=n_max)) and (unused := self._n_max_unused(spec)):
            self.state.notify(f"Draft n-max {n_max}: {unused}", timeout=4)  # the panel shows no change

    def _n_max_unused(self, spec: SpecConfig) -> str | None:
        """Why n-max bounds no draft under `spec`, or None: auto drafts n-grams to their own sizes
        when no draft model, head or MTP layer is loaded."""
        if not spec.uses_n_max:
            return f"{spec.label} does not use it; draft-* types and auto do"
        if spec.types == (AUTO,) and not set(MODEL_TYPES) & choice_types(self.choices()):
            return "auto without a draft model drafts n-grams to their own sizes; it bounds a draft model's"
        return None

    def toggle_inspect(self) -> None:
        """Inspect on or off: from the next round, each round records what the verifier saw at
        each draft (p, q, the decision, the target's alternatives), for the inspector."""
        if (session := self.state.need_session()) is None:
            return
        self.inspect = session.inspect = not self.inspect
        self._inspect_chosen = True
        self.state.notify(
            "Inspect on: the next answers record why each draft was accepted or rejected (f7 reads them; "
            "a llama-server's never do)"
            if self.inspect
            else "Inspect off",
            timeout=4,
        )

    def _config_changed(self) -> None:
        s = self.state
        if s.live is not None:
            s.live.reconfigured(s.setup.spec)
        s.emit(ConfigShown())

    def outlook(self) -> Outlook | None:
        """The welcome card's word on speed here, for the configuration in force."""
        s = self.state
        return outlook(s.setup.spec, s.curve, self.calibration, s.plannable, plan_command(s.setup))

    # --- loading and switching the models ------------------------------------------

    def load(self, setup: Setup, models: tuple[str, str | None] | None = None, checked: bool = False) -> None:
        """Load `setup` (on `models`, when given) in the app's worker; the loaded pair
        stays until the new one is ready (messages typed meanwhile wait for it). Its memory is
        projected first, unless it loads as the loaded pair did or was `checked` already."""
        self.state.loading = True
        fitted = setup if checked else (self.state.setup if self.state.session is not None else None)
        self.state.emit(Load(setup, models, fitted))

    def loading_status(self, text: str) -> None:
        self.state.emit(StatusLine("loading", text))
        if self.state.session is None:
            self.state.emit(ConfigShown())

    def session_loaded(self, session: ChatSession, setup: Setup, environment: dict) -> None:
        s = self.state
        s.loading = False
        self.close()  # the old pair, now that the new one works
        # the session's spec wins: a server fixes its own speculation
        s.session, s.setup = session, replace(setup, spec=session.spec)
        s.environment, self._owns_session = environment, True
        self._read_plan(setup, session)
        if not self._inspect_chosen:  # on where its cost is measured, llama.cpp on the CPU (docs/inspect.md)
            self.inspect = not environment.get("llama_cpp", {}).get("gpu_offload", False)
        session.inspect = self.inspect  # kept across a switch of models
        s.chat.preset = s.chat.preset or setup.preset
        for note in setup.notes:
            s.notify(note, timeout=8)
        if isinstance(session, Session) and (why := crash_risk()):  # said before the first decode
            s.notify(why, title="This llama.cpp build may crash", severity="warning", timeout=30)
        files = [v for v in (setup.model, setup.model_draft) if v and v not in CATALOG]
        if files:
            try:
                remember_models(*files)
            except UserError as e:
                s.notify(str(e), title="Recent models not saved", severity="warning")
        s.emit(StatusLine())
        s.emit(ConfigShown())

    def _read_plan(self, setup: Setup, session: ChatSession) -> None:
        """What `spectui plan` cached for the loaded pair (a small file: no worker needed)."""
        s = self.state
        s.curve, self.calibration, s.plannable = loaded_pair.for_pair(setup, session.status(), PROMPTS)
        if s.curve is not None and isinstance(session, Session):
            session.seed_auto(*auto_costs(s.curve))  # auto starts from this machine's timed costs

    def measure(self) -> None:
        """f6: run `spectui plan` for the loaded pair in a worker; messages wait for it."""
        s = self.state
        if not s.idle("measure this machine") or (session := s.need_session()) is None:
            return
        if not s.plannable:
            s.notify("The plan measures models loaded on this machine, not a server's.", severity="warning")
            return
        if s.curve is not None and self.calibration is not None:
            s.notify("This pair is measured here already; `spectui plan --remeasure` measures again.", timeout=6)
            return
        s.measuring = True
        s.emit(StatusLine("measuring", "measuring this machine for the loaded pair (spectui plan: about a minute)"))
        self.plan_run = planning.PlanRun(planning.plan_argv(replace(s.setup, spec=session.spec)))
        s.emit(Measure(self.plan_run))

    def measuring_status(self, step: str) -> None:
        """f6's plan wrote a step (its time left with it): the status line shows the last."""
        if self.state.measuring:
            self.state.emit(StatusLine("measuring", f"measuring this machine: {step}"))

    def measured(self, error: str | None) -> None:
        """The plan's worker ended: read what it cached, as a load does, or say why it failed."""
        s = self.state
        s.measuring, self.plan_run = False, None
        s.emit(StatusLine())
        if error is not None or s.session is None:
            s.notify(error or "The models were closed.", title="This machine was not measured", severity="error")
            return
        self._read_plan(s.setup, s.session)
        s.notify("The welcome card and the panel now predict from this machine's costs.", title="Measured", timeout=6)
        s.emit(ConfigShown())

    def stop_measuring(self) -> None:
        """The chat ends: f6's plan, if it runs, ends with it."""
        if self.plan_run is not None:
            self.plan_run.stop()

    def session_failed(self, error: str) -> None:
        s = self.state
        s.loading = False
        if s.session is not None:  # a switch failed: the loaded pair stays
            s.emit(StatusLine())
            s.emit(SwitchFailed(error))
            return
        s.emit(ConfigShown())
        s.emit(StatusLine("failed", error))
        s.notify(error, title="Loading failed", severity="error", timeout=15)

    def close(self) -> None:
        """Free a session the chat loaded (a test's own session stays open)."""
        if self.state.session is not None and self._owns_session:
            self.state.session.close()
        self.state.session = None

    def switch_models(self, target: str, draft: str | None) -> None:
        """Load this pair in the background; the current one stays until it is ready."""
        if self.state.idle("switch models"):
            self.load(self.state.setup, (target, draft))

    # --- presets and settings --------------------------------------------------------

    def load_preset(self, name: str) -> None:
        """Resolve the preset now (bad files fail here, with the reason), load it in a worker.
        The preset sets the models, the speculation and what else its file names; every other
        setting stays as it is now (from the command line, f10 or the resumed chat). Once
        loaded, a notice lists what the switch changed."""
        s = self.state
        if not s.idle("switch presets"):
            return
        try:
            own = presets.load(name).values
            kept = {k: v for k, v in kept_across_presets(s.setup.values()).items() if k not in own}
            setup = resolve(name, kept)
        except UserError as e:
            s.notify(str(e), title=f"Preset {name}", severity="error", timeout=10)
            return
        changed = describe.changes(s.setup.values(), setup.values())
        said = f"Preset {name}: " + ("\n".join(["", *changed]) if changed else "nothing changed")
        self.load(replace(setup, notes=(*setup.notes, said)))

    def save_preset(self, name: str) -> None:
        spec = self.state.setup.spec
        try:
            path = presets.save_user(
                name, self.state.setup.values(), f"saved from the chat: {spec.label}, n-max {spec.draft_n_max}"
            )
        except UserError as e:
            self.state.notify(str(e), severity="error")
            return
        self.state.notify(str(path), title=f"Saved preset {name}", timeout=6)

    def apply_settings(self, values: dict) -> None:
        """Speculation from the next round, sampling from the next answer; the system prompt
        and n-predict are read per answer."""
        try:
            setup = self.state.setup.with_values(values)
        except UserError as e:  # a value the settings screen let through but the setup refuses
            self.state.notify(str(e), title="Settings not changed", severity="error")
            return
        changed = describe.changes(self.state.setup.values(), setup.values())
        if self._apply(setup):
            self.state.notify("\n".join(changed) or "nothing changed", title="Settings changed", timeout=4)

    def _apply(self, setup: Setup) -> bool:
        """Run the loaded models with `setup`'s settings (no reload)."""
        s = self.state
        if (session := s.need_session()) is None:
            return False
        try:
            session.configure(setup.spec)
        except UserError as e:
            s.notify(str(e), severity="error")
            return False
        session.set_sampling(setup.sampling())
        recalibrated = identity.calibration_key(setup, PROMPTS) != identity.calibration_key(s.setup, PROMPTS)
        s.setup = setup
        if recalibrated:  # other sampling: the card prices from the plan's calibration for it, if one is cached
            self._read_plan(setup, session)
        self._config_changed()
        return True

    def restore(self, chat: chat_types.Chat) -> None:
        """An opened chat's models and settings, as it last ran; the models are reloaded only
        when they (or how they load) differ."""
        s = self.state
        setup, why = restored(chat.setup, s.setup)
        if why:
            s.notify(why, title="Chat opened on the current models", severity="warning", timeout=10)
        if setup.values() == s.setup.values():
            return
        if s.session is None or any(
            getattr(setup, k) != getattr(s.setup, k) for k, f in OPTIONS.items() if f.group == "models"
        ):
            self.load(setup)
        else:
            self._apply(setup)
