import sys

from spectui.cli import main

sys.exit(main())
