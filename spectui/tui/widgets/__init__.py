"""Widgets shared by the screens, each with its CSS: transcript, messages, overlay, stats, input."""
