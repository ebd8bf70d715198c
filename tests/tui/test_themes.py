"""Themes: shipped files load, broken user files are reported by name, overrides work,
every two overlay colours differ clearly (CIEDE2000, as truecolor and at 256 colours), and
the colour-blind theme survives a deuteranopia simulation."""

import asyncio
import math
from itertools import combinations

import pytest
from rich.color import Color as RichColor
from rich.color import ColorSystem
from textual.app import App, ComposeResult
from textual.color import Color
from textual.widgets import Static

from spectui.config.themes import OVERLAY_VARIABLES, overlay_variable
from spectui.engine.overlay import KINDS
from spectui.tui.themed import load_themes
from spectui.tui.widgets.overlay import STYLES

SHIPPED = ("spectui-dark", "spectui-light", "spectui-cb")


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTUI_CONFIG_DIR", str(tmp_path))
    return tmp_path


def user_theme(config_dir, filename, text):
    d = config_dir / "themes"
    d.mkdir(exist_ok=True)
    (d / filename).write_text(text, encoding="utf-8")


def by_name():
    themes, problems = load_themes()
    return {t.name: t for t in themes}, problems


def test_shipped_themes_load_with_all_overlay_variables():
    themes, problems = by_name()
    assert problems == []
    assert set(SHIPPED) <= set(themes)
    assert {themes[n].dark for n in SHIPPED} == {True, False}
    for name in SHIPPED:
        for var in OVERLAY_VARIABLES:
            Color.parse(themes[name].variables[var])  # present and a colour


def test_overlay_variable_covers_every_kind():
    assert OVERLAY_VARIABLES == tuple(overlay_variable(k) for k in KINDS)
    assert overlay_variable("rejected") == "spec-rejected"
    with pytest.raises(ValueError, match="unknown overlay kind"):
        overlay_variable("accepted")


def test_themes_work_in_a_textual_app():
    """Textual accepts the themes and resolves $spec-* in CSS. Textual's default theme
    has no spec-* variables, so the app must give defaults or CSS fails to parse."""
    themes, _ = load_themes()
    dark = next(t for t in themes if t.name == "spectui-dark")

    class Demo(App):
        CSS = "\n".join(f"#{v} {{ color: ${v}; }}" for v in OVERLAY_VARIABLES)

        def get_theme_variable_defaults(self) -> dict[str, str]:
            return {v: dark.variables[v] for v in OVERLAY_VARIABLES}

        def compose(self) -> ComposeResult:
            for v in OVERLAY_VARIABLES:
                yield Static(v, id=v)

    async def run():
        app = Demo()
        async with app.run_test() as pilot:
            for theme in themes:
                app.register_theme(theme)
                app.theme = theme.name
                await pilot.pause()
                for v in OVERLAY_VARIABLES:
                    want = Color.parse(theme.variables[v])
                    assert app.query_one(f"#{v}").styles.color.rgb == want.rgb

    asyncio.run(run())


GOOD = """
name = "mine"
primary = "#112233"
[variables]
spec-draft = "#00ff00"
"""


@pytest.mark.parametrize(
    "text, problem",
    [
        ('name = "x"\nprimary = "#112233\n', "TOML syntax error"),
        ('name = "x"\nprimary = "#112233"\nprimery = "#112233"\n', "unknown key 'primery'"),
        ('name = "x"\nprimary = "#11223"\n', "key 'primary': '#11223' is not a colour"),
        (
            'name = "x"\nprimary = "#112233"\n[variables]\nspec-rejected = "redd"\n',
            "variable 'spec-rejected': 'redd' is not a colour",
        ),
        (
            'name = "x"\nprimary = "#112233"\n[variables]\nspec-accepted = "red"\n',
            "unknown overlay variable 'spec-accepted'",
        ),
        ('name = "x"\nprimary = "#112233"\ndark = "yes"\n', "key 'dark' must be true or false"),
        ('name = "x"\nsecondary = "#112233"\n', "missing key 'primary'"),
    ],
)
def test_broken_user_theme_is_reported_by_file_and_skipped(config_dir, text, problem):
    user_theme(config_dir, "broken.toml", text)
    user_theme(config_dir, "good.toml", GOOD)
    themes, problems = by_name()
    assert len(problems) == 1
    assert "broken.toml" in problems[0] and problem in problems[0]
    assert "x" not in themes
    assert "mine" in themes and set(SHIPPED) <= set(themes)


def test_syntax_error_message_names_the_line(config_dir):
    user_theme(config_dir, "broken.toml", 'name = "x"\n\nprimary = #112233\n')
    _, problems = by_name()
    assert "line 3" in problems[0]


def test_user_theme_overrides_shipped_one_by_name(config_dir):
    user_theme(
        config_dir, "my-dark.toml", 'name = "spectui-dark"\nprimary = "#123456"\n[variables]\nspec-draft = "#0000ff"\n'
    )
    themes, problems = load_themes()
    assert problems == []
    dark = [t for t in themes if t.name == "spectui-dark"]
    assert len(dark) == 1 and dark[0].primary == "#123456"
    assert dark[0].variables["spec-draft"] == "#0000ff"


def test_user_theme_without_overlay_variables_gets_defaults(config_dir):
    user_theme(config_dir, "plain.toml", 'primary = "#123456"\ndark = false\n')
    themes, problems = by_name()
    assert problems == []
    plain = themes["plain"]  # name defaults to the file name
    light = themes["spectui-light"]
    assert all(plain.variables[v] == light.variables[v] for v in OVERLAY_VARIABLES)


# --- deuteranopia -------------------------------------------------------------------
# Machado, Oliveira & Fernandes (2009), deuteranopia at severity 1.0, on linear sRGB.
MACHADO_DEUTERANOPIA = (
    (0.367322, 0.860646, -0.227968),
    (0.280085, 0.672501, 0.047413),
    (-0.011820, 0.042940, 0.968881),
)


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _lab(linear_rgb):
    """CIELAB (D65) from linear sRGB."""
    r, g, b = linear_rgb
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t):
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def deuteranope_lab(color: str):
    lin = [_linear(c / 255) for c in Color.parse(color).rgb]
    sim = [min(1.0, max(0.0, sum(m * c for m, c in zip(row, lin)))) for row in MACHADO_DEUTERANOPIA]
    return _lab(sim)


def delta_e_deuteranopia(a: str, b: str) -> float:
    """CIE76 distance between two colours as a deuteranope sees them."""
    return sum((p - q) ** 2 for p, q in zip(deuteranope_lab(a), deuteranope_lab(b))) ** 0.5


def test_simulation_collapses_a_classic_red_green_pair():
    """The check can fail: a typical red/green pair ends up nearly the same colour."""
    assert delta_e_deuteranopia("#2ca02c", "#d62728") < 10
    assert delta_e_deuteranopia("#000000", "#ffffff") == pytest.approx(100, abs=0.1)


@pytest.mark.parametrize("accepted", ["spec-draft", "spec-ngram"])
def test_colour_blind_theme_keeps_accepted_and_rejected_apart(accepted):
    themes, _ = by_name()
    v = themes["spectui-cb"].variables
    assert delta_e_deuteranopia(v[accepted], v["spec-rejected"]) > 20


# --- every two overlay colours apart ----------------------------------------------------
CLEARLY_APART = 20  # CIEDE2000: 1 is a just-noticeable difference, 20 plainly another colour


def lab(colour: str):
    return _lab([_linear(c / 255) for c in Color.parse(colour).rgb])


def in_256_colours(colour: str) -> str:
    """What a 256-colour terminal (tmux's default) shows instead."""
    t = RichColor.parse(colour).downgrade(ColorSystem.EIGHT_BIT).get_truecolor()
    return f"#{t.red:02x}{t.green:02x}{t.blue:02x}"


def delta_e_2000(lab1, lab2) -> float:
    """CIEDE2000 (Sharma, Wu & Dalal 2005)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p, h2p = math.degrees(math.atan2(b1, a1p)) % 360, math.degrees(math.atan2(b2, a2p)) % 360
    dh = 0.0 if c1p * c2p == 0 else (h2p - h1p + 180) % 360 - 180
    d_hue = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    l_mean, cp_mean = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_mean = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_mean = (h1p + h2p) / 2
    else:
        h_mean = (h1p + h2p + (360 if h1p + h2p < 360 else -360)) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(h_mean - 30))
        + 0.24 * math.cos(math.radians(2 * h_mean))
        + 0.32 * math.cos(math.radians(3 * h_mean + 6))
        - 0.20 * math.cos(math.radians(4 * h_mean - 63))
    )
    rc = 2 * math.sqrt(cp_mean**7 / (cp_mean**7 + 25**7))
    rt = -math.sin(math.radians(60 * math.exp(-(((h_mean - 275) / 25) ** 2)))) * rc
    sl = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    sc, sh = 1 + 0.045 * cp_mean, 1 + 0.015 * cp_mean * t
    dl, dc, dhh = (l2 - l1) / sl, (c2p - c1p) / sc, d_hue / sh
    return math.sqrt(dl**2 + dc**2 + dhh**2 + rt * dc * dhh)


def test_the_colour_distance_is_ciede2000_and_can_fail():
    assert delta_e_2000((50, 2.6772, -79.7751), (50, 0, -82.7485)) == pytest.approx(2.0425, abs=1e-4)  # Sharma's pair 1
    # the old dark theme's n-gram cyan against the target's white, at 256 colours
    assert delta_e_2000(lab(in_256_colours("#39c5cf")), lab(in_256_colours("#e6edf3"))) < CLEARLY_APART


@pytest.mark.parametrize("name", SHIPPED)
def test_every_two_overlay_colours_differ_clearly(name):
    themes, _ = by_name()
    v = themes[name].variables
    for a, b in combinations(OVERLAY_VARIABLES, 2):
        for shown in (str, in_256_colours):
            distance = delta_e_2000(lab(shown(v[a])), lab(shown(v[b])))
            assert distance >= CLEARLY_APART, (name, a, b, shown.__name__, round(distance, 1))


def test_the_colour_blind_theme_tells_kinds_apart_by_more_than_hue():
    """Each two kinds differ in lightness (L* by 10 or more) or in text style (underline, strike)."""
    themes, _ = by_name()
    v = themes["spectui-cb"].variables
    for a, b in combinations(KINDS, 2):
        style_a, style_b = (set(STYLES[k].split()[1:]) for k in (a, b))
        lightness = abs(lab(v[overlay_variable(a)])[0] - lab(v[overlay_variable(b)])[0])
        assert style_a != style_b or lightness >= 10, (a, b, round(lightness, 1))
