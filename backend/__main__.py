"""`python -m backend ...`: the command-line face of everything the app does."""
import sys

from backend.cli import main

sys.exit(main())
