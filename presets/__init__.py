"""Shipped presets (TOML), installed as package data spectui.shipped_presets."""
