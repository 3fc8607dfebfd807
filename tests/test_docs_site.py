"""The documentation site (docs/, mkdocs.yml): it builds strictly, its generated reference pages
say what the code says, and every code example it shows runs.

Code blocks by language:

* ``pycon``: a Python session, run as a doctest (one namespace per page, in the repository root);
* ``console``: ``$ command`` lines, each run by the shell in a scratch directory holding the
  repository's ``data/``, with the lines below it as the expected output (``...`` matches
  anything, as in doctests); the commands of a page share the directory, in order;
* ``python``: a script, executed in a scratch directory holding ``data/``;
* ``sh``: commands shown but not run (an install, a server that runs until stopped, a remote
  host): every ``evaltool`` line among them is parsed by the command line, so an option that
  does not exist fails;
* ``text``, ``json``, ``toml``, ``yaml``, ``ini``, ``bibtex``, ``http``: not code.

A block with no language fails: each one says which of these it is.
"""

from __future__ import annotations

import doctest
import importlib
import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.support.helpers import ROOT

DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "tools"))
import docs_reference  # noqa: E402

NOT_CODE = {"text", "json", "toml", "yaml", "ini", "bibtex", "http"}
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```\s*$", re.M | re.S)
PAGES = sorted(DOCS.rglob("*.md"))
BIN = Path(sys.executable).parent


def blocks(page: Path) -> list[tuple[str, str, int]]:
    """(language, body, line) of every fenced block of ``page``."""
    text = page.read_text()
    out = []
    for m in FENCE.finditer(text):
        indent = len(m["indent"])
        body = "\n".join(line[indent:] for line in m["body"].split("\n"))
        out.append((m["lang"], body, text[:m.start()].count("\n") + 1))
    return out


def _page_id(page: Path) -> str:
    return str(page.relative_to(DOCS))


# ---------------------------------------------------------------- generated references

def test_generated_reference_pages_say_what_the_code_says(capsys):
    assert docs_reference.main(["--check"]) == 0, capsys.readouterr().out


def test_a_reference_page_that_drifts_from_help_fails_the_check(tmp_path, monkeypatch, capsys):
    copy = tmp_path / "docs"
    for path, text in docs_reference.pages().items():
        (copy / path).parent.mkdir(parents=True, exist_ok=True)
        (copy / path).write_text(text)
    page = copy / "reference" / "cli.md"
    page.write_text(page.read_text().replace("--measure", "--measures", 1))
    monkeypatch.setattr(docs_reference, "DOCS", copy)
    assert docs_reference.main(["--check"]) == 1
    assert "docs/reference/cli.md differs" in capsys.readouterr().out


def test_the_command_line_page_has_every_command_and_option():
    import click

    from evaltool.cli import main

    page = (DOCS / "reference" / "cli.md").read_text()
    for path in docs_reference.commands():
        command = main
        for name in path:
            command = command.get_command(None, name)
        assert f"## `{' '.join(['evaltool', *path])}`" in page, path
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert any(opt in page for opt in param.opts), (path, param.opts)


def test_every_measure_and_alias_has_its_section_on_its_family_page():
    from evaltool.measures import FAMILY_OF, MEASURES, NAMED_MEASURES, NICKNAMES
    from evaltool.measures.docs import spellings

    index = (DOCS / "reference" / "measures" / "index.md").read_text()
    for m in (*MEASURES.values(), *NAMED_MEASURES.values()):
        page = (DOCS / "reference" / "measures" / f"{FAMILY_OF[m.name]}.md").read_text()
        section = page.split(docs_reference.heading(m) + "\n", 1)
        assert len(section) == 2, m.name
        body = section[1].split("\n## ", 1)[0]
        for alias in spellings(m):
            assert f"`{alias}`" in body, (m.name, alias)
        for option in m.options:
            assert f"| `{'@' if option.at else ''}{option.name}` |" in body, (m.name, option.name)
        assert m.oracle and f"**Same numbers as**: {m.oracle}" in body, m.name
        assert f"`{m.name}`" in index
    for nickname in NICKNAMES:
        assert f"- `{nickname}`:" in index


def test_the_http_page_has_every_address_of_the_openapi_description():
    page = (DOCS / "reference" / "http.md").read_text()
    for path, methods in docs_reference.openapi()["paths"].items():
        for method, op in methods.items():
            assert f"## `{method.upper()} {path}`" in page
            for param in op.get("parameters", []):
                assert f"| `{param['name']}` |" in page, (path, param["name"])


# ---------------------------------------------------------------- the build

def test_the_site_builds_in_strict_mode(tmp_path):
    """A broken link, a page missing from the navigation or a Python reference that does not
    resolve is a warning, and strict mode makes any warning fail the build."""
    site = tmp_path / "site"
    done = subprocess.run([str(BIN / "mkdocs"), "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    # mkdocs' warnings start their line (the notebooks' kernel says "[IPKernelApp] WARNING | ... TCP
    # without encryption" on its own stderr: a local kernel's transport, not a fault of the site)
    assert not re.search(r"^WARNING\b", done.stderr, re.M), done.stderr[-4000:]
    assert (site / "index.html").is_file()
    assert (site / "reference" / "measures" / "dcg" / "index.html").is_file()
    api = (site / "reference" / "python" / "index.html").read_text()
    assert 'id="evaltool.evaluation.orchestration.evaluate"' in api   # mkdocstrings rendered it
    for name in ("researcher", "engineer", "student", "library"):   # executed: the outputs are on the page
        assert '<div class="evaltool">' in (site / "notebooks" / name / "index.html").read_text(), name


def test_a_broken_link_fails_the_strict_build(tmp_path):
    copy = tmp_path / "repo"
    copy.mkdir()
    (copy / "mkdocs.yml").write_text((ROOT / "mkdocs.yml").read_text().replace("paths: [.]", f"paths: [{ROOT}]")
                                     .replace("tools/griffe_rst.py", str(ROOT / "tools" / "griffe_rst.py")))
    subprocess.run(["cp", "-r", str(DOCS), str(copy / "docs")], check=True)
    (copy / "data").symlink_to(ROOT / "data")   # what the notebooks read
    page = copy / "docs" / "getting-started.md"
    page.write_text(page.read_text() + "\n[gone](no-such-page.md)\n")
    done = subprocess.run([str(BIN / "mkdocs"), "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=copy, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr


# ---------------------------------------------------------------- the examples

@pytest.fixture
def scratch(tmp_path):
    (tmp_path / "data").symlink_to(ROOT / "data")
    return tmp_path


def test_every_block_declares_what_it_is():
    known = NOT_CODE | {"pycon", "console", "python", "sh"}
    for page in PAGES:
        for lang, _, line in blocks(page):
            assert lang in known, f"{_page_id(page)}:{line}: a ``` block of language {lang!r}"


@pytest.mark.parametrize("page", [p for p in PAGES if any(b[0] == "pycon" for b in blocks(p))], ids=_page_id)
def test_python_sessions_run(page, monkeypatch):
    monkeypatch.chdir(ROOT)
    parser, globs = doctest.DocTestParser(), {"__name__": "__docs__"}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for lang, body, line in blocks(page):
        if lang == "pycon":
            test = parser.get_doctest(body, globs, f"{_page_id(page)}:{line}", str(page), line)
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {_page_id(page)} failed"


def _commands(body: str) -> list[tuple[str, str]]:
    out: list[tuple[str, list[str]]] = []
    for line in body.split("\n"):
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"a console block starts with output, not a $ command: {line!r}")
    return [(command, "\n".join(expected).rstrip()) for command, expected in out]


@pytest.mark.parametrize("page", [p for p in PAGES if any(b[0] == "console" for b in blocks(p))], ids=_page_id)
def test_console_examples_print_what_the_page_shows(page, scratch):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "100", "NO_COLOR": "1"}
    checker = doctest.OutputChecker()
    for lang, body, line in blocks(page):
        if lang != "console":
            continue
        for command, expected in _commands(body):
            done = subprocess.run(command, shell=True, cwd=scratch, capture_output=True, text=True, env=env)
            got = (done.stdout + done.stderr).rstrip()
            where = f"{_page_id(page)}:{line}: $ {command}"
            assert done.returncode in (0, 1), f"{where}\nexit {done.returncode}\n{got}"
            assert checker.check_output(expected + "\n", got + "\n", doctest.ELLIPSIS), \
                f"{where}\n--- the page shows\n{expected}\n--- the command printed\n{got}"


def test_python_scripts_run(scratch):
    for page, (lang, body, line) in ((p, block) for p in PAGES for block in blocks(p)):
        if lang == "python":
            done = subprocess.run([sys.executable, "-c", body], cwd=scratch, capture_output=True, text=True)
            assert done.returncode == 0, f"{_page_id(page)}:{line}\n{done.stderr[-3000:]}"


def command_error(command: str) -> str | None:
    """What the command line says against ``command`` (``evaltool ...``), None if it parses.

    Only parsed, not run: a missing argument or a file that does not exist here is not an
    error, an unknown command or option is (click reads every option before it checks the
    values)."""
    import click

    from evaltool.cli import main

    args = shlex.split(command)[1:]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)   # click 8.2's protected_args
            ctx = main.make_context("evaltool", list(args))
            while isinstance(ctx.command, click.Group) and ctx.protected_args + ctx.args:
                name, *rest = [*ctx.protected_args, *ctx.args]
                sub = ctx.command.get_command(ctx, name)
                if sub is None:
                    return f"no command {name!r}"
                ctx = sub.make_context(name, rest, parent=ctx)
    except (click.MissingParameter, click.BadParameter, click.exceptions.Exit):
        return None
    except click.UsageError as e:
        return e.format_message()
    return None


def test_a_shown_command_with_an_option_that_does_not_exist_is_caught():
    assert command_error("evaltool data/qrels.txt data/run.txt -m map") is None
    assert command_error("evaltool history report --db h.sqlite --labels") is None
    assert "--no-such-option" in command_error("evaltool data/qrels.txt data/run.txt --no-such-option")
    assert "--nope" in command_error("evaltool history report --nope")
    assert command_error("evaltool history nosuch") is not None


def test_shown_commands_name_only_options_that_exist():
    for page in PAGES:
        for lang, body, line in blocks(page):
            if lang not in ("sh", "console"):
                continue
            text = re.sub(r"\\\n\s*", " ", body)
            for command in text.split("\n"):
                command = command.removeprefix("$ ").split(" #")[0]
                for end in (" | ", " > ", " || ", " && ", " 2>"):
                    command = command.split(end)[0]
                command = command.strip()
                if command.startswith("evaltool "):
                    error = command_error(command)
                    assert error is None, f"{_page_id(page)}:{line}: {command}\n{error}"


# ---------------------------------------------------------------- the Python API's numpydoc sections

PUBLIC_FUNCTIONS = ["evaluate", "Evaluator", "compare_runs", "fuse", "optimize_fusion", "power_analysis",
                    "reproduce", "parse_measures", "read_qrels", "read_run"]


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_the_public_functions_document_parameters_returns_raises_and_examples(name):
    import importlib
    import inspect

    from evaltool import _EXPORTS

    target = getattr(importlib.import_module(_EXPORTS[name]), name)
    doc = inspect.getdoc(target)
    sections = [title for title in ("Parameters", "Returns", "Raises", "Examples")
                if re.search(rf"^{title}\n-{{{len(title)}}}$", doc, re.M)]
    expected = ["Parameters", "Raises", "Examples"] if inspect.isclass(target) else \
        ["Parameters", "Returns", "Raises", "Examples"]
    if name == "reproduce":
        expected.remove("Examples")   # its example is the guide's (two pairs of run files)
    assert sections == expected, (name, sections)
    # every parameter of the signature has its entry (several may share one: "trials, seed : int")
    entries = doc.split("Parameters\n----------\n", 1)[1].split("\n\n", 1)[0].split("\nReturns\n")[0]
    documented = {n.strip().lstrip("*") for line in entries.splitlines() if line and not line.startswith(" ")
                  for n in line.split(" : ")[0].split(",")}
    parameters = set(inspect.signature(target.__init__ if inspect.isclass(target) else target).parameters)
    assert parameters - {"self"} <= documented, (name, parameters - {"self"} - documented)


def test_numpydoc_sections_become_tables_and_other_docstrings_stay_as_they_were():
    import griffe_rst

    doc = "Add.\n\n    Parameters\n    ----------\n    a, b : int\n        The terms;\n        any two.\n\n" \
          "    Raises\n    ------\n    ValueError\n        Never.\n\n    Examples\n    --------\n    >>> 1 + 1\n    2\n"
    assert griffe_rst.numpy_sections(doc).splitlines() == [
        "Add.", "", "**Parameters**", "", "| Parameter | Type | Description |", "|---|---|---|",
        "| `a`, `b` | int | The terms; any two. |", "", "**Raises**", "", "| Exception | When |", "|---|---|",
        "| `ValueError` | Never. |", "", "**Examples**", "", ">>> 1 + 1", "2"]
    plain = "A title.\n\n    Some ``text``\n    ----\n    and a rule that is no section.\n"
    assert griffe_rst.numpy_sections(plain) == plain


def test_the_python_api_page_documents_every_exported_name():
    """Each name ``evaltool`` exports has its ``:::`` entry (by the module that defines it, or
    within a documented module) on the Python API page."""
    from evaltool import _EXPORTS

    page = (ROOT / "docs" / "reference" / "python.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^::: (\S+)", page, re.M))
    missing = []
    for name, module in _EXPORTS.items():
        defined_in = getattr(importlib.import_module(module), name).__module__
        if not ({f"{module}.{name}", f"{defined_in}.{name}", defined_in, module} & entries):
            missing.append(name)
    assert missing == []
