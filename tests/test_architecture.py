"""The package's shape, checked from its sources: no import cycle, short parameter lists on the
evaluation path."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import evaltool

PACKAGE = Path(evaltool.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def import_graph() -> dict[str, set[str]]:
    """Module -> the evaltool modules it imports, at module level or inside a function.

    ``import a.b`` and ``from a.b import c`` are edges to ``a.b``, or to ``a.b.c`` when ``c``
    is itself a module; relative imports are resolved against the importing module's package.
    """
    modules = sources()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    edges.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        graph[name] = {target for target in edges if target in modules and target != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_module_and_function_level_imports():
    graph = import_graph()
    assert "evaltool.evaluation.scoring" in graph["evaltool.engines.dask"]  # imported inside functions
    assert "evaltool.evaluation.plan" in graph["evaltool.evaluation.orchestration"]  # at module level
    assert "evaltool.engines.dask" in graph["evaltool.clicks.distributed"]  # from evaltool.engines import dask


def test_evaltool_has_no_import_cycle():
    """Data flows one way: a module never imports, directly or through others, a module that imports it."""
    assert cycles(import_graph()) == []


def test_the_engines_use_only_the_scoring_module_of_the_evaluation_stage():
    graph = import_graph()
    for engine in ("evaltool.engines.local", "evaltool.engines.dask"):
        used = {m for m in graph[engine] if m.startswith("evaltool.evaluation")}
        assert used == {"evaltool.evaluation.scoring"}, engine


EVALUATION_PATH = ("evaltool.evaluation", "evaltool.engines", "evaltool.ranking", "evaltool.relevance.resolve")
PUBLIC_FACES = {"evaltool.evaluation.orchestration.evaluate"}  # its keyword options stay, for discoverability


def test_no_function_on_the_evaluation_path_takes_more_than_eight_parameters():
    long = []
    for name, path in sources().items():
        if not name.startswith(EVALUATION_PATH):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                count = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
                count -= bool(args.args) and args.args[0].arg in ("self", "cls")
                if count > 8 and f"{name}.{node.name}" not in PUBLIC_FACES:
                    long.append(f"{name}.{node.name} ({count})")
    assert long == []


def test_evaluate_and_the_plan_declare_the_same_options():
    from evaltool.evaluation.orchestration import evaluate
    from evaltool.evaluation.plan import OPTIONS

    keywords = {name: p.default for name, p in inspect.signature(evaluate).parameters.items()
                if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert keywords == dict(OPTIONS)
