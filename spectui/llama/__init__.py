"""The ground floor: llama.cpp as spectui uses it, and the only package that imports `llama_cpp`.

Models, contexts and their logits rows, the detokenizer, the hidden-state API, sampling and
verification over rows, and llama.cpp's own rules (spec type names and priority, which draft
fits which target). It imports nothing of spectui above it; the drafters and the engine stand on it.
"""
