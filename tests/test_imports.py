"""The shape of the code: no import cycle in backend/, and backend never imports the UI or gradio.

Read from the source with `ast`, lazy imports (inside functions) included: a
lazy import that closes a cycle still ties two modules into one.
"""
import ast
from pathlib import Path

from tests.support.source_imports import imports

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def backend_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in (ROOT / "backend").rglob("*.py")}
    return {name: {target for target in imports(path, set(paths)) if target in paths and target != name}
            for name, path in paths.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[node] = "done"
        stack.pop()
        return None
    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycle_in_backend():
    graph = backend_graph()
    assert "backend.jobs.service" in graph["backend.jobs"]  # the graph is really read
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_backend_never_imports_the_ui_or_gradio():
    for path in (ROOT / "backend").rglob("*.py"):
        imported = {name.split(".")[0] for node in ast.walk(ast.parse(path.read_text()))
                    if isinstance(node, (ast.Import, ast.ImportFrom))
                    for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])}
        assert not imported & {"gradio", "ui", "app"}, f"{path.relative_to(ROOT)} imports {imported & {'gradio', 'ui'}}"
