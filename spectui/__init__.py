"""spectui: a terminal chat app that makes speculative decoding visible."""

import os
from importlib.metadata import PackageNotFoundError, version

# A bounded OpenMP spin: unbounded spinning holds back the TUI's thread, no spinning slows
# generation (docs/performance.md). Set before llama.cpp's library loads; the user's own wins.
OPENMP_DEFAULTED = not {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"} & set(os.environ)  # True: spectui's choice
if OPENMP_DEFAULTED:
    os.environ["GOMP_SPINCOUNT"] = "20000"

try:
    __version__ = version("spectui")
except PackageNotFoundError:  # running from a checkout without an install
    __version__ = "0.0.0+checkout"
