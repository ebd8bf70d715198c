"""A loaded GGUF model: its vocabulary, metadata and chat template, read through llama.cpp."""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

import llama_cpp  # noqa: E402  (after the stdlib: its import prints nothing by itself)
import numpy as np

from spectui.errors import UserError
from spectui.llama import devices, runtime
from spectui.llama.gguf import check_gguf_file


class Model:
    """A loaded GGUF model: vocabulary, metadata and chat template."""

    def __init__(
        self,
        path: str | os.PathLike,
        n_gpu_layers: int = -1,
        vocab_only: bool = False,
        progress: Callable[[float], None] | None = None,
    ):
        """`progress(fraction)`: called as llama.cpp loads the weights (a UI's progress bar)."""
        self.path = Path(path)
        check_gguf_file(self.path)
        params = llama_cpp.llama_model_default_params()
        params.n_gpu_layers = n_gpu_layers
        params.vocab_only = vocab_only  # enough for the tokenizer and the compatibility check
        params.load_mtp = True  # a target's NextN layers, if it has any, for draft-mtp
        if progress is not None:  # kept in a local until the load returns: ctypes must not free it
            on_progress = llama_cpp.llama_progress_callback(lambda fraction, _data: progress(fraction) or True)
            params.progress_callback = on_progress
        runtime.forget_errors()
        ptr = llama_cpp.llama_model_load_from_file(str(self.path).encode(), params)
        if not ptr:
            why = runtime.last_error() or "llama.cpp could not read it"
            raise UserError(f"cannot load model {self.path}: {why} (is the file truncated or corrupt?)")
        self.ptr = ptr
        self.vocab = llama_cpp.llama_model_get_vocab(ptr)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.n_ctx_train = llama_cpp.llama_model_n_ctx_train(ptr)
        self.arch = self.meta("general.architecture") or "?"
        self.name = self.meta("general.name") or self.path.stem
        self.size = llama_cpp.llama_model_size(ptr)
        self.n_embd = llama_cpp.llama_model_n_embd(ptr)
        self.n_layer = llama_cpp.llama_model_n_layer(ptr)
        self.n_params = llama_cpp.llama_model_n_params(ptr)
        # llama.cpp offloads the output layer last: only when more layers than the repeating ones go
        self.output_on_gpu = bool(llama_cpp.llama_supports_gpu_offload()) and (
            n_gpu_layers < 0 or n_gpu_layers > self.n_layer
        )
        # the GPU devices llama.cpp spreads its offloaded layers over (all of them, by default)
        self.devices = tuple(d.name for d in devices.gpus()) if n_gpu_layers and not vocab_only else ()
        self.on_vulkan = any(name.startswith("Vulkan") for name in self.devices)
        if self.on_vulkan and runtime.SERIALIZED_BY_SPECTUI:
            runtime.note(f"{self.path.name}: llvmpipe: ggml-vulkan's submissions one at a time ({runtime.SERIALIZE}=1)")
        self._pieces: dict[int, bytes] = {}
        self._eog: dict[int, bool] = {}

    def close(self) -> None:
        if getattr(self, "ptr", None):
            llama_cpp.llama_model_free(self.ptr)
            self.ptr = None

    def meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(4096)
        n = llama_cpp.llama_model_meta_val_str(self.ptr, key.encode(), buf, len(buf))
        if n < 0:
            return None
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            llama_cpp.llama_model_meta_val_str(self.ptr, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", "replace")

    @property
    def description(self) -> str:
        buf = ctypes.create_string_buffer(256)
        llama_cpp.llama_model_desc(self.ptr, buf, len(buf))
        return buf.value.decode("utf-8", "replace")

    @property
    def file_type(self) -> str:
        """The GGUF's general.file_type as llama.cpp names it ("Q4_K_M"), else the description's tail."""
        names = {
            getattr(llama_cpp, n): n.removeprefix("LLAMA_FTYPE_").removeprefix("MOSTLY_")
            for n in dir(llama_cpp)
            if n.startswith("LLAMA_FTYPE_")
        }
        file_type = self.meta("general.file_type")
        if file_type is not None and file_type.isdigit() and int(file_type) in names:
            return names[int(file_type)]
        return self.description.split(" ", 2)[-1]

    # vocabulary

    @property
    def vocab_type(self) -> int:
        return llama_cpp.llama_vocab_type(self.vocab)

    @property
    def add_bos(self) -> bool:
        return bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))

    @property
    def add_eos(self) -> bool:
        return bool(llama_cpp.llama_vocab_get_add_eos(self.vocab))

    @property
    def bos(self) -> int:
        return llama_cpp.llama_vocab_bos(self.vocab)

    @property
    def eos(self) -> int:
        return llama_cpp.llama_vocab_eos(self.vocab)

    def token_text(self, token: int) -> bytes:
        """The vocabulary entry as stored (used by the compatibility check)."""
        return llama_cpp.llama_vocab_get_text(self.vocab, token) or b""

    def is_eog(self, token: int) -> bool:
        r = self._eog.get(token)
        if r is None:
            r = self._eog[token] = bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))
        return r

    @functools.cached_property
    def eog_tokens(self) -> np.ndarray:
        """Every end-of-generation token, found as llama.cpp finds them for --ignore-eos (a
        scan of the vocabulary, once)."""
        is_eog, vocab = llama_cpp.llama_vocab_is_eog, self.vocab
        return np.array([t for t in range(self.n_vocab) if is_eog(vocab, t)], dtype=np.intp)

    def tokenize(self, text: str, add_special: bool = True, parse_special: bool = True) -> list[int]:
        data = text.encode("utf-8")
        n_max = len(data) + 8
        buf = (llama_cpp.llama_token * n_max)()
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, n_max, add_special, parse_special)
        if n < 0:
            buf = (llama_cpp.llama_token * -n)()
            n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, -n, add_special, parse_special)
        return list(buf[:n])

    def piece(self, token: int) -> bytes:
        """Bytes of one token as text (control tokens render as nothing)."""
        b = self._pieces.get(token)
        if b is None:
            buf = ctypes.create_string_buffer(64)
            n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
            if n < 0:
                buf = ctypes.create_string_buffer(-n)
                n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
            b = self._pieces[token] = buf.raw[:n]
        return b

    def detokenize(self, tokens: Sequence[int]) -> str:
        return b"".join(self.piece(t) for t in tokens).decode("utf-8", "replace")

    # chat

    def format_chat(self, messages: list[dict]) -> str:
        """The model's own chat template (GGUF metadata), ready for the assistant's turn."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        from llama_cpp.llama_types import ChatCompletionRequestMessage

        template = self.meta("tokenizer.chat_template") or _CHATML
        bos = self.piece(self.bos).decode("utf-8", "replace") if self.bos >= 0 else ""
        eos = self.piece(self.eos).decode("utf-8", "replace") if self.eos >= 0 else ""
        try:
            fmt = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
            # role/content dicts, the shape the template reads (llama_cpp types them as TypedDicts)
            return fmt(messages=cast(list[ChatCompletionRequestMessage], messages)).prompt
        except Exception as e:  # a broken template inside a user's GGUF
            raise UserError(f"the chat template of {self.path.name} failed: {e}") from e

    def tokenize_chat(self, messages: list[dict]) -> list[int]:
        text = self.format_chat(messages)
        bos_text = self.piece(self.bos).decode("utf-8", "replace") if self.add_bos else ""
        # Templates that write BOS themselves must not get a second one.
        add_special = not (bos_text and text.startswith(bos_text))
        return self.tokenize(text, add_special=add_special, parse_special=True)


_CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
