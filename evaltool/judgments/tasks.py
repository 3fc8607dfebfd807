"""Judging tasks: a pool to be judged into a judgment set, by one or several raters.

A task names its set, the raters wanted per pair (``ratings_wanted``), and per query the text
shown to a rater (with the description and narrative when given) and the documents to judge
(with the title and snippet the backend returned, when the pool came from a history execution).
Progress is read from the set: a pair is done when ``ratings_wanted`` raters have graded it; a
rater's own progress counts the pairs they graded. A rater's page shows them the pairs they have
not graded, in order, and never another rater's grade (:func:`rater_view`).

>>> import os, tempfile
>>> from evaltool.judgments.pool import depth_pool
>>> db = os.path.join(tempfile.mkdtemp(), "history.sqlite")
>>> pool = depth_pool([{"q1": ["d1", "d2"]}], 10)
>>> task = create_task(db, "helpdesk", pool, name="round 1", queries={"q1": {"text": "flat tyre"}})
>>> [(q.query_id, q.text, [d.doc_id for d in q.documents]) for q in get_task(db, task.id).queries]
[('q1', 'flat tyre', ['d1', 'd2'])]
>>> progress(db, task.id)["pairs"], progress(db, task.id)["done"]
(2, 0)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from evaltool.errors import EvaltoolError, NotFoundError
from evaltool.judgments.sets import check_name

MAX_TASK_PAIRS = 100_000  # pairs one task holds (a page lists a query's at once)
TEXT_FIELDS = {
    "text": ("text", "query", "title"),
    "description": ("description", "desc"),
    "narrative": ("narrative", "narr"),
}


@dataclass
class TaskDocument:
    doc_id: str
    title: str | None = None
    snippet: str | None = None


@dataclass
class TaskQuery:
    query_id: str
    text: str | None = None
    description: str | None = None
    narrative: str | None = None
    documents: list[TaskDocument] = field(default_factory=list)


@dataclass
class Task:
    """A judging task; ``queries`` (with their documents) when read with :func:`get_task`."""

    id: int
    set_name: str
    name: str
    created_at: str
    author: str | None
    ratings_wanted: int
    source: dict
    queries: list[TaskQuery] | None = None

    def pair_keys(self) -> set[tuple[str, str]]:
        return {(q.query_id, d.doc_id) for q in self.queries or () for d in q.documents}

    def to_dict(self) -> dict:
        out = {
            "id": self.id,
            "set": self.set_name,
            "name": self.name,
            "created_at": self.created_at,
            "author": self.author,
            "ratings_wanted": self.ratings_wanted,
            "source": self.source,
        }
        if self.queries is not None:
            out["queries"] = [
                {
                    "query_id": q.query_id,
                    "text": q.text,
                    "description": q.description,
                    "narrative": q.narrative,
                    "documents": [vars(d) for d in q.documents],
                }
                for q in self.queries
            ]
        return out


def query_fields(row: dict) -> dict:
    """``text`` / ``description`` / ``narrative`` of a topics row or queries-file object, by their usual names."""
    out = {}
    for wanted, names in TEXT_FIELDS.items():
        for name in names:
            value = row.get(name)
            if isinstance(value, str) and value.strip():
                out[wanted] = value
                break
    return out


def create_task(
    db,
    set_name: str,
    pool,
    *,
    name: str,
    ratings_wanted: int = 1,
    executions=(),
    queries=None,
    scale="graded",
    author: str | None = None,
    audit=None,
) -> Task:
    """A task judging ``pool`` (a :class:`~evaltool.judgments.pool.Pool`) into ``set_name`` (made on
    ``scale`` when it does not exist). Query texts come from ``queries`` ({query: {"text",
    "description", "narrative"}}), else from the ``executions`` (ids) the pool came from, which
    also give each document's title and snippet. ``audit(conn, task_id)`` runs in the same transaction."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.dates import now, stamp
    from evaltool.history.queries import opened
    from evaltool.judgments.scales import Scale

    name = check_name(name, "task name")
    set_name = check_name(set_name, "judgment set")
    if isinstance(ratings_wanted, bool) or not isinstance(ratings_wanted, int) or not 1 <= ratings_wanted <= 20:
        raise EvaltoolError(f"ratings wanted per pair {ratings_wanted!r}: expected a whole number from 1 to 20")
    if len(pool) == 0:
        raise EvaltoolError("the pool is empty: every pair is judged already (nothing to make a task of)")
    if len(pool) > MAX_TASK_PAIRS:
        raise EvaltoolError(f"the pool holds {len(pool)} pairs; a task holds at most {MAX_TASK_PAIRS}")
    texts = {q: query_fields(v) for q, v in (queries or {}).items()}
    shown: dict[tuple[str, str], tuple] = {}
    if executions:
        from evaltool.history import get_executions

        for execution in get_executions(db, list(executions), results=True):
            for result in execution.results or ():
                if result.get("text") and result["query_id"] not in texts:
                    texts[result["query_id"]] = {"text": result["text"]}
                for d in result.get("documents") or ():
                    shown.setdefault((result["query_id"], d["doc_id"]), (d.get("title"), d.get("snippet")))
    at = stamp(now())
    source = {"method": pool.method, "size": pool.size, "sources": pool.sources, "left_out": pool.left_out}
    with opened(db, create=True) as history, history.writing() as conn:
        s = schema.judgment_sets
        if conn.execute(sa.select(s.c.name).where(s.c.name == set_name)).first() is None:
            chosen = scale if isinstance(scale, Scale) else Scale.parse(scale)
            conn.execute(
                s.insert().values(
                    name=set_name, scale=chosen.to_json(), version=0, created_at=at, author=author, description=None
                )
            )
        task_id = conn.execute(
            schema.judging_tasks.insert().values(
                set_name=set_name,
                name=name,
                created_at=at,
                author=author,
                ratings_wanted=ratings_wanted,
                source=json.dumps(source, sort_keys=True),
            )
        ).inserted_primary_key[0]
        conn.execute(
            schema.task_queries.insert(),
            [
                {"task_id": task_id, "query_id": q, "position": i, **{k: texts.get(q, {}).get(k) for k in TEXT_FIELDS}}
                for i, q in enumerate(pool.pairs)
            ],
        )
        rows = [
            {
                "task_id": task_id,
                "query_id": q,
                "doc_id": d,
                "position": i,
                "title": shown.get((q, d), (None, None))[0],
                "snippet": shown.get((q, d), (None, None))[1],
            }
            for q, docs in pool.pairs.items()
            for i, d in enumerate(docs)
        ]
        for start in range(0, len(rows), 5000):
            conn.execute(schema.task_documents.insert(), rows[start : start + 5000])
        if audit is not None:
            audit(conn, task_id)
    return get_task(db, task_id)


def _task(row, queries=None) -> Task:
    return Task(
        row.id, row.set_name, row.name, row.created_at, row.author, row.ratings_wanted, json.loads(row.source), queries
    )


def read_task(conn, task_id) -> Task:
    """A task with its queries and documents, on an open connection."""
    import sqlalchemy as sa

    from evaltool.history import schema

    try:
        key = int(task_id)
    except (TypeError, ValueError):
        raise NotFoundError(f"no judging task {task_id!r} (task ids are numbers)") from None
    row = conn.execute(sa.select(schema.judging_tasks).where(schema.judging_tasks.c.id == key)).first()
    if row is None:
        raise NotFoundError(f"no judging task {key}")
    tq, td = schema.task_queries, schema.task_documents
    queries = {
        r.query_id: TaskQuery(r.query_id, r.text, r.description, r.narrative)
        for r in conn.execute(sa.select(tq).where(tq.c.task_id == key).order_by(tq.c.position))
    }
    for r in conn.execute(sa.select(td).where(td.c.task_id == key).order_by(td.c.query_id, td.c.position)):
        queries[r.query_id].documents.append(TaskDocument(r.doc_id, r.title, r.snippet))
    return _task(row, list(queries.values()))


def get_task(db, task_id) -> Task:
    """Task ``task_id`` with its queries and documents (NotFoundError when there is none)."""
    from evaltool.history.queries import opened

    with opened(db) as history, history.reading() as conn:
        return read_task(conn, task_id)


def list_tasks(db=None, set_name: str | None = None) -> list[Task]:
    """Every task (of one set), newest first, without their queries."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.queries import opened

    t = schema.judging_tasks
    query = sa.select(t).order_by(t.c.id.desc())
    if set_name is not None:
        query = query.where(t.c.set_name == set_name)
    with opened(db) as history, history.reading() as conn:
        return [_task(row) for row in conn.execute(query)]


def _graders(conn, task: Task) -> dict[tuple[str, str], dict[str, int]]:
    """(query, document) -> {rater: grade} of the set's current judgments of the task's pairs."""
    from evaltool.judgments.sets import judgments_of

    keys = task.pair_keys()
    out: dict[tuple[str, str], dict[str, int]] = {}
    for jd in judgments_of(conn, task.set_name):
        if (jd.query_id, jd.doc_id) in keys:
            out.setdefault((jd.query_id, jd.doc_id), {})[jd.rater] = jd.grade
    return out


def progress(db, task_id, rater: str | None = None) -> dict:
    """How far a task is: ``pairs``, ``done`` (pairs graded by ``ratings_wanted`` raters or more),
    ``ratings`` (grades given), per rater the pairs they graded (``raters``), and per query its
    ``pairs`` / ``done`` (and ``mine`` with ``rater``: the pairs that rater graded)."""
    from evaltool.history.queries import opened

    with opened(db) as history, history.reading() as conn:
        task = read_task(conn, task_id)
        graders = _graders(conn, task)
    raters: dict[str, int] = {}
    for grades in graders.values():
        for who in grades:
            raters[who] = raters.get(who, 0) + 1
    queries = []
    for q in task.queries or ():
        counts = [len(graders.get((q.query_id, d.doc_id), {})) for d in q.documents]
        entry = {"query_id": q.query_id, "pairs": len(counts), "done": sum(c >= task.ratings_wanted for c in counts)}
        if rater is not None:
            entry["mine"] = sum(rater in graders.get((q.query_id, d.doc_id), {}) for d in q.documents)
        queries.append(entry)
    return {
        "task": task.id,
        "set": task.set_name,
        "ratings_wanted": task.ratings_wanted,
        "pairs": sum(e["pairs"] for e in queries),
        "done": sum(e["done"] for e in queries),
        "ratings": sum(raters.values()),
        "raters": dict(sorted(raters.items())),
        "queries": queries,
    }


def rater_view(db, task_id, rater: str) -> dict:
    """What one rater sees of a task: every query with its documents, each marked with the rater's
    own grade (None until given) and never another's; ``next`` is the first pair they have not
    graded (None when they are through)."""
    from evaltool.history.queries import opened
    from evaltool.judgments.sets import read_set

    with opened(db) as history, history.reading() as conn:
        task = read_task(conn, task_id)
        scale = read_set(conn, task.set_name).scale
        graders = _graders(conn, task)
    queries: list[dict] = []
    first = None
    for q in task.queries or ():
        docs: list[dict] = []
        for d in q.documents:
            mine = graders.get((q.query_id, d.doc_id), {}).get(rater)
            docs.append({"doc_id": d.doc_id, "title": d.title, "snippet": d.snippet, "grade": mine})
            if mine is None and first is None:
                first = [q.query_id, d.doc_id]
        queries.append(
            {
                "query_id": q.query_id,
                "text": q.text,
                "description": q.description,
                "narrative": q.narrative,
                "documents": docs,
                "mine": sum(doc["grade"] is not None for doc in docs),
            }
        )
    return {
        "task": {k: v for k, v in task.to_dict().items() if k != "queries"},
        "rater": rater,
        "scale": [{"label": name, "grade": grade, "key": str(i)} for i, (name, grade) in enumerate(scale.labels)],
        "queries": queries,
        "next": first,
        "mine": sum(entry["mine"] for entry in queries),
        "pairs": sum(len(entry["documents"]) for entry in queries),
    }


def judge_in_task(db, task_id, rater: str, query_id: str, doc_id: str, value, *, note: str | None = None, audit=None):
    """``rater``'s grade (a grade or a label of the set's scale) of a pair of task ``task_id``, saved now
    as a new version of the task's set; returns the set. A pair the task does not hold is refused."""
    from evaltool.judgments.sets import add_judgments

    task = get_task(db, task_id)
    if (query_id, doc_id) not in task.pair_keys():
        raise NotFoundError(f"task {task.id} has no document {doc_id!r} for query {query_id!r}")
    return add_judgments(
        db,
        task.set_name,
        [{"query_id": query_id, "doc_id": doc_id, "rater": rater, "grade": value, "note": note}],
        author=rater,
        change={"what": "judged", "task": task.id, "query": query_id, "doc": doc_id},
        audit=audit,
    )


def unjudged_task(
    db,
    execution_id,
    set_name: str,
    *,
    name: str | None = None,
    ratings_wanted: int = 1,
    author: str | None = None,
    audit=None,
) -> Task:
    """ "Judge what nobody judged": a task of the documents execution ``execution_id`` returned that
    neither its own ground truth nor the set ``set_name`` judges."""
    from evaltool.history import get_execution
    from evaltool.judgments.pool import Pool
    from evaltool.judgments.sets import list_sets, read_judgments

    execution = get_execution(db, execution_id, results=True)
    judged: dict[str, set[str]] = {}
    for result in execution.results or ():
        judged.setdefault(result["query_id"], set()).update((result.get("judgments") or {}).keys())
    if set_name in {s.name for s in list_sets(db)}:
        for jd in read_judgments(db, set_name):
            judged.setdefault(jd.query_id, set()).add(jd.doc_id)
    chosen: dict[str, list[str]] = {}
    left_out = 0
    for result in execution.results or ():
        docs = [d["doc_id"] for d in sorted(result.get("documents") or (), key=lambda d: d["rank"])]
        fresh = sorted({d for d in docs if d not in judged.get(result["query_id"], ())})
        left_out += len(set(docs)) - len(fresh)
        if fresh:
            chosen[result["query_id"]] = fresh
    pool = Pool(chosen, "unjudged", 0, left_out, [f"execution {execution.id}"])
    return create_task(
        db,
        set_name,
        pool,
        name=name or f"{execution.name} #{execution.id}: unjudged",
        ratings_wanted=ratings_wanted,
        executions=[execution.id],
        author=author,
        audit=audit,
    )
