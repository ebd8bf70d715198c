"""spectui: a terminal chat app that makes speculative decoding visible."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("spectui")
except PackageNotFoundError:  # running from a checkout without an install
    __version__ = "0.0.0+checkout"
