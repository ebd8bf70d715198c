"""spectui: a terminal chat app that makes speculative decoding visible."""

import os
from importlib.metadata import PackageNotFoundError, version

# llama.cpp's OpenMP threads spin while they wait. When anything else wants a core (the
# TUI drawing, a second model, another program) a spinning thread holds back the one it
# waits for, and generation collapses (measured here: 64 tokens took over 120 s instead of
# 3 s). Passive waiting costs little and keeps speed steady; a user's own setting wins.
# It must be set before llama.cpp's library loads, hence here.
OMP_WAIT_POLICY_DEFAULTED = "OMP_WAIT_POLICY" not in os.environ  # True: spectui's choice, not yours
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

try:
    __version__ = version("spectui")
except PackageNotFoundError:  # running from a checkout without an install
    __version__ = "0.0.0+checkout"
