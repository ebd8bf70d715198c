"""The UI-free core above the drafters: the speculation session, its events and statistics,
auto, and a llama-server as a session. Knows nothing of Textual, Rich or argparse.
"""
