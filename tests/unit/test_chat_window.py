"""A long chat's prompt: the oldest exchanges left out once it outgrows the context, the cut
kept between turns so the KV cache keeps its prefix, and only a context's worth tokenized."""

from __future__ import annotations

from spectui.engine.chat_window import FULL, KEPT, ChatWindow

SYSTEM = {"role": "system", "content": "be brief"}


def tokenize(messages: list[dict]) -> list[int]:
    """A stand-in tokenizer: a token per character, two more per message."""
    tokenize.seen.append(len(messages))  # type: ignore[attr-defined]
    return [0] * sum(len(m["content"]) + 2 for m in messages)


tokenize.seen = []  # type: ignore[attr-defined]


def chat(n: int, size: int = 10) -> list[dict]:
    return [SYSTEM] + [{"role": ("user", "assistant")[i % 2], "content": f"{i:0{size}d}"} for i in range(n)]


def test_a_chat_that_fits_is_sent_whole():
    window = ChatWindow()
    messages = chat(7)
    assert len(window.prompt(messages, tokenize, 1000)) == len(tokenize(messages))
    assert window.left_out == 0


def test_a_chat_past_three_quarters_of_the_context_is_cut_to_half_from_a_user_message():
    window, n_ctx = ChatWindow(), 240
    messages = chat(16)  # 12 tokens a message: 16 + the system's 10 = 202 > 180
    tokens = window.prompt(messages, tokenize, n_ctx)
    assert len(tokenize(messages)) > FULL * n_ctx
    assert len(tokens) <= KEPT * n_ctx
    kept = [SYSTEM] + messages[1 + window.left_out :]
    assert len(tokens) == len(tokenize(kept)) and kept[1]["role"] == "user"
    # the most that fits: one exchange more would not
    assert len(tokenize([SYSTEM] + messages[1 + window.left_out - 2 :])) > KEPT * n_ctx


def test_the_cut_stays_while_the_chat_grows_so_the_prompt_keeps_its_prefix():
    window, n_ctx = ChatWindow(), 240
    messages = chat(16)
    window.prompt(messages, tokenize, n_ctx)
    cut = window.left_out
    prompts = []
    for n in range(17, 40):
        prompts.append(window.prompt(chat(n), tokenize, n_ctx))
        if window.left_out != cut:
            break
    assert len(prompts) > 2  # several turns on one cut...
    assert all(len(p) <= FULL * n_ctx for p in prompts)  # ...each within the context
    assert window.left_out > cut  # then a new cut, further on


def test_another_chat_or_an_edit_before_the_cut_starts_over():
    window, n_ctx = ChatWindow(), 240
    window.prompt(chat(16), tokenize, n_ctx)
    assert window.left_out
    other = [SYSTEM] + [{"role": ("user", "assistant")[i % 2], "content": "x" * 10} for i in range(12)]
    assert len(window.prompt(other, tokenize, n_ctx)) == len(tokenize(other))
    assert window.left_out == 0


def test_a_huge_chat_tokenizes_about_a_context_not_the_chat():
    window, n_ctx = ChatWindow(), 4096
    messages = chat(20_000)
    tokenize.seen.clear()  # type: ignore[attr-defined]
    tokens = window.prompt(messages, tokenize, n_ctx)
    assert 0 < len(tokens) <= KEPT * n_ctx
    assert max(tokenize.seen) < 400  # type: ignore[attr-defined]  # messages per call, never 20,000
    assert len(tokenize.seen) < 30  # type: ignore[attr-defined]


def test_a_last_message_larger_than_the_context_is_sent_alone():
    window = ChatWindow()
    messages = chat(4) + [{"role": "user", "content": "y" * 500}]
    tokens = window.prompt(messages, tokenize, 256)
    assert len(tokens) == len(tokenize([SYSTEM, messages[-1]]))  # the engine then says the context is full
