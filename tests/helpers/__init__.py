"""What several test modules share, as plain code: builders of events, curves and bench runs,
a child `spectui` process. A test module imports from here or takes a conftest fixture, never
from another test module (tests/test_test_imports.py)."""
