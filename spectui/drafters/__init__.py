"""Drafters: pure-Python ports of llama.cpp's ngram-* speculative types, the draft model and
the hidden-state heads; they stand on spectui.llama alone."""
