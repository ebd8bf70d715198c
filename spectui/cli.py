"""Command line: `spectui [chat]`, `run`, `bench`, `models`, `presets`.

Flags follow llama.cpp where they overlap, so users' knowledge carries over.
"""

from __future__ import annotations

import argparse
import sys

from spectui import __version__
from spectui.errors import UserError

COMMANDS = ("chat", "run", "bench", "models", "presets")


def add_setup_flags(p: argparse.ArgumentParser) -> None:
    """Model, context, speculation and sampling flags shared by chat, run and bench.

    Defaults are None so that a preset's values show through unless a flag is given.
    """
    g = p.add_argument_group("models")
    g.add_argument("--preset", help="a preset name (spectui presets list) or a .toml file")
    g.add_argument("-m", "--model", help="target GGUF file or embedded model name")
    g.add_argument("-md", "--model-draft", help="draft GGUF file or embedded model name (same tokenizer)")
    g.add_argument("-ngl", "--n-gpu-layers", type=int, help="target layers on the GPU (-1: all)")
    g.add_argument("-ngld", "--n-gpu-layers-draft", type=int, help="draft layers on the GPU (-1: all)")
    g.add_argument("-c", "--ctx-size", type=int, help="context size in tokens (default 4096)")
    g.add_argument("-b", "--batch-size", type=int, help="logical batch size (default 512)")
    g.add_argument("-t", "--threads", type=int, help="CPU threads (default: the physical cores)")
    g.add_argument("-fa", "--flash-attn", choices=("on", "off", "auto"), help="flash attention (default auto)")
    g.add_argument("-ctkd", "--cache-type-k-draft", help="draft KV cache type for K (f16, q8_0, ...)")
    g.add_argument("-ctvd", "--cache-type-v-draft", help="draft KV cache type for V (needs -fa on if quantized)")
    s = p.add_argument_group("speculation")
    s.add_argument("--spec-type", help="none, draft-simple, ngram-simple, ngram-map-k, ngram-map-k4v, "
                                       "ngram-mod, ngram-cache (comma-separated to combine)")
    s.add_argument("--spec-default", action="store_true", help="ngram-mod with its defaults (as llama.cpp)")
    s.add_argument("--spec-draft-n-max", type=int, help="max draft length, every type (default 3)")
    s.add_argument("--spec-draft-n-min", type=int, help="min draft-model draft length (default 0)")
    s.add_argument("--spec-draft-p-min", type=float, help="min draft-model token probability (default 0.0)")
    s.add_argument("--spec-draft-sampling", choices=("greedy", "probabilistic"), help="draft token choice")
    s.add_argument("--spec-verify", choices=("match", "rejection"),
                   help="at temperature > 0: llama.cpp's sample-and-match, or exact rejection sampling")
    o = p.add_argument_group("sampling")
    o.add_argument("-n", "--n-predict", type=int, help="max tokens per answer (-1: no limit)")
    o.add_argument("--temp", type=float, help="temperature (default 0.8; 0 = greedy)")
    o.add_argument("--top-k", type=int, help="top-k (default 40)")
    o.add_argument("--top-p", type=float, help="top-p (default 0.95)")
    o.add_argument("--min-p", type=float, help="min-p (default 0.05)")
    o.add_argument("--seed", type=int, help="random seed (reproducible runs)")
    o.add_argument("--system", help="system prompt")
    v = p.add_argument_group("diagnostics")
    v.add_argument("--verbose", action="store_true", help="show llama.cpp's own log on stderr")
    v.add_argument("--log-file", help="append llama.cpp's log to this file")


def build_parser() -> argparse.ArgumentParser:
    from spectui import bench_command, chat_command, models_command, presets_command, run_command

    parser = argparse.ArgumentParser(
        prog="spectui",
        description="Chat with a local LLM and watch speculative decoding happen. "
                    "Without a command, starts the chat (spectui chat).",
    )
    parser.add_argument("--version", action="version", version=f"spectui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    chat_command.add_parser(sub)
    run_command.add_parser(sub)
    bench_command.add_parser(sub)
    models_command.add_parser(sub)
    presets_command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "chat")
    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except UserError as e:
        from rich.console import Console
        from rich.text import Text

        Console(stderr=True, soft_wrap=True).print(Text.assemble(("error: ", "bold red"), str(e)))
        return e.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
