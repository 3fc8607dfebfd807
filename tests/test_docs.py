"""The README documents what the code has."""

from __future__ import annotations

import re

from evaltool.measures import MEASURES, NICKNAMES
from tests.support.helpers import ROOT

README = (ROOT / "README.md").read_text()


def test_every_measure_is_in_the_readme_table():
    listed = set(re.findall(r"^\| `([A-Za-z0-9_]+)` \|", README, flags=re.M))
    assert set(MEASURES) <= listed, sorted(set(MEASURES) - listed)


def test_every_nickname_is_documented():
    for nickname in NICKNAMES:
        assert f"`{nickname}`" in README


def test_every_cli_option_is_documented():
    from evaltool.cli.eval import eval_command

    for param in eval_command.params:
        if param.param_type_name == "option" and not param.hidden:
            assert any(opt in README for opt in param.opts), param.opts


def test_compare_and_check_have_a_readme_section_with_every_option():
    from evaltool.cli import main

    for name in ("compare", "check"):
        assert f"evaltool {name} " in README, name
        for param in main.get_command(None, name).params:
            if param.param_type_name == "option" and not param.hidden:
                assert any(opt in README for opt in param.opts), (name, param.opts)


def test_every_named_measure_and_alias_is_in_the_readme():
    from evaltool.measures import NAMED_MEASURES

    listed = set(re.findall(r"^\| `([A-Za-z0-9_]+)` \|", README, flags=re.M))
    assert set(NAMED_MEASURES) <= listed, sorted(set(NAMED_MEASURES) - listed)
    for m in NAMED_MEASURES.values():
        # the named table follows trec_eval's, which has P and Rprec too
        row = [line for line in README.splitlines() if line.startswith(f"| `{m.name}` |")][-1]
        for option in m.options:
            assert f"`{option.name}`" in row or (option.at and "`@" in row), (m.name, option.name)
        for alias in m.aliases:
            token = alias if isinstance(alias, str) else alias[0]
            assert f"`{token}" in row, (m.name, token)


def test_history_and_suite_commands_are_documented_with_every_option():
    from evaltool.cli import main

    for group in ("history", "suite"):
        for name, command in main.get_command(None, group).commands.items():
            assert f"{group} {name}" in README, (group, name)
            for param in command.params:
                if param.param_type_name == "option" and not param.hidden and group == "history":
                    assert any(opt in README for opt in param.opts), (group, name, param.opts)


def _table_rows(header_start: str) -> dict[str, list[str]]:
    """The cells of every row of the README table whose header starts with ``header_start``."""
    lines = README.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("| `"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[line.split("`")[1]] = dict(zip(header, cells))
    return rows


def test_same_numbers_as_names_the_oracle_declared_on_each_measure():
    from evaltool.measures import NAMED_MEASURES

    trec = _table_rows("| measure | parameters (default) |")
    named = _table_rows("| measure | parameters | aliases |")
    assert set(trec) == set(MEASURES) and set(named) == set(NAMED_MEASURES)
    for rows, registry in ((trec, MEASURES), (named, NAMED_MEASURES)):
        for name, m in registry.items():
            assert m.oracle, f"{name} declares no oracle"
            assert rows[name]["same numbers as"] == m.oracle, name
