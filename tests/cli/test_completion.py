"""Shell completion through click (issue 17): subcommands, the default command's options, measures after -m.

Each case drives the command as bash does, through click's completion variables
(``_EVALTOOL_COMPLETE=bash_complete``, ``COMP_WORDS``, ``COMP_CWORD``); zsh and fish go
through the same completion code with another output format.
"""

from __future__ import annotations

import pytest

from tests.support.helpers import invoke


def complete(line: str, shell: str = "bash") -> list[str]:
    words = line.split(" ")
    env = {"_EVALTOOL_COMPLETE": f"{shell}_complete", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    result = invoke(env=env)
    assert result.exit_code == 0, result.output
    return [row.split(",", 1)[1] for row in result.output.splitlines()]


def test_subcommands_complete():
    assert {"compare", "check"} <= set(complete("evaltool c"))
    assert complete("evaltool be") == ["bench"]


def test_options_of_the_default_command_complete_after_its_arguments():
    found = complete("evaltool qrels.txt run.txt --judged")
    assert found == ["--judged-only"]
    assert "--save-reference" in complete("evaltool qrels.txt run.txt --s")


@pytest.mark.parametrize("line, expected", [
    ("evaltool qrels.txt run.txt -m ndcg_c", ["ndcg_cut"]),
    ("evaltool qrels.txt run.txt -m offi", ["official"]),          # a nickname
    ("evaltool qrels.txt run.txt -m first_rel", ["first_relevant_position"]),  # a project alias
    ("evaltool compare qrels.txt a.txt b.txt -m recip", ["recip_rank"]),
    ("evaltool bench q.json --backend m:f -m mrr", ["mrr", "mrr_at_"]),  # mrr_at_K, as ndcg_at_10
])
def test_measure_names_and_nicknames_complete_after_m(line, expected):
    assert complete(line) == expected


def test_the_scripts_for_bash_zsh_and_fish_are_served():
    for shell, marker in (("bash", "complete -o nosort -F"), ("zsh", "compdef"), ("fish", "complete --no-files")):
        result = invoke(env={"_EVALTOOL_COMPLETE": f"{shell}_source"})
        assert result.exit_code == 0 and marker in result.output, (shell, result.output[:200])
