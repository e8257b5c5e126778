"""scripts/space_build.py (the Space build and its checks) loaded as a module, `space_build`, for its tests:
scripts/ is not a package, so it is loaded from its path, once per test process."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("space_build", ROOT / "scripts" / "space_build.py")
space_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(space_build)
