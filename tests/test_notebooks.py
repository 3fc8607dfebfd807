"""The notebooks of docs/notebooks/: each one runs from top to bottom on a clean clone (the data it
reads is the repository's data/ and the package's own), its results show themselves as tables,
and every guide points to its notebook, which the site's navigation lists.

The site build executes them too (mkdocs-jupyter, tests/test_docs_site.py); running them here
with nbclient names the notebook and the cell that failed.
"""

from __future__ import annotations

import re

import pytest

from tests.support.helpers import ROOT

NOTEBOOKS = ROOT / "docs" / "notebooks"
GUIDES = {
    "researcher": "guides/researcher.md",
    "engineer": "guides/engineer/index.md",
    "student": "guides/student.md",
    "library": "guides/library.md",
}


@pytest.mark.parametrize("name", sorted(GUIDES))
def test_a_notebook_runs_from_top_to_bottom_and_shows_tables(name):
    import nbformat
    from nbclient import NotebookClient

    path = NOTEBOOKS / f"{name}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    assert not any(cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), (
        "notebooks are stored without outputs: the site and this test run them"
    )
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    tables = [out["data"]["text/html"] for out in outputs if "text/html" in out.get("data", {})]
    assert any('<div class="evaltool">' in html for html in tables), "no evaltool result shown as a table"
    assert not [out for out in outputs if out.get("name") == "stderr"], "a notebook shows no warning or traceback"


def test_the_notebooks_read_no_path_outside_the_repository():
    for path in NOTEBOOKS.glob("*.ipynb"):
        text = path.read_text()
        assert "/work/" not in text and "shared" not in text, path.name


def test_every_guide_points_to_its_notebook_and_the_site_lists_them():
    nav = (ROOT / "mkdocs.yml").read_text()
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == sorted(GUIDES)
    for name, guide in GUIDES.items():
        text = (ROOT / "docs" / guide).read_text()
        assert re.search(rf"\]\((\.\./)+notebooks/{name}\.ipynb\)", text), guide
        assert f"notebooks/{name}.ipynb" in nav, name
