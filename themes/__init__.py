"""Shipped themes (TOML), installed as package data spectui.shipped_themes."""
