"""The UI-free core: the speculation session, its events, sampling and verification, auto,
and the llama.cpp model layer. Knows nothing of Textual, Rich or argparse.
"""
