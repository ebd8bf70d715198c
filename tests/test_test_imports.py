"""No test module imports another: what several share lives in tests/helpers/ or a conftest
fixture, so a test module can move, split or go without breaking the ones beside it. Code a
test runs in a child process (a string) counts too."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# `from tests.x.test_y import …`, `import tests.x.test_y`, `from tests.x import test_y`
TEST_MODULE = re.compile(
    r"^\s*(?:from\s+tests(?:\.\w+)*\.test_\w+\s+import\b|import\s+tests(?:\.\w+)*\.test_\w+"
    r"|from\s+tests(?:\.\w+)*\s+import\s+\(?\s*test_\w+)",
    re.MULTILINE,
)


def importing(sources: dict[str, str]) -> dict[str, list[str]]:
    """Each source that imports a test module, with those imports."""
    found = {name: TEST_MODULE.findall(text) for name, text in sources.items()}
    return {name: [line.strip() for line in lines] for name, lines in found.items() if lines}


def test_no_test_module_imports_another():
    sources = {str(p.relative_to(TESTS.parent)): p.read_text(encoding="utf-8") for p in TESTS.rglob("*.py")}
    assert len(sources) > 100  # the scan sees the tests
    assert importing(sources) == {}


def test_each_way_of_importing_a_test_module_is_found():
    sources = {
        "from": "from tests.models.test_bench import QA_A\n",
        "import": "def f():\n    import tests.unit.test_stats as s\n",
        "from the folder": "from tests.tui import (\n    test_tui_ab,\n)\n",
        "in a child's code": 'KILLED = """\nfrom tests.tui.test_tui_safety import slow_app\n"""\n',
        "helpers": "from tests.helpers.events import a_round\nfrom tests import model_guard\n",
        "a conftest": "from tests.conftest import SMOL\n",
    }
    assert set(importing(sources)) == {"from", "import", "from the folder", "in a child's code"}
