"""spectui: a terminal chat app that makes speculative decoding visible."""

import os
from importlib.metadata import PackageNotFoundError, version

# llama.cpp's OpenMP threads spin while they wait for work. Spinning without bound can hold
# back a thread that needs the core (the TUI drawing, another program); not spinning at all
# (OMP_WAIT_POLICY=PASSIVE) made generation far slower (docs/performance.md). A bounded spin
# keeps nearly all the speed: a waiting thread spins 20,000 times, then sleeps. A user's own
# OMP_WAIT_POLICY or GOMP_SPINCOUNT wins. It must be set before llama.cpp's library loads, hence here.
OPENMP_DEFAULTED = not {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"} & set(os.environ)  # True: spectui's choice
if OPENMP_DEFAULTED:
    os.environ["GOMP_SPINCOUNT"] = "20000"

try:
    __version__ = version("spectui")
except PackageNotFoundError:  # running from a checkout without an install
    __version__ = "0.0.0+checkout"
