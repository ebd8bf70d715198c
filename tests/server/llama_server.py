"""The llama-server the server tests start: tests/server/build.sh's binary, on 127.0.0.1 at a
free port, one process per `Server`, killed at its end (benchmarks/concurrency_accuracy.py
starts its servers the same way)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from spectui.llama.sampling import SamplingParams

REPO = Path(__file__).resolve().parents[2]
GREEDY = SamplingParams(temp=0.0)


def built() -> str | None:
    """The built llama-server's path, or None before tests/server/build.sh ran."""
    r = subprocess.run(["bash", str(REPO / "tests/server/build.sh"), "--cached"], capture_output=True, text=True)
    return None if r.returncode else r.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A llama-server process on a free port, killed at the end."""

    def __init__(self, binary: str, model: Path, *args: str, env: dict | None = None, metrics: bool = True):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [
                binary,
                "-m",
                str(model),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "-c",
                "2048",
                "-np",
                "1",
                "-t",
                "2",
                *(["--metrics"] if metrics else []),
                *args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        deadline = time.monotonic() + 120
        while True:
            assert self.proc.poll() is None, "llama-server exited at start"
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "llama-server did not come up"
            time.sleep(0.3)

    def metrics(self) -> dict[str, float]:
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as r:
            text = r.read().decode()
        return {m.group(1): float(m.group(2)) for m in re.finditer(r"^llamacpp:(\w+) ([\d.e+-]+)$", text, re.M)}

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
