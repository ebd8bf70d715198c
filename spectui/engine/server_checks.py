"""What a comparison of llama-servers is refused for before any request is measured: the same
server given twice, servers of different models, answers longer than a slot. The bench checks
them with --concurrency and without, so the two never disagree."""

from __future__ import annotations

import socket

from spectui.engine.server_wire import ServerInfo, server_url
from spectui.errors import UserError


def _address(url: str) -> tuple[frozenset[str], int, str]:
    """Where a URL leads: its host's addresses (localhost is 127.0.0.1), port and path."""
    parsed = server_url(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    host = parsed.hostname or ""
    try:
        found = frozenset(str(a[4][0]) for a in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
    except OSError:  # not resolved: connecting says so
        found = frozenset()
    return found | {host}, port, parsed.path.rstrip("/")


def refuse_twice(urls: list[str]) -> None:
    """The same server given twice (also as 127.0.0.1 and localhost) would be compared with
    itself: refused before connecting, saying so."""
    seen: list[tuple[str, tuple[frozenset[str], int, str]]] = []
    for url in urls:
        hosts, port, path = _address(url)
        for other, (other_hosts, other_port, other_path) in seen:
            if (port, path) == (other_port, other_path) and hosts & other_hosts:
                raise UserError(
                    f"--server gives the same llama-server twice ({other} and {url}): give one URL per server, "
                    "e.g. one started with --spec-type none and one speculating"
                )
        seen.append((url, (hosts, port, path)))


def model_file(info: ServerInfo) -> str:
    """The server's model file name (aliases differ between servers running the same file)."""
    return (info.model_path.replace("\\", "/").rsplit("/", 1)[-1]) or info.model


def refuse_other_models(servers: list[ServerInfo]) -> None:
    """Servers compared must run the same model: else the gap is the models', not the speculation's."""
    names = [model_file(s) for s in servers]
    if len(set(names)) > 1:
        each = ", ".join(f"{s.url}: {name}" for s, name in zip(servers, names))
        raise UserError(
            f"the servers run different models ({each}): start them with the same -m, one with --spec-type none"
        )


def refuse_long_answers(n_predict: int, servers: list[ServerInfo]) -> None:
    """Answers of `n_predict` tokens must fit a slot's context (its -c / -np), prompt aside: a
    bench finds out before its warm-up, not after."""
    for s in servers:
        if s.n_ctx and n_predict >= s.n_ctx:
            raise UserError(
                f"-n {n_predict} does not fit {s.url}'s slots of {s.n_ctx} tokens (its -c divided by -np): "
                f"give -n below {s.n_ctx}, or restart the server with a larger -c"
            )
