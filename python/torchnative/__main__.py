"""`python -m torchnative ...`: the command-line entry point (see cli.py)."""
import sys

from torchnative.cli import main

sys.exit(main())
