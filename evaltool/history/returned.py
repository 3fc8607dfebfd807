"""What a search returned, read against its ground truth: the marks the execution pages and
``evaltool history show ID -q --results`` show.

Each returned document is ``relevant`` (judged with a grade at or above the relevance level,
the grade shown), ``not relevant`` (judged below it) or ``unjudged`` (the ground truth does
not name it: nobody knows); the relevant ids the search did not return are ``missed``. Two
lists of the same query compare as: a document ``new`` in the second, ``moved`` (up or down,
from its rank in the first) or ``same`` rank, and those of the first the second ``lost``.

>>> judged({"documents": [{"rank": 1, "doc_id": "a"}, {"rank": 2, "doc_id": "x"}, {"rank": 3, "doc_id": "b"}],
...         "judgments": {"b": 2, "c": 1, "x": 0}})["marks"]
[['a', 'unjudged', None], ['x', 'not relevant', 0], ['b', 'relevant', 2]]
>>> changes(["a", "b", "c"], ["b", "a", "d"])
{'marks': [['b', 'moved', 2], ['a', 'moved', 1], ['d', 'new', None]], 'lost': ['c']}
"""

from __future__ import annotations

RELEVANT, NOT_RELEVANT, UNJUDGED = "relevant", "not relevant", "unjudged"


def judged(result: dict, relevance_level: int = 1) -> dict:
    """``result`` (one query of ``Execution.results``) with ``marks`` (``[doc, judgment, grade]`` per
    returned document, in rank order) and ``missed`` (relevant ids not returned, in the ground
    truth's order). Without a stored ground truth every document is unjudged and nothing is missed."""
    judgments = result.get("judgments") or {}
    marks = []
    for doc in result.get("documents") or ():
        grade = judgments.get(doc["doc_id"])
        mark = UNJUDGED if grade is None else RELEVANT if grade >= relevance_level else NOT_RELEVANT
        marks.append([doc["doc_id"], mark, grade])
    listed = {doc["doc_id"] for doc in result.get("documents") or ()}
    complete = result.get("returned", len(listed)) <= len(listed)  # a list cut for storage hides the rest
    missed = (
        [doc for doc, grade in judgments.items() if grade >= relevance_level and doc not in listed] if complete else []
    )
    return {**result, "marks": marks, "missed": missed}


def changes(before: list[str], after: list[str]) -> dict:
    """How the list ``after`` differs from ``before`` (ids in rank order): per id of ``after``
    ``[doc, 'new' | 'moved' | 'same', rank before]``, and the ids of ``before`` it lost."""
    rank = {doc: i for i, doc in enumerate(before, 1)}
    marks = []
    for i, doc in enumerate(after, 1):
        was = rank.get(doc)
        marks.append([doc, "new" if was is None else "same" if was == i else "moved", was])
    kept = set(after)
    return {"marks": marks, "lost": [doc for doc in before if doc not in kept]}


def relevance_level(execution) -> int:
    """The relevance level an execution was scored with (its options; 1 by default)."""
    level = (execution.options or {}).get("relevance_level", 1)
    return level if isinstance(level, int) and not isinstance(level, bool) else 1
