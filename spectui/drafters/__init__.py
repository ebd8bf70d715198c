"""n-gram drafters: pure-Python ports of llama.cpp's ngram-* speculative types."""
