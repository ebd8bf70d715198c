"""Errors a user can cause: they end with one clear line and exit code 2, never a traceback."""


class UserError(Exception):
    """A mistake the user can fix (bad file, bad flag, missing package): the message says
    which thing is wrong and what to do."""

    exit_code = 2
