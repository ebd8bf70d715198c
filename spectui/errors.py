"""Errors a user can cause: they end with one clear line and exit code 2, never a traceback."""


class UserError(Exception):
    """A mistake the user can fix (bad file, bad flag, missing package): the message says
    which thing is wrong and what to do."""

    exit_code = 2


class Failure(UserError):
    """Something outside spectui failed part way (a server that stalls or resets, an output
    that cannot be written after all): one line as any error, but exit 1, as a failed answer."""

    exit_code = 1


def named(value: object) -> str:
    """A name the user gave, for an error's one line: as given, or quoted with escapes where it
    holds a line break or another character that does not print."""
    text = str(value)
    return text if text.isprintable() else repr(text)
