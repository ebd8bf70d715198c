"""Settings: defaults, round trip, atomic write, and broken files falling back."""

import os

import pytest

from spectui.config.settings import Settings, load_settings, save_settings, settings_path
from spectui.errors import UserError


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTUI_CONFIG_DIR", str(tmp_path / "cfg"))
    return tmp_path / "cfg"


def test_no_file_gives_defaults():
    assert load_settings() == (Settings(), None)


def test_round_trip(config_dir):
    path = save_settings(Settings(theme="spectui-cb", show_rejected=False))
    assert path == config_dir / "settings.toml"
    settings, message = load_settings()
    assert message is None
    assert settings == Settings(theme="spectui-cb", show_rejected=False)
    assert [p.name for p in config_dir.iterdir()] == ["settings.toml"]  # no temp file left


def test_the_file_keeps_its_keys_and_their_order(config_dir):
    """The typed settings write the file earlier versions wrote, key for key."""
    save_settings(Settings(theme="spectui-cb", record_traces=True))
    assert (config_dir / "settings.toml").read_text() == (
        'theme = "spectui-cb"\nshow_overlay = true\nshow_rejected = true\nshow_panel = true\nrecord_traces = true\n'
        "show_strip = true\n"  # added since: a file without it keeps the strip on
    )


def test_save_rejects_unknown_keys_and_wrong_types():
    with pytest.raises(AttributeError):
        Settings().colour = "red"
    with pytest.raises(ValueError, match="'show_panel' must be true or false"):
        save_settings(Settings(show_panel="yes"))
    assert not settings_path().exists()


def test_failed_save_keeps_the_old_file(monkeypatch):
    save_settings(Settings(theme="spectui-light"))

    def boom(*args):
        raise OSError(13, "Permission denied")

    with monkeypatch.context() as m, pytest.raises(UserError, match="settings.toml.*Permission denied"):
        m.setattr(os, "replace", boom)
        save_settings(Settings(theme="spectui-cb"))
    assert load_settings()[0].theme == "spectui-light"
    assert [p.name for p in settings_path().parent.iterdir()] == ["settings.toml"]


def test_syntax_error_gives_defaults_and_names_file_and_line(config_dir):
    config_dir.mkdir()
    (config_dir / "settings.toml").write_text('theme = "spectui-cb"\nshow_panel = tru\n')
    settings, message = load_settings()
    assert settings == Settings()
    assert str(config_dir / "settings.toml") in message and "line 2" in message


def test_bad_keys_are_ignored_and_the_rest_kept(config_dir):
    config_dir.mkdir()
    (config_dir / "settings.toml").write_text(
        'theme = "spectui-cb"\nshow_panel = "no"\nfont = "big"\nshow_overlay = false\n'
    )
    settings, message = load_settings()
    assert settings == Settings(theme="spectui-cb", show_overlay=False)
    assert "'show_panel' must be true or false" in message and "unknown key 'font'" in message
