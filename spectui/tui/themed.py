"""What every spectui app shares, the chat and the replay: the settings file, the themes
(shipped, the user's, Textual's own) and the overlay colours each theme gets."""

from __future__ import annotations

import time
import traceback

from rich.console import Console
from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

from spectui import __version__
from spectui.config import paths
from spectui.config.settings import load_settings, save_settings
from spectui.config.themes import ThemeFile, read_themes
from spectui.errors import UserError

DEFAULT_THEME = "spectui-dark"


def _check_color(value: str) -> tuple[bool, str | None]:
    """Whether Textual reads `value` as a colour, and if not its suggestion."""
    try:
        Color.parse(value)
    except ColorParseError as e:
        return False, e.suggested_color
    return True, None


def load_themes() -> tuple[list[Theme], list[str]]:
    """The theme files as Textual themes, and one message per skipped file. Never raises."""
    files, problems = read_themes(_check_color)
    return [_theme(t) for t in files], problems


def _theme(t: ThemeFile) -> Theme:
    c = t.colors
    return Theme(
        name=t.name,
        primary=c["primary"],
        secondary=c.get("secondary"),
        accent=c.get("accent"),
        warning=c.get("warning"),
        error=c.get("error"),
        success=c.get("success"),
        foreground=c.get("foreground"),
        background=c.get("background"),
        surface=c.get("surface"),
        panel=c.get("panel"),
        boost=c.get("boost"),
        dark=t.dark,
        variables=t.variables,
    )


class ThemedApp(App):
    CSS_PATH = "app.tcss"

    def __init__(self):
        super().__init__()
        self.settings, self._settings_problem = load_settings()

    def _handle_exception(self, error: Exception) -> None:
        """Textual's handler of an unexpected error (it ends the app with code 1); first the
        traceback goes to the crash log, which `run_reporting` names."""
        try:
            path = paths.crash_log_path()
            paths.private_dir(path.parent)
            with paths.open_private(path, "a") as log:
                log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} spectui {__version__}\n")
                log.writelines(traceback.format_exception(error))
        except OSError:
            pass  # the screen's own traceback still shows it
        super()._handle_exception(error)

    def run_reporting(self) -> int:
        """Run; the exit code, and on an unexpected error a line naming the crash log."""
        self.run()
        code = self.return_code or 0
        if code:
            Console(stderr=True, soft_wrap=True).print(
                f"error: spectui stopped on an unexpected error; its traceback is in {paths.crash_log_path()}",
                highlight=False,
            )
        return code

    def apply_themes(self) -> None:
        """Register the themes and switch to the remembered one (call from on_mount)."""
        themes, problems = load_themes()
        for theme in themes:
            self.register_theme(theme)
        for problem in problems + ([self._settings_problem] if self._settings_problem else []):
            self.notify(problem, severity="warning", timeout=8)
        wanted = self.settings.theme
        self.theme = (
            wanted
            if wanted in self.available_themes
            else (DEFAULT_THEME if DEFAULT_THEME in self.available_themes else self.theme)
        )
        self.theme_changed_signal.subscribe(self, self._remember_theme)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Overlay colours for themes without `spec-*` variables (Textual's own themes):
        taken from the theme's semantic colours, so they suit it."""
        v = self.current_theme.to_color_system().generate()
        return {
            "spec-draft": v["success"],
            "spec-ngram": v["primary"],
            "spec-target": v["foreground"],
            "spec-resampled": v["warning"],
            "spec-rejected": v["error"],
        }

    def remember(self, key: str, value) -> None:
        """Change a setting and save the settings file (a failure is a warning only)."""
        setattr(self.settings, key, value)
        try:
            save_settings(self.settings)
        except UserError as e:
            self.notify(str(e), title="Settings not saved", severity="warning")

    def _remember_theme(self, theme: Theme) -> None:
        if theme.name != self.settings.theme:
            self.remember("theme", theme.name)

    def action_cycle_theme(self) -> None:
        names = list(self.available_themes)
        self.theme = names[(names.index(self.theme) + 1) % len(names)] if self.theme in names else names[0]
        self.notify(f"Theme: {self.theme}", timeout=2)

    def action_choose_theme(self) -> None:
        self.search_themes()
