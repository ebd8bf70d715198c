"""How a llama-server's failures read: its HTTP refusals, and a server that took a request
then stalled or reset (`lost`: busy, restarting or killed), which is no fault of the user's
input but a failure (exit 1)."""

from __future__ import annotations

import http.client
import urllib.error

from spectui.bounded import TEXT_BYTES, loads_json, read_stream
from spectui.engine.events import StopReason, TurnEnd
from spectui.errors import UserError

KEY_ENV = "LLAMA_API_KEY"
LOST = (OSError, http.client.HTTPException)  # a server reached that stalls, resets or cuts its answer short
STALLED, RESET = "stopped answering", "was lost during"


def lost(url: str, what: str, e: BaseException, timeout: float) -> str:
    """The one line for a server that took a request and stopped answering `what` part way."""
    if isinstance(e, TimeoutError):
        return f"llama-server at {url} {STALLED} {what}: nothing for {timeout:g} s (busy or hung)"
    return f"the connection to {url} {RESET} {what}: {str(e) or type(e).__name__}"


def refusal(url: str, keyed: bool, path: str, e: urllib.error.HTTPError) -> str:
    """The one line for a server's HTTP error on `path`: the key it wants, a 404 (no
    llama-server there), or the message of its error body, read bounded. `keyed`: a key was sent."""
    if e.code == 401:
        return (
            f"llama-server at {url} refused the API key (401): set {KEY_ENV} to the key it was started with (--api-key)"
            if keyed
            else f"llama-server at {url} wants an API key (401): set {KEY_ENV}"
        )
    if e.code == 404:
        return f"{url} answered 404 for {path}: is it a llama-server?"
    try:
        body = read_stream(e, f"{path}'s error", TEXT_BYTES).decode("utf-8", "replace")
        message = str(loads_json(body)["error"]["message"])
    except (ValueError, KeyError, TypeError, UserError, *LOST):
        message = e.reason
    return f"llama-server at {url} refused {path} ({e.code}): {message}"


def server_lost(end: TurnEnd) -> bool:
    """The answer ended because the server stalled or reset (lost): a failure, not bad input."""
    return end.stop_reason is StopReason.ERROR and (STALLED in end.error or RESET in end.error)
