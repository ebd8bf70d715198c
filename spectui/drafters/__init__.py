"""Drafters: pure-Python ports of llama.cpp's ngram-* speculative types, and the draft model."""
