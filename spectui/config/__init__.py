"""What is read from or written to the user's disk, as plain data: paths, the typed Setup
and its flags, presets, settings, themes and embedded models.
"""
