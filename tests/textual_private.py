"""The one place the tests reach Textual's private parts; each helper says which public API is missing."""

from __future__ import annotations

import gc
import sys


def notices(app) -> list:
    """The notifications the app has shown and not dismissed: Textual has App.notify and
    App.clear_notifications but no public way to read them (App._notifications)."""
    return list(app._notifications)


def settle_pilot_in_5_ms_windows() -> None:
    """Pilot's pause() and key presses wait until the process looks idle: under 5% CPU over a
    window of 20 ms (textual._wait), again and again while the app works. The same bar over
    5 ms windows settles on the same state sooner (nothing asserted changes: the waits are
    Textual's, not the tests'; docs/performance.md has the figures). Pilot takes no setting
    for its idle window."""
    import textual._wait as wait

    if hasattr(wait, "SLEEP_GRANULARITY") and hasattr(wait, "SLEEP_IDLE"):
        wait.SLEEP_GRANULARITY = 1 / 200
        wait.SLEEP_IDLE = wait.SLEEP_GRANULARITY / 20


def drop_dead_widgets_styles() -> None:
    """Textual caches StylesCache.get_inner_outer per instance (lru_cache on a method): it keeps
    the styles caches of every widget of the apps the tests have closed, with all their
    rendered lines, and every full collection of the garbage collector walks them. Emptied
    after each test, the Pilot modules run faster (docs/performance.md). Textual has no
    public way to empty that cache."""
    styles_cache = sys.modules.get("textual._styles_cache")
    get_inner_outer = getattr(getattr(styles_cache, "StylesCache", None), "get_inner_outer", None)
    if hasattr(get_inner_outer, "cache_clear"):
        get_inner_outer.cache_clear()


def orphaned_styles_with_lines() -> list:
    """Styles caches that still hold rendered lines but belong to no live widget (kept alive by
    that lru_cache): Textual has no public view of a widget's styles cache (Widget._styles_cache)."""
    from textual._styles_cache import StylesCache
    from textual.widget import Widget

    gc.collect()
    owned = {id(w._styles_cache) for w in gc.get_objects() if isinstance(w, Widget)}
    return [c for c in gc.get_objects() if isinstance(c, StylesCache) and c._cache and id(c) not in owned]
