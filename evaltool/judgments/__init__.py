"""Judgments made by people: sets, pools, agreement, consensus qrels, re-scoring.

The loop: pool what several runs returned (:mod:`~evaltool.judgments.pool`), let raters grade
it (in the dashboard, or import their files), measure how far they agree
(:mod:`~evaltool.judgments.reliability`), turn their grades into one qrels
(:mod:`~evaltool.judgments.adjudication`, :mod:`~evaltool.judgments.exchange`) and score runs
or stored executions with it (:mod:`~evaltool.judgments.rescoring`).

The API (``db`` as :mod:`evaltool.history` takes it: a path, a URL, an open History, None):

* ``Scale.parse("binary" | "graded" | "labels:bad=0,good=1,...")``; ``scale.judge(value) -> (grade, label)``.
* ``create_set(db, name, scale, *, description, author, audit) -> JudgmentSet``; ``get_set``,
  ``list_sets``, ``set_versions``.
* ``add_judgments(db, name, items, *, author, change, audit) -> JudgmentSet``: items are dicts
  ``{"query_id", "doc_id", "rater", "grade" | "label", "note"?, "at"?}``; one new version; a rater's
  new grade of a pair replaces only their own.
* ``read_judgments(db, name, version=None, *, rater, query_id) -> list[Judgment]``.
* ``consensus(judgments, "majority" | "median" | ADJUDICATOR, *, rater) -> Consensus`` (``.qrels``:
  query -> document -> grade; ``.unresolved``).
* ``agreement(judgments, grades) -> dict``; ``set_agreement(db, name, version, *, pairs) -> dict``:
  Cohen's kappa per pair of raters (weighted for graded scales), Fleiss' kappa, Krippendorff's
  alpha (ordinal), the disagreements, per query.
* ``depth_pool(lists, depth, *, judged)``, ``rrf_pool(lists, size, *, judged) -> Pool``;
  ``run_lists(run)``, ``execution_lists(execution)`` give the lists.
* ``rescore(db, execution_id, set_name, *, consensus, rater, version) -> int``;
  ``apply_to_suite(db, set_name, suite_name, *, consensus, rater, version) -> Suite`` (the set becomes
  the suite's ground truth, a new suite version).
* Tasks (what a team judges in the dashboard): see :mod:`~evaltool.judgments.tasks`.

>>> import os, tempfile
>>> from evaltool.judgments import create_set, add_judgments, read_judgments, consensus
>>> db = os.path.join(tempfile.mkdtemp(), "history.sqlite")
>>> _ = create_set(db, "helpdesk", "binary")
>>> _ = add_judgments(db, "helpdesk", [{"query_id": "q1", "doc_id": "d1", "rater": "ana", "label": "useful"}])
>>> consensus(read_judgments(db, "helpdesk")).qrels
{'q1': {'d1': 1}}
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "Scale": "scales",
    "JudgmentSet": "sets",
    "Judgment": "sets",
    "JudgmentConflict": "sets",
    "create_set": "sets",
    "get_set": "sets",
    "list_sets": "sets",
    "set_versions": "sets",
    "add_judgments": "sets",
    "read_judgments": "sets",
    "Consensus": "adjudication",
    "consensus": "adjudication",
    "agreement": "reliability",
    "set_agreement": "reliability",
    "cohen_kappa": "reliability",
    "fleiss_kappa": "reliability",
    "krippendorff_alpha": "reliability",
    "Pool": "pool",
    "depth_pool": "pool",
    "rrf_pool": "pool",
    "run_lists": "pool",
    "execution_lists": "pool",
    "rescore": "rescoring",
    "apply_to_suite": "rescoring",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
