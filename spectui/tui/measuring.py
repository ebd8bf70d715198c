"""The chat app's f6: `spectui plan` waited for in a worker thread, each step it writes shown
in the status line as it writes it (the plan takes about a minute), then its end."""

from __future__ import annotations

from textual import work
from textual.app import App

from spectui.chat.controller import ChatController
from spectui.chat.planning import PlanRun
from spectui.tui.messages import PlanMeasured, PlanProgress


class Measuring(App):
    """What SpecApp does for f6; the app owns the controller."""

    controller: ChatController

    @work(thread=True, exclusive=True, group="plan", exit_on_error=False)
    def _measure(self, run: PlanRun) -> None:
        self.post_message(PlanMeasured(run.wait(lambda step: self.post_message(PlanProgress(step)))))

    def on_plan_measured(self, msg: PlanMeasured) -> None:
        self.controller.measured(msg.error)

    def on_plan_progress(self, msg: PlanProgress) -> None:
        self.controller.switcher.measuring_status(msg.step)

    def action_measure(self) -> None:
        self.controller.switcher.measure()
