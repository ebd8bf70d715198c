"""Will speculation pay here, and will it fit: measured costs, llama.cpp's memory projection, predictions."""
