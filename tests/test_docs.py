"""The README documents what the code has."""

from __future__ import annotations

import re

from evaltool.measures import MEASURES, NICKNAMES
from tests.shared import ROOT

README = (ROOT / "README.md").read_text()


def test_every_measure_is_in_the_readme_table():
    listed = set(re.findall(r"^\| `([A-Za-z0-9_]+)` \|", README, flags=re.M))
    assert set(MEASURES) <= listed, sorted(set(MEASURES) - listed)


def test_every_nickname_is_documented():
    for nickname in NICKNAMES:
        assert f"`{nickname}`" in README


def test_every_cli_option_is_documented():
    from evaltool.cli import eval_command

    for param in eval_command.params:
        if param.param_type_name == "option" and not param.hidden:
            assert any(opt in README for opt in param.opts), param.opts


def test_compare_and_check_have_a_readme_section_with_every_option():
    from evaltool.cli import main

    for name in ("compare", "check"):
        assert f"evaltool {name} " in README, name
        for param in main.commands[name].params:
            if param.param_type_name == "option" and not param.hidden:
                assert any(opt in README for opt in param.opts), (name, param.opts)
