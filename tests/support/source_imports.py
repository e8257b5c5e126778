"""What a Python file imports, read from its source with `ast` (imports inside functions included), for the
tests of the code's shape: no import cycle in backend/ (tests/test_imports.py), no test-only package imported at
run time (tests/test_deploy.py)."""
from __future__ import annotations

import ast
from pathlib import Path


def imports(path: Path, modules: set[str]) -> set[str]:
    """Modules a file imports anywhere; `from pkg import sub` is an edge to pkg.sub when that is a module
    (its parent package is then already being imported), else to pkg."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules
            names |= submodules
            if len(submodules) < len(node.names):
                names.add(node.module)
    return names
