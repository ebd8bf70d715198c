import sys

from spectui.cli.main import main

sys.exit(main())
