"""A model-free stand-in for llama-server on 127.0.0.1, in a thread: it answers /props,
/slots, /metrics, /apply-template and /completion in the shapes the vendored server sends
(tools/server/server-context.cpp), and can stall or reset part way through any of them.

The stream is chunked, one `data:` line per token, as cpp-httplib sends it; a token that
leaves an incomplete UTF-8 character is held back and sent with the next one that completes
it (process_token), so a chunk may stand for several tokens: `tokens_predicted` and
`timings.predicted_n` count them all. A stall waits for the server's shutdown, never for a
fixed time: the client's own (shortened) timeout is what ends it.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORDS = [b" one", b" two", b" three", b" four"]


@dataclass
class Fault:
    """`path` fails the `how` way ("stall" or "reset") from its request number `after` on
    (counting from 0), after `sent` bytes of its body, or `sent` tokens of a stream."""

    path: str
    how: str
    after: int = 0
    sent: int = 1


@dataclass
class State:
    """What one fake server answers; tests change it between requests."""

    spec_types: str = "none"
    n_ctx: int = 512
    total_slots: int = 2
    model_path: str = "/models/m.gguf"
    pieces: list[bytes] = field(default_factory=lambda: list(WORDS))  # each token's bytes
    drafts: list[tuple[int, int]] | None = None  # each token's cumulative (draft_n, draft_n_accepted)
    metrics: Callable[[], str] | None = None  # /metrics' text; None: started without --metrics
    fault: Fault | None = None
    requests: dict[str, int] = field(default_factory=dict)  # requests seen per path
    failing: threading.Event = field(default_factory=threading.Event)  # a fault has begun
    released: threading.Event = field(default_factory=threading.Event)  # stalls end


def metrics_text(drafted: int, accepted: int, drafts: int, per_pos: tuple[int, ...], decodes: int = 10) -> str:
    """A /metrics body with these speculation counters."""
    lines = [
        f"llamacpp:n_decode_total {decodes}",
        f"llamacpp:spec_decode_num_draft_tokens_total {drafted}",
        f"llamacpp:spec_decode_num_accepted_tokens_total {accepted}",
        f"llamacpp:spec_decode_num_drafts_total {drafts}",
        "llamacpp:n_busy_slots_per_decode 1",
        "llamacpp:requests_processing 0",
        "llamacpp:requests_deferred 0",
    ]
    lines += [
        f'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{{position="{i}"}} {n}' for i, n in enumerate(per_pos)
    ]
    return "\n".join(lines) + "\n"


def chunks(state: State, n_predict: int) -> list[dict]:
    """The streamed chunks of an answer of `n_predict` tokens (the pieces repeated), then the final."""
    out, pending, n_gen = [], b"", 0
    for n_gen in range(1, n_predict + 1):
        pending += state.pieces[(n_gen - 1) % len(state.pieces)]
        try:
            text = pending.decode("utf-8")
        except UnicodeDecodeError:
            continue  # an incomplete character: no chunk until a token completes it
        pending = b""
        timings = {"prompt_n": 3, "prompt_ms": 1.0, "predicted_n": n_gen, "predicted_ms": 2.0 * n_gen}
        if state.drafts:
            d, a = state.drafts[min(n_gen, len(state.drafts)) - 1]
            timings |= {"draft_n": d, "draft_n_accepted": a} if d else {}
        out.append(
            {
                "content": text,
                "tokens": [100 + n_gen],
                "stop": False,
                "tokens_predicted": n_gen,
                "tokens_evaluated": 3,
                "timings": timings,
            }
        )
    final = {"content": "", "tokens": [], "stop": True, "stop_type": "limit", "tokens_predicted": n_gen}
    return out + [final | {"tokens_evaluated": 3, "timings": {"prompt_ms": 1.0, "predicted_ms": 2.0 * n_gen}}]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked streams, as llama-server's
    state: State

    def log_message(self, *args) -> None:
        pass

    def _fault(self) -> Fault | None:
        f = self.state.fault
        key = self.path + (" stream" if getattr(self, "streaming", False) else "")
        n = self.state.requests.get(key, 0)
        self.state.requests[key] = n + 1
        if f is None or f.path != key or n < f.after:
            return None
        self.state.failing.set()
        return f

    def _fail(self, fault: Fault) -> None:
        self.wfile.flush()
        if fault.how == "stall":
            self.state.released.wait()
        else:  # an RST, as a server killed mid-answer sends: closed at once, before any FIN
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            os.close(self.connection.detach())
        self.close_connection = True

    def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
        fault = self._fault()
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if fault is None:
            self.wfile.write(body)
            return
        self.wfile.write(body[: fault.sent])
        self._fail(fault)

    def do_GET(self) -> None:
        s = self.state
        if self.path == "/props":
            props = {
                "default_generation_settings": {"n_ctx": s.n_ctx},
                "build_info": "b1-fake",
                "model_path": s.model_path,
                "total_slots": s.total_slots,
            }
            return self._send(200, json.dumps(props).encode())
        if self.path == "/slots":
            slots = [{"id": i, "speculative": s.spec_types != "none", "is_processing": False} for i in range(2)]
            return self._send(200, json.dumps(slots).encode())
        if self.path == "/metrics" and s.metrics is not None:
            return self._send(200, s.metrics().encode(), "text/plain")
        refusal = {
            "error": {
                "code": 501,
                "message": "This server does not support metrics endpoint. Start it with `--metrics`",
            }
        }
        self._send(501, json.dumps(refusal).encode())

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/apply-template":
            return self._send(200, json.dumps({"prompt": "prompt"}).encode())
        if not request.get("stream"):  # the one-token probe: the settings say how it speculates
            probe = {"content": " ", "generation_settings": {"speculative.types": self.state.spec_types}}
            return self._send(200, json.dumps(probe).encode())
        self.streaming = True
        fault = self._fault()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        n = request.get("n_predict", -1)
        for i, chunk in enumerate(chunks(self.state, n if n > 0 else 8)):
            if fault is not None and i == fault.sent:
                return self._fail(fault)
            data = f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")


class FakeLlamaServer:
    """One fake server: `url`, its `state`; `stop()` releases any stall and shuts it down."""

    def __init__(self, state: State | None = None):
        self.state = state or State()
        handler = type("Handler", (_Handler,), {"state": self.state})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"

    def stop(self) -> None:
        self.state.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()
