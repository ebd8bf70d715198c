import sys

try:
    from spectui.cli.main import main
except KeyboardInterrupt:  # Ctrl+C before main() can catch it
    sys.exit(130)

sys.exit(main())
