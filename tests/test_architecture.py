"""The package's shape, checked from its sources: no import cycle, short parameter lists on the
evaluation path, one place that decides what an input is, who may import what; and the test
tree's own shape."""

from __future__ import annotations

import ast
import inspect
import re
from functools import cache
from pathlib import Path

import evaltool

PACKAGE = Path(evaltool.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def sources() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


@cache
def import_graph() -> dict[str, set[str]]:
    """Module -> the evaltool modules it imports, at module level or inside a function (computed
    once: read it, never change it).

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


# ---------------------------------------------------------------- io/: one place decides what an input is

READERS = ("evaltool.io.trec", "evaltool.io.columnar", "evaltool.io.jsonl", "evaltool.io.frames",
           "evaltool.io.subtopics", "evaltool.io.topics", "evaltool.io.zscores", "evaltool.io.jsontext",
           "evaltool.io.common", "evaltool.io.progress", "evaltool.io.textfiles", "evaltool.io.clicks.")
DECIDERS = {"evaltool.io.kinds", "evaltool.io.load"}


def test_the_readers_are_told_what_they_read():
    """What an input is (TREC, JSON or JSONL, a dict or a DataFrame, which TREC reader, which
    click log layout) is decided in ``evaltool.io.kinds`` and acted on by ``evaltool.io.load``
    (and the click log's entry point): no reader imports either, so none guesses."""
    graph = import_graph()
    readers = [m for m in graph if m.startswith(READERS)]
    assert {"evaltool.io.trec", "evaltool.io.jsonl", "evaltool.io.clicks.objects"} <= set(readers)
    guessing = {m: sorted(graph[m] & DECIDERS) for m in readers if graph[m] & DECIDERS}
    assert guessing == {}
    assert not {m for m in graph["evaltool.io.kinds"] if m.startswith(READERS[:6])}  # it decides without reading


def test_every_command_is_named_as_its_package_or_says_why_not():
    """``evaltool NAME`` drives ``evaltool.NAME`` (a module or a package), or its module's docstring
    names the package it drives instead."""
    from evaltool.cli.app import COMMANDS

    modules = sources()
    unexplained = []
    for name, (module, _, _) in COMMANDS.items():
        if f"evaltool.{name}" in modules:
            continue
        doc = ast.get_docstring(ast.parse(modules[module].read_text(encoding="utf-8"))) or ""
        named = [m for m in modules if f":mod:`{m}`" in doc and m.startswith("evaltool.") and m != module]
        if not named:
            unexplained.append(name)
    assert unexplained == []


def call_chain(names: list[str], graph: dict[str, set[str]]) -> tuple[str, ...]:
    """The last chain of calls along imports in a stack of modules (outermost first): a module that
    does not import the next one handed it a callable (or an object whose method it called), so
    the chain starts again there; it ends at the first measure module (a kernel: what it calls is
    its own business)."""
    start = 0
    for i in range(1, len(names)):
        if names[i] not in graph.get(names[i - 1], ()):
            start = i
    names = names[start:]
    kernel = next((i for i, n in enumerate(names) if n.startswith("evaltool.measures.")), None)
    return tuple(names if kernel is None else names[:kernel + 1])


def test_a_chain_follows_imports_and_stops_at_the_kernel():
    graph = {"cli": {"load"}, "load": {"trec", "cli"}, "trec": {"common"}, "common": set(),
             "evaltool.measures.ap": {"evaltool.measures.base"}, "evaltool.measures.base": {"evaltool.measures.ap"}}
    assert call_chain(["cli", "load", "cli"], graph) == ("cli", "load", "cli")  # a return: caught
    assert call_chain(["cli", "load", "trec", "common", "trec"], graph) == ("trec",)  # common was handed a callable
    assert call_chain(["cli", "evaltool.measures.ap", "evaltool.measures.base", "evaltool.measures.ap"], graph) \
        == ("evaltool.measures.ap",)


def _stacks(args: list[str]) -> list[tuple[str, ...]]:
    """The chain (:func:`call_chain`) of evaltool modules on the stack at every call into evaltool
    while the command line ``args`` runs."""
    import sys

    from tests.support.helpers import invoke

    graph = import_graph()
    chains = []

    def follow(frame, event, _):
        if event == "call" and frame.f_globals.get("__name__", "").startswith("evaltool"):
            names = []
            while frame is not None:
                name = frame.f_globals.get("__name__", "")
                if name.startswith("evaltool") and (not names or names[-1] != name):
                    names.append(name)
                frame = frame.f_back
            chains.append(call_chain(names[::-1], graph))

    sys.setprofile(follow)
    try:
        done = invoke(*args)
    finally:
        sys.setprofile(None)
    assert done.exit_code == 0, done.output
    return chains


DATA = Path(__file__).resolve().parent.parent / "data"


def test_the_qrels_path_from_the_cli_to_a_kernel_never_returns_to_a_module_it_left():
    """Followed from ``evaltool eval`` to the measure kernels, for TREC files, queries and results
    files, --stream and several runs: no module calls, directly or through others, into a
    module that called it."""
    trec = [str(DATA / "qrels.txt"), str(DATA / "run.txt")]
    rag = [str(DATA / "rag" / "queries.jsonl"), str(DATA / "rag" / "results.jsonl")]
    for args in (["eval", *trec], ["eval", *trec, "--stream"], ["eval", trec[0], trec[1], trec[1]],
                 ["eval", *rag, "-m", "ndcg_cut.5"]):
        chains = _stacks(args)
        assert any(c[-1].startswith("evaltool.measures.") and "evaltool.io.load" not in c for c in chains), args
        assert any("evaltool.io.kinds" in c for c in chains), args
        returning = {" > ".join(c) for c in chains if len(set(c)) != len(c)}
        assert returning == set(), args
        deciding = {c[c.index("evaltool.io.kinds") - 1] for c in chains if "evaltool.io.kinds" in c[1:]}
        assert deciding <= {"evaltool.io.load", "evaltool.io.stream", "evaltool.engines.local",
                            "evaltool.evaluation.orchestration"}, args


# ---------------------------------------------------------------- who may import what

def _imported(path: Path) -> set[str]:
    """The modules a file imports (``from a import b`` counts ``a`` and ``a.b``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_report_imports_no_computing_module():
    # the words shown to people (evaltool.report.i18n) live in report/ and import only evaltool.errors
    for path in (PACKAGE / "report").glob("*.py"):
        outside = [m for m in _imported(path)
                   if m.startswith("evaltool") and not m.startswith(("evaltool.report", "evaltool.errors"))]
        assert outside == [], (path.name, outside)
    i18n_uses = [m for m in _imported(PACKAGE / "report" / "i18n.py") if m.startswith("evaltool")]
    assert i18n_uses and all(m.startswith("evaltool.errors") for m in i18n_uses), i18n_uses


def test_no_module_imports_a_private_name_of_another():
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        private = [f"{node.module}.{alias.name}" for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evaltool")
                   for alias in node.names if alias.name.startswith("_") and alias.name != "__version__"]
        # module._name: an evaltool module imported as a name, and a private attribute read from it
        modules = {alias.asname or alias.name for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evaltool")
                   for alias in node.names if (PACKAGE / (node.module.replace("evaltool", "", 1).strip(".").replace(".", "/"))
                                               / f"{alias.name}.py").exists()}
        private += [f"{node.value.id}.{node.attr}" for node in ast.walk(tree)
                    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in modules and node.attr.startswith("_") and not node.attr.startswith("__")]
        assert private == [], (str(path.relative_to(PACKAGE)), private)


def test_only_the_cli_imports_click_or_exits():
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "cli":
            continue
        text = path.read_text()
        assert not any(m == "click" or m.startswith("click.") for m in _imported(path)), path
        assert "sys.exit" not in text, path


# ---------------------------------------------------------------- the test tree

TESTS = Path(__file__).resolve().parent


def test_no_test_module_imports_another():
    """What tests share lives in tests/support/ (and fixtures in conftest.py files): a test module
    imported by another would run its tests twice and tie two suites together."""
    def test_modules(path: Path) -> list[str]:
        return sorted(m for m in _imported(path) if m.startswith("tests.") and m.rpartition(".")[2].startswith("test_"))

    tangled = {str(path.relative_to(TESTS)): test_modules(path) for path in TESTS.rglob("*.py")}
    assert {name: modules for name, modules in tangled.items() if modules} == {}


def test_support_code_lives_in_tests_support():
    loose = [str(path.relative_to(TESTS)) for path in TESTS.rglob("*.py")
             if path.relative_to(TESTS).parts[0] != "support"
             and not path.name.startswith("test_") and path.name not in ("conftest.py", "__init__.py")]
    assert loose == []


def test_the_command_line_is_run_through_one_invoke():
    """``tests.support.helpers.invoke`` is the one in-process runner of the command line, and it
    fails any run that ends in a traceback: no test runs the CLI without that check."""
    runners = [str(path.relative_to(TESTS)) for path in TESTS.rglob("*.py")
               if "CliRunner" in path.read_text(encoding="utf-8") and path != Path(__file__).resolve()]
    assert runners == ["support/helpers.py"]


# ---------------------------------------------------------------- docstrings

INTERNAL_REFERENCE = re.compile(r"\bseeds? ?0\d\d\b|\bSPEC-\d|\bissues? #?\d+\b|\brule \d+\b|\bcalcular_\w+", re.I)


def test_docstrings_explain_rather_than_cite_internal_documents():
    """A reader of evaltool has neither the specification documents nor the issue tracker: a
    docstring says what the code does and why (formula, edge case, published reference), not
    which internal document asked for it."""
    citing = []
    for name, path in sources().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node) or ""
                where = f"{name}.{getattr(node, 'name', '')}"
                citing += [f"{where}: {m.group(0)}" for m in INTERNAL_REFERENCE.finditer(doc)]
    assert citing == []
    assert INTERNAL_REFERENCE.search("as seed 004 asks") and INTERNAL_REFERENCE.search("SPEC-002, rule 13")


def test_no_public_name_is_also_a_top_level_module():
    """``evaltool.reproduce`` must stay the function whatever was imported before: importing a
    submodule sets the package's attribute of that name to the module, so a public name
    (imported lazily by the package's ``__getattr__``) may not be the name of a module under
    ``evaltool``. (The reproducibility module was ``evaltool/reproduce.py`` and shadowed the
    function once the ``reproduce`` command had run.)"""
    from evaltool import _EXPORTS

    top_level = {name.split(".")[1] for name in sources() if name.count(".") >= 1}
    assert sorted(set(_EXPORTS) & top_level) == []
