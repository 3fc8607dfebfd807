"""Tables of judgment sets and their agreement (``evaltool judgments ...``): formatting only.

The JSON of each command is the library's dict itself; these turn it into a
:class:`~evaltool.report.table.Report` (text, CSV, Markdown, LaTeX).
"""

from __future__ import annotations

from evaltool.report.table import Report, Table


def _grades(grades: dict) -> str:
    return " ".join(f"{rater}={grade}" for rater, grade in grades.items())


def agreement_report(figures: dict) -> Report:
    """``judgments agreement``: overall figures, Cohen's kappa per pair of raters, per query, and the
    disagreements."""
    overall = Table(
        ["figure", "value"],
        [
            ["raters", len(figures["raters"])],
            ["pairs judged", figures["pairs"]],
            ["pairs judged twice or more", figures["rated_twice"]],
            ["fleiss_kappa", figures["fleiss_kappa"]],
            ["krippendorff_alpha (ordinal)", figures["krippendorff_alpha"]],
            ["disagreements", len(figures["disagreements"])],
        ],
        title="agreement",
    )
    cohen = Table(
        ["rater A", "rater B", "weights", "pairs", "cohen_kappa"],
        [[*k["raters"], k["weights"] or "none", k["pairs"], k["kappa"]] for k in figures["cohen_kappa"]],
        title="cohen_kappa",
    )
    queries = Table(
        ["query", "pairs", "fleiss_kappa", "krippendorff_alpha", "disagreements"],
        [
            [q["query_id"], q["pairs"], q["fleiss_kappa"], q["krippendorff_alpha"], q["disagreements"]]
            for q in figures["queries"]
        ],
        title="per query",
    )
    disagreements = Table(
        ["query", "document", "grades"],
        [[d["query_id"], d["doc_id"], _grades(d["grades"])] for d in figures["disagreements"]],
        title="disagreements",
    )
    notes = (
        [f"judgment set {figures['set']} version {figures['version']} ({figures['scale']})"] if "set" in figures else []
    )
    return Report([overall, cohen, queries, disagreements], notes=notes)


def agreement_rows(figures: dict) -> Report:
    """The same figures as one tidy table (CSV holds one): a row per figure, per query, per disagreement:
    figure, query, document, raters (or each rater's grade), weights, pairs, value."""
    rows = [
        ["cohen_kappa", None, None, " ".join(k["raters"]), k["weights"] or "none", k["pairs"], k["kappa"]]
        for k in figures["cohen_kappa"]
    ]
    for name in ("fleiss_kappa", "krippendorff_alpha"):
        rows.append([name, None, None, " ".join(figures["raters"]), None, figures["rated_twice"], figures[name]])
        rows += [[name, q["query_id"], None, None, None, q["pairs"], q[name]] for q in figures["queries"]]
    rows += [
        ["disagreement", d["query_id"], d["doc_id"], _grades(d["grades"]), None, None, None]
        for d in figures["disagreements"]
    ]
    return Report([Table(["figure", "query", "document", "raters", "weights", "pairs", "value"], rows)])


def sets_table(sets: list) -> Report:
    """``judgments list``: one line per set."""
    return Report(
        [
            Table(
                ["name", "scale", "version", "created_at", "author", "description"],
                [[s.name, s.scale.describe(), s.version, s.created_at, s.author, s.description] for s in sets],
            )
        ],
        notes=[] if sets else ["no judgment set yet"],
    )


def feedback_table(report: dict) -> Report:
    """``evaltool feedback``: the users, the agreement, nDCG from the ratings."""
    users = Table(
        ["user", "ratings", "rated by others too", "agrees with the consensus"],
        [[u["user"], u["ratings"], u["shared"], u["agrees"]] for u in report["users"]],
        title="users",
    )
    figures = report["agreement"]
    overall = Table(
        ["figure", "value"],
        [
            ["events", report["events"]],
            ["pairs", figures["pairs"]],
            ["fleiss_kappa", figures["fleiss_kappa"]],
            ["krippendorff_alpha (ordinal)", figures["krippendorff_alpha"]],
        ],
        title="agreement",
    )
    tables = [users, overall]
    if report["ndcg"] is not None:
        ndcg = report["ndcg"]
        tables.append(
            Table(
                ["query", f"ndcg@{ndcg['k']}"],
                [*([q, v] for q, v in ndcg["per_query"].items()), ["all", ndcg["mean"]]],
                title="nDCG from the ratings",
            )
        )
    return Report(tables, notes=[f"judgment set {report['set']} version {report['version']}"])
