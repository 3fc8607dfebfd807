"""How far a model's judgments can be trusted: agreement with people, and the systems' ranking.

Two questions, the two that papers ask before accepting model-made qrels:

1. **Agreement on the pairs both graded.** Cohen's kappa of the human grade against the
   model's (:func:`evaltool.judgments.reliability.cohen_kappa`: unweighted on two grades,
   linearly weighted on more, with the unweighted and quadratic values beside it), the
   confusion matrix (rows: the human grade, columns: the model's), the share of exact
   agreement and the mean grade difference ``mean(model - human)`` (above 0: the model is
   more lenient than people).
2. **The systems' ranking.** Each run is scored (one measure, ``ndcg_cut_10`` by default)
   under the human qrels and under the model's, both kept to the pairs both judged (so that
   a ranking moves only where the grades differ, not because one set judged more documents;
   ``all_pairs=True`` keeps each set whole), on the queries both judge; the systems
   are ranked by each (score descending, then name), and compared with Kendall's tau-b
   (``(C - D) / sqrt((C + D + T_h)(C + D + T_m))`` over pairs of systems: concordant,
   discordant, tied in one ranking only) and tau-AP (Yilmaz, Aslam and Robertson, "A new
   rank correlation coefficient for information retrieval", SIGIR 2008), which weighs a
   swap near the top more than one near the bottom:

   ``tau_AP = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1``,

   with the model's ranking read from the top, ``C(i)`` the number of systems above
   position ``i`` that the human ranking also puts above the system at ``i``. The human
   ranking is the truth, so tau-AP is not symmetric. ``swaps`` lists the systems whose
   rank moved most.

Either value is None when undefined (no pair judged by both; fewer than two systems; every
score the same).

>>> human = {("q1", "d1"): 2, ("q1", "d2"): 0, ("q1", "d3"): 1, ("q2", "d1"): 3}
>>> model = {("q1", "d1"): 2, ("q1", "d2"): 1, ("q1", "d3"): 1, ("q2", "d1"): 2}
>>> figures = agreement_figures(human, model, (0, 1, 2, 3))
>>> figures["pairs"], figures["confusion"][0], round(figures["mean_difference"], 2)
(4, [0, 1, 0, 0], 0.0)
>>> tau_ap(["a", "b", "c", "d"], ["a", "c", "b", "d"])  # 2/3 * (1/1 + 1/2 + 3/3) - 1
0.6666666666666667
"""

from __future__ import annotations

import math

from evaltool.errors import EvaltoolError

DEFAULT_MEASURE = "ndcg_cut_10"
SWAPS_SHOWN = 10


def agreement_figures(human: dict, model: dict, grades) -> dict:
    """Agreement of ``model`` with ``human`` (both ``{(query, doc): grade}``) on the pairs both grade."""
    from evaltool.judgments.reliability import cohen_kappa

    grades = tuple(sorted(grades))
    both = sorted(set(human) & set(model))
    outside = sorted({human[p] for p in both} - set(grades)) + sorted({model[p] for p in both} - set(grades))
    if outside:
        raise EvaltoolError(f"grade {outside[0]} is not on the scale ({', '.join(map(str, grades))})")
    first, second = [human[p] for p in both], [model[p] for p in both]
    index = {g: i for i, g in enumerate(grades)}
    confusion = [[0] * len(grades) for _ in grades]
    for h, m in zip(first, second):
        confusion[index[h]][index[m]] += 1
    weighted = "linear" if len(grades) > 2 else None
    kappas = {
        w or "unweighted": cohen_kappa(first, second, grades, w) if both else None
        for w in ((None, "linear", "quadratic") if weighted else (None,))
    }
    return {
        "pairs": len(both),
        "human_only": len(set(human) - set(model)),
        "model_only": len(set(model) - set(human)),
        "grades": list(grades),
        "cohen_kappa": kappas[weighted or "unweighted"],
        "weights": weighted,
        "cohen_kappa_by_weights": kappas,
        "confusion": confusion,
        "exact_agreement": sum(h == m for h, m in zip(first, second)) / len(both) if both else None,
        "mean_difference": sum(m - h for h, m in zip(first, second)) / len(both) if both else None,
    }


def kendall_tau(first: list[float], second: list[float]) -> float | None:
    """Kendall's tau-b of two score lists over the same systems (None when undefined).

    >>> kendall_tau([3, 2, 1], [3, 1, 2])
    0.3333333333333333
    """
    concordant = discordant = tied_first = tied_second = 0
    for i in range(len(first)):
        for j in range(i + 1, len(first)):
            a, b = first[i] - first[j], second[i] - second[j]
            if a == 0 and b == 0:
                continue
            if a == 0:
                tied_first += 1
            elif b == 0:
                tied_second += 1
            elif (a > 0) == (b > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + tied_first) * (concordant + discordant + tied_second))
    return (concordant - discordant) / denominator if denominator else None


def tau_ap(truth: list[str], ranking: list[str]) -> float | None:
    """tau-AP of ``ranking`` against ``truth`` (both the same systems, best first; see the module docstring)."""
    if sorted(truth) != sorted(ranking):
        raise EvaltoolError("tau-AP compares two rankings of the same systems")
    if len(ranking) < 2:
        return None
    place = {system: i for i, system in enumerate(truth)}
    total = 0.0
    for i in range(1, len(ranking)):
        correct = sum(place[above] < place[ranking[i]] for above in ranking[:i])
        total += correct / i
    return 2 * total / (len(ranking) - 1) - 1


def _ranked(scores: dict[str, float]) -> list[dict]:
    order = sorted(scores, key=lambda name: (-scores[name], name))
    return [{"system": name, "score": scores[name], "rank": i} for i, name in enumerate(order, 1)]


def ranking_figures(human_scores: dict[str, float], model_scores: dict[str, float]) -> dict:
    """The two rankings of the same systems, Kendall's tau-b, tau-AP and the largest rank swaps."""
    systems = sorted(human_scores)
    human, model = _ranked(human_scores), _ranked(model_scores)
    rank_h = {r["system"]: r["rank"] for r in human}
    rank_m = {r["system"]: r["rank"] for r in model}
    swaps = sorted(
        (
            {"system": s, "human_rank": rank_h[s], "model_rank": rank_m[s], "shift": rank_m[s] - rank_h[s]}
            for s in systems
            if rank_m[s] != rank_h[s]
        ),
        key=lambda swap: (-abs(swap["shift"]), swap["human_rank"]),
    )
    return {
        "systems": len(systems),
        "kendall_tau": kendall_tau([human_scores[s] for s in systems], [model_scores[s] for s in systems]),
        "tau_ap": tau_ap([r["system"] for r in human], [r["system"] for r in model]),
        "rankings": {"human": human, "model": model},
        "swaps": swaps[:SWAPS_SHOWN],
    }


def _qrels(grades: dict, queries: set[str]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (query, doc), grade in grades.items():
        if query in queries:
            out.setdefault(query, {})[doc] = grade
    return out


def system_scores(grades: dict, runs: dict, queries: set[str], measure: str) -> dict[str, float]:
    """The mean ``measure`` of every run (``{name: run}``, a file or ``{query: {doc: score}}``) under
    the qrels ``grades`` kept to ``queries``."""
    import warnings

    from evaltool.errors import EvaltoolWarning
    from evaltool.evaluation import evaluate

    qrels = _qrels(grades, queries)
    scores = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaltoolWarning)
        for name, run in runs.items():
            summary = evaluate(qrels, run, [measure]).summary
            if measure not in summary:
                raise EvaltoolError(f"measure {measure!r} gives no mean (known as {', '.join(summary)})")
            scores[name] = float(summary[measure])
    return scores


def calibrate(
    human: dict,
    model: dict,
    grades,
    *,
    runs: dict | None = None,
    measure: str = DEFAULT_MEASURE,
    all_pairs: bool = False,
) -> dict:
    """The calibration of ``model`` against ``human`` (both ``{(query, doc): grade}``) on a scale of
    ``grades``; with ``runs`` (``{name: run}``), the systems' rankings under each (see the module
    docstring). The JSON the CLI prints and the dashboard shows."""
    out = agreement_figures(human, model, grades)
    if runs:
        if not all_pairs:
            both = set(human) & set(model)
            human = {p: g for p, g in human.items() if p in both}
            model = {p: g for p, g in model.items() if p in both}
        queries = {q for q, _ in human} & {q for q, _ in model}
        if not queries:
            raise EvaltoolError("the two sets judge no query in common: there is no ranking to compare")
        out["measure"] = measure
        out["ranked_on"] = "all pairs" if all_pairs else "pairs both judged"
        out["queries"] = len(queries)
        out.update(
            ranking_figures(system_scores(human, runs, queries, measure), system_scores(model, runs, queries, measure))
        )
    return out


def set_grades(db, name: str, *, model: bool, consensus: str = "majority") -> tuple[dict, tuple]:
    """One grade per pair of judgment set ``name`` and its scale's grades: the model's side keeps the
    raters named ``llm:...`` (all raters when there is none), the human side the others; several
    raters on one side are joined by ``consensus`` (majority, median, or an adjudicator's name)."""
    from evaltool.judgments.adjudication import consensus as agree
    from evaltool.judgments.sets import get_set, read_judgments

    scale = get_set(db, name).scale
    judged = read_judgments(db, name)
    machine = [j for j in judged if j.rater.startswith("llm:")]
    side = (machine or judged) if model else [j for j in judged if not j.rater.startswith("llm:")]
    if not side:
        raise EvaltoolError(f"judgment set {name!r} holds no {'model' if model else 'human'} judgments")
    qrels = agree(side, consensus).qrels
    return {(q, d): g for q, docs in qrels.items() for d, g in docs.items()}, scale.grades


def qrels_grades(path) -> dict:
    """``{(query, doc): grade}`` of a qrels file (a set given as a file)."""
    from evaltool.io.load import load_qrels

    out = {}
    for query, (docs, grades) in load_qrels(path).by_query.items():
        for doc, grade in zip(docs, grades):
            out[(query, str(doc))] = int(grade)
    return out
