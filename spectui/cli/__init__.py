"""The command line: main.py parses, one module per command runs it."""
