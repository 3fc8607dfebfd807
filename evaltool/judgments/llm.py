"""Judgments from a language model behind an OpenAI-compatible chat-completions endpoint.

Each (query, document) pair becomes one chat request: the prompt
(:mod:`~evaltool.judgments.prompting`) filled with the query's text and the document's,
sent as one user message at temperature 0 to ``URL/chat/completions`` (a local Ollama,
vLLM or llama.cpp server, or a hosted service), with ``Authorization: Bearer KEY`` when a
key is given (read by the caller from an environment variable; never written anywhere).
Every pair ends in one of three states, recorded with its reason and never guessed:

* ``judged``: the answer parsed to a grade of the set's scale;
* ``unparsed``: the model answered, but not with one grade of the scale (the answer kept,
  cut to :data:`ANSWER_CHARS` characters);
* ``failed``: no answer: a timeout, an HTTP error that retries did not cure, an answer that
  is not a chat completion.

The requests go through bench's HTTP machinery (:mod:`evaltool.bench.backends`,
:mod:`evaltool.bench.execute`): at most ``concurrency`` in flight, ``timeout`` seconds per
pair for everything (retries included), retries of 408/425/429/5xx, dropped connections
and answers that are not JSON, after the ``Retry-After`` the service asks for or a jittered
backoff; redirects only within the endpoint's origin (the key never leaves it).

Bounded: ``max_calls`` caps the requests sent (retries count), ``max_tokens`` the tokens
the endpoint reports as used (``usage.total_tokens``; the calls in flight when the budget is
reached may go past it). Once a budget is spent no request starts; the pairs not reached
stay in the checkpoint's to-do list for ``--resume``.

Cached: an answer (parsed or not) is stored under a key of (endpoint, model, prompt hash,
the query's text, the document text's hash) in ``cache_dir``, one JSON file per key written
atomically, so a second run over the same pairs sends nothing. Failures are not cached.

Resumable: every settled pair is appended to a checkpoint (:class:`JudgeCheckpoint`, the
bench checkpoint's format) as it settles; ``resume`` reads it back (checking that the pairs,
endpoint, model, prompt and set are the same) and sends only the pairs it lacks. The
judgments are written to the set at the end, as one version, rater ``llm:MODEL``, each
with the prompt's hash in its note; the checkpoint is removed once every pair has settled.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from evaltool.bench.checkpoint import Checkpoint
from evaltool.errors import EvaltoolError, ParseError, quote

ANSWER_CHARS = 500  # of an unparsed answer, kept in the report
MAX_ANSWER_BYTES = 4 * 1024 * 1024
CHAT_PATH = "/chat/completions"
STATES = ("judged", "unparsed", "failed")


class MalformedAnswer(Exception):
    """The endpoint answered 200 with something that is not a chat completion's JSON."""

    def __init__(self, message: str, transient: bool):
        super().__init__(message)
        self.transient = transient


class BudgetSpent(Exception):
    """``--max-calls`` or ``--max-tokens`` is reached: no request starts any more."""


@dataclass
class Pair:
    """One (query, document) pair to grade, with the texts the prompt shows."""

    query_id: str
    doc_id: str
    query: str
    text: str
    title: str | None = None
    description: str | None = None
    narrative: str | None = None


@dataclass
class PairOutcome:
    """How one pair settled (a line of the checkpoint)."""

    query_id: str
    doc_id: str
    status: str  # judged | unparsed | failed
    grade: int | None = None
    reason: str | None = None  # why unparsed or failed
    answer: str | None = None  # the model's answer, when unparsed
    attempts: int = 0
    cached: bool = False
    tokens: int = 0

    @property
    def key(self) -> str:
        return f"{self.query_id} {self.doc_id}"

    @classmethod
    def from_record(cls, record: dict) -> PairOutcome:
        outcome = cls(**{name: record[name] for name in cls.__dataclass_fields__ if name in record})
        if outcome.status not in STATES:
            raise ValueError(outcome.status)
        return outcome

    def to_dict(self) -> dict:
        return asdict(self)


class JudgeCheckpoint(Checkpoint):
    """The checkpoint of ``evaltool judge``: one line per settled pair."""

    kind = "judge"
    outcome_type = PairOutcome
    matched = ("pairs_sha256", "endpoint", "model", "prompt_sha256", "set")
    unit, units = "pair", "pairs"
    marker = "evaltool_judge_checkpoint"
    resume_hint = "was the run started with the same pairs, --set and --checkpoint?"


def chat_url(url: str) -> str:
    """The chat-completions address of ``url``: a base URL (``http://host:11434/v1``) gets
    ``/chat/completions``; a URL that ends with it is kept.

    >>> chat_url("http://127.0.0.1:11434/v1"), chat_url("https://api.example.com/v1/chat/completions")
    ('http://127.0.0.1:11434/v1/chat/completions', 'https://api.example.com/v1/chat/completions')
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EvaltoolError(
            f"--llm {quote(url)}: expected an http(s):// URL of an OpenAI-compatible endpoint "
            "(such as http://127.0.0.1:11434/v1)"
        )
    path = parts.path.rstrip("/")
    if not path.endswith(CHAT_PATH):
        path += CHAT_PATH
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def shown_url(url: str) -> str:
    """``url`` without what may be a secret (user and password, the query string): what is recorded.

    >>> shown_url("https://me:pw@api.example.com/v1/chat/completions?key=s3cret")
    'https://api.example.com/v1/chat/completions'
    """
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass
class ChatAnswer:
    content: str
    tokens: int = 0


def read_chat_answer(text: str) -> ChatAnswer:
    """The message content and the tokens used of a chat completion's JSON.

    >>> read_chat_answer('{"choices": [{"message": {"content": "{\\\\"grade\\\\": 1}"}}], "usage": {"total_tokens": 9}}')
    ChatAnswer(content='{"grade": 1}', tokens=9)
    """
    try:
        data = json.loads(text)
    except ValueError:
        raise MalformedAnswer(f"the endpoint's answer is not JSON: {quote(text[:200])}", transient=True) from None
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise MalformedAnswer(
            f"the endpoint's answer is not a chat completion (no choices[0].message.content): {quote(text[:200])}",
            transient=False,
        ) from None
    if not isinstance(content, str):
        raise MalformedAnswer("the endpoint's answer has no text in choices[0].message.content", transient=False)
    usage = data.get("usage") if isinstance(data, dict) else None
    tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
    return ChatAnswer(content, tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0)


class ChatEndpoint:
    """A model behind an OpenAI-compatible chat-completions URL, reached through bench's
    :class:`~evaltool.bench.backends.HttpBackend` (its pool, redirect rules, size cap, errors)."""

    def __init__(self, url: str, model: str, *, api_key: str | None = None, concurrency: int = 4):
        from evaltool.bench.backends import HttpBackend

        if not isinstance(model, str) or not model.strip():
            raise EvaltoolError("--model: expected the name of a model the endpoint serves")
        self.url = chat_url(url)
        self.model = model
        headers = ["Content-Type: application/json"]
        if api_key:
            headers.append(f"Authorization: Bearer {api_key}")
        self.http = HttpBackend(
            self.url, [], headers=tuple(headers), max_response_bytes=MAX_ANSWER_BYTES, max_connections=concurrency
        )
        self.http.label = shown_url(self.url)

    def body(self, prompt: str) -> bytes:
        return json.dumps(
            {"model": self.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0, "stream": False},
            ensure_ascii=False,
        ).encode("utf-8")

    async def ask(self, prompt: str) -> ChatAnswer:
        from evaltool.bench.backends import Stopwatch

        pieces = await self.http.exchange("POST", self.url, self.body(prompt), Stopwatch())
        return read_chat_answer("".join(pieces))

    def is_transient(self, exc: BaseException) -> bool:
        if isinstance(exc, MalformedAnswer):
            return exc.transient
        return self.http.is_transient(exc)

    async def open(self) -> None:
        await self.http.open()

    async def close(self) -> None:
        await self.http.close()


class AnswerCache:
    """The model's answers on disk: ``DIR/ab/abcdef....json`` per key, written atomically."""

    def __init__(self, folder: str):
        self.folder = os.fspath(folder)
        try:
            os.makedirs(self.folder, exist_ok=True)
        except OSError as exc:
            raise EvaltoolError(f"--cache {self.folder}: cannot be made ({exc.strerror or exc})") from None

    @staticmethod
    def key(endpoint: str, model: str, prompt_hash: str, pair: Pair) -> str:
        """The SHA-256 of (endpoint, model, prompt hash, the query's texts, the document text's hash)."""
        document = hashlib.sha256(json.dumps([pair.title, pair.text]).encode("utf-8", "surrogatepass")).hexdigest()
        parts = [shown_url(endpoint), model, prompt_hash, [pair.query, pair.description, pair.narrative], document]
        return hashlib.sha256(json.dumps(parts).encode("utf-8", "surrogatepass")).hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], key + ".json")

    def get(self, key: str) -> ChatAnswer | None:
        try:
            with open(self._path(key), encoding="utf-8") as handle:
                data = json.load(handle)
            return ChatAnswer(data["content"], int(data.get("tokens", 0)))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent, or damaged: asked again

    def put(self, key: str, answer: ChatAnswer) -> None:
        path = self._path(key)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"content": answer.content, "tokens": answer.tokens}, out)
            os.replace(temporary, path)
        except OSError as exc:
            raise EvaltoolError(f"--cache {self.folder}: cannot write ({exc.strerror or exc})") from None


@dataclass
class Budget:
    """Requests sent and tokens used, against ``--max-calls`` and ``--max-tokens`` (None: no cap)."""

    max_calls: int | None = None
    max_tokens: int | None = None
    calls: int = 0
    tokens: int = 0
    spent: str | None = None  # which budget ran out

    def take(self) -> None:
        """Count one request about to be sent; :class:`BudgetSpent` when a budget is used up."""
        if self.max_calls is not None and self.calls >= self.max_calls:
            self.spent = "--max-calls"
        elif self.max_tokens is not None and self.tokens >= self.max_tokens:
            self.spent = "--max-tokens"
        if self.spent:
            raise BudgetSpent(self.spent)
        self.calls += 1


@dataclass
class JudgeSettings:
    """How to judge: the endpoint, model and prompt, the bounds, the cache and the checkpoint."""

    endpoint: ChatEndpoint
    prompt: str
    scale: object  # evaltool.judgments.scales.Scale
    set_name: str
    checkpoint_path: str
    concurrency: int = 4
    timeout: float = 60.0
    retries: int = 3
    max_calls: int | None = None
    max_tokens: int | None = None
    cache_dir: str | None = None
    resume: bool = False
    restart: bool = False

    @property
    def prompt_sha256(self) -> str:
        from evaltool.judgments.prompting import prompt_sha256

        return prompt_sha256(self.prompt)

    @property
    def rater(self) -> str:
        return f"llm:{self.endpoint.model}"


@dataclass
class JudgeRun:
    """What a run did: every settled pair (this run's and a resumed run's), the pairs left to do,
    the requests sent and tokens used now, answers read from the cache, which budget ran out."""

    outcomes: list[PairOutcome]
    pending: list[tuple[str, str]]
    calls: int
    tokens: int
    cached: int
    budget_spent: str | None
    checkpoint_path: str
    seconds: float = 0.0
    set_version: int | None = None
    counts: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "pairs": len(self.outcomes) + len(self.pending),
            **self.counts,
            "pending": len(self.pending),
            "calls": self.calls,
            "tokens": self.tokens,
            "cached": self.cached,
            "budget_spent": self.budget_spent,
            "set_version": self.set_version,
            "seconds": round(self.seconds, 3),
            "not_judged": [o.to_dict() for o in self.outcomes if o.status != "judged"],
        }


def pairs_sha256(pairs: list[Pair]) -> str:
    """A fingerprint of the pairs and their texts (a resumed run must judge the same)."""
    digest = hashlib.sha256()
    for pair in pairs:
        digest.update(
            json.dumps(
                [pair.query_id, pair.doc_id, pair.query, pair.description, pair.narrative, pair.title, pair.text]
            ).encode("utf-8", "surrogatepass")
        )
    return digest.hexdigest()


def _open_checkpoint(settings: JudgeSettings, pairs: list[Pair]) -> Checkpoint:
    header = {
        "pairs_sha256": pairs_sha256(pairs),
        "endpoint": shown_url(settings.endpoint.url),
        "model": settings.endpoint.model,
        "prompt_sha256": settings.prompt_sha256,
        "set": settings.set_name,
        "pairs": len(pairs),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if settings.resume:
        return JudgeCheckpoint.resume(settings.checkpoint_path, header)
    return JudgeCheckpoint.start(settings.checkpoint_path, header, discard=settings.restart)


def judge_pairs(
    pairs: list[Pair], settings: JudgeSettings, on_outcome: Callable[[PairOutcome], None] | None = None
) -> JudgeRun:
    """Grade ``pairs`` with the model (see the module docstring); ``on_outcome`` is called as each
    pair settles. Raises :class:`~evaltool.bench.execute.Interrupted` on Ctrl-C or SIGTERM (the
    settled pairs are in the checkpoint)."""
    from evaltool.bench.execute import TIMEOUT, Tries, call_with_retries, describe, run_bounded
    from evaltool.judgments.prompting import read_grade, render

    seen = set()
    for pair in pairs:
        if (pair.query_id, pair.doc_id) in seen:
            raise EvaltoolError(f"the pair {pair.query_id} {pair.doc_id} is given twice")
        seen.add((pair.query_id, pair.doc_id))
    endpoint, scale = settings.endpoint, settings.scale
    cache = AnswerCache(settings.cache_dir) if settings.cache_dir else None
    budget = Budget(settings.max_calls, settings.max_tokens)
    prompt_hash = settings.prompt_sha256
    checkpoint = _open_checkpoint(settings, pairs)
    todo = [pair for pair in pairs if f"{pair.query_id} {pair.doc_id}" not in checkpoint.done]
    from_cache = 0
    started = time.perf_counter()

    def settled(pair: Pair, answer: ChatAnswer, attempts: int, cached: bool) -> PairOutcome:
        grade, why = read_grade(answer.content, scale)
        if grade is None:
            return PairOutcome(
                pair.query_id,
                pair.doc_id,
                "unparsed",
                reason=why,
                answer=answer.content[:ANSWER_CHARS],
                attempts=attempts,
                cached=cached,
                tokens=answer.tokens,
            )
        return PairOutcome(
            pair.query_id, pair.doc_id, "judged", grade=grade, attempts=attempts, cached=cached, tokens=answer.tokens
        )

    async def work(pair: Pair) -> PairOutcome | None:
        nonlocal from_cache
        key = AnswerCache.key(endpoint.url, endpoint.model, prompt_hash, pair) if cache is not None else ""
        if cache is not None:
            hit = cache.get(key)
            if hit is not None:
                from_cache += 1
                return settled(pair, hit, 0, True)
        if budget.spent:
            return None
        prompt = render(
            settings.prompt,
            query=pair.query,
            title=pair.title,
            text=pair.text,
            scale=scale,
            description=pair.description,
            narrative=pair.narrative,
        )
        tries = Tries()

        async def attempt(left: float) -> ChatAnswer:
            budget.take()
            return await endpoint.ask(prompt)

        try:
            answer = await call_with_retries(
                attempt,
                is_transient=endpoint.is_transient,
                timeout=settings.timeout,
                retries=settings.retries,
                tries=tries,
            )
        except BudgetSpent:
            return None  # not settled: left for --resume
        except Exception as exc:
            timed_out = isinstance(exc, (TimeoutError, asyncio.TimeoutError))
            return PairOutcome(
                pair.query_id,
                pair.doc_id,
                "failed",
                reason=TIMEOUT if timed_out else describe(exc),
                attempts=tries.attempts,
            )
        budget.tokens += answer.tokens
        if cache is not None:
            cache.put(key, answer)
        return settled(pair, answer, tries.attempts, False)

    def done(pair: Pair, outcome: PairOutcome | None) -> None:
        if outcome is None:
            return
        checkpoint.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    try:
        if todo:
            run_bounded(todo, work, concurrency=settings.concurrency, on_done=done, backend=endpoint)
    finally:
        checkpoint.close()
    outcomes = [
        checkpoint.done[f"{p.query_id} {p.doc_id}"] for p in pairs if f"{p.query_id} {p.doc_id}" in checkpoint.done
    ]
    pending = [(p.query_id, p.doc_id) for p in pairs if f"{p.query_id} {p.doc_id}" not in checkpoint.done]
    counts = {state: sum(o.status == state for o in outcomes) for state in STATES}
    return JudgeRun(
        outcomes,
        pending,
        budget.calls,
        budget.tokens,
        from_cache,
        budget.spent,
        settings.checkpoint_path,
        time.perf_counter() - started,
        counts=counts,
    )


def save_judgments(db, run: JudgeRun, settings: JudgeSettings, *, author: str | None = None):
    """Write the judged pairs of ``run`` to the set, as one version (rater ``llm:MODEL``, the prompt's
    hash in each note); remove the checkpoint when every pair has settled. Returns the set."""
    from evaltool.judgments.sets import add_judgments, get_set

    note = f"prompt sha256:{settings.prompt_sha256[:16]}"
    items = [
        {"query_id": o.query_id, "doc_id": o.doc_id, "rater": settings.rater, "grade": o.grade, "note": note}
        for o in run.outcomes
        if o.status == "judged"
    ]
    change = {
        "what": "llm judged",
        "model": settings.endpoint.model,
        "endpoint": shown_url(settings.endpoint.url),
        "prompt_sha256": settings.prompt_sha256,
        **run.counts,
        "pending": len(run.pending),
    }
    judgment_set = (
        add_judgments(db, settings.set_name, items, author=author or settings.rater, change=change)
        if items
        else get_set(db, settings.set_name)
    )
    run.set_version = judgment_set.version
    if not run.pending and os.path.exists(run.checkpoint_path):
        os.unlink(run.checkpoint_path)
    return judgment_set


def read_pool_file(path) -> list[tuple[str, str]]:
    """The pairs of a pool file as ``evaltool pool`` writes it: ``query_id doc_id`` per line
    (blank lines and ``#`` comments skipped; a pair given twice kept once)."""
    from evaltool.io.textfiles import read_text

    name, text = read_text(path)
    pairs: dict[tuple[str, str], None] = {}
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 2:
            raise ParseError(name, number, line, "a line 'query_id doc_id' (a pool file)")
        pairs[(fields[0], fields[1])] = None
    if not pairs:
        raise EvaltoolError(f"{name}: no pairs to judge (expected lines 'query_id doc_id')")
    return list(pairs)


def with_texts(keys, queries: dict[str, dict], documents: dict[str, tuple[str | None, str | None]]) -> list[Pair]:
    """The pairs ``keys`` with their texts: ``queries`` (query -> {"text", "description", "narrative"}),
    ``documents`` (document -> (title, text)). A query or document without text is refused, all named
    at once (the model cannot grade what it is not shown)."""
    no_query = sorted({q for q, _ in keys if not (queries.get(q) or {}).get("text")})
    no_text = sorted({d for _, d in keys if not (documents.get(d) or (None, None))[1]})
    problems = []
    if no_query:
        problems.append(
            f"{len(no_query)} queries have no text ({', '.join(no_query[:5])}"
            f"{', ...' if len(no_query) > 5 else ''}); give --topics"
        )
    if no_text:
        problems.append(
            f"{len(no_text)} documents have no text ({', '.join(no_text[:5])}"
            f"{', ...' if len(no_text) > 5 else ''}); give --corpus"
        )
    if problems:
        raise EvaltoolError("; ".join(problems))
    out = []
    for query_id, doc_id in keys:
        fields = queries[query_id]
        title, text = documents[doc_id]
        out.append(
            Pair(query_id, doc_id, fields["text"], str(text), title, fields.get("description"), fields.get("narrative"))
        )
    return out


def pairs_to_judge(
    source,
    *,
    db=None,
    corpus=None,
    topics=None,
    set_name: str | None = None,
    only_unjudged: bool = False,
    texts: dict | None = None,
) -> tuple[list[Pair], int]:
    """The pairs of ``source`` (a pool file, or the id of a judging task in ``db``) with their texts,
    and how many were left out as judged already (``only_unjudged``: pairs the set ``set_name``
    holds a grade of, by anyone). Query texts come from ``topics`` (a topics file with ``text`` /
    ``query`` / ``title``, ``description``, ``narrative``), else from the task; document texts from
    ``corpus`` (a JSONL ``{"id", "title", "text"}``) or ``texts`` (document -> (title, text), as
    :func:`~evaltool.judgments.corpus.read_corpus` gives), else from the title and snippet the task kept."""
    from evaltool.judgments.tasks import query_fields

    queries: dict[str, dict] = {}
    documents: dict[str, tuple[str | None, str | None]] = {}
    source = os.fspath(source)
    if os.path.isfile(source):
        keys = read_pool_file(source)
    elif source.strip().isdigit():
        from evaltool.judgments.tasks import get_task

        task = get_task(db, int(source))
        keys = [(q.query_id, d.doc_id) for q in task.queries or () for d in q.documents]
        for q in task.queries or ():
            queries[q.query_id] = {
                k: v for k, v in (("text", q.text), ("description", q.description), ("narrative", q.narrative)) if v
            }
            for d in q.documents:
                if d.snippet or d.title:
                    documents.setdefault(d.doc_id, (d.title, d.snippet or d.title))
    else:
        raise EvaltoolError(f"{quote(source)}: no such pool file, and not the number of a judging task")
    if topics is not None:
        from evaltool.io.topics import read_topics

        for query_id, row in read_topics(topics).rows.items():
            fields = query_fields(row)
            if fields:
                queries[query_id] = fields
    if corpus is not None:
        from evaltool.judgments.corpus import read_corpus

        wanted = {d for _, d in keys}
        documents.update({d: texts for d, texts in read_corpus(corpus).items() if d in wanted})
    if texts:
        documents.update({d: texts[d] for _, d in keys if d in texts})
    left_out = 0
    if only_unjudged and set_name is not None:
        from evaltool.judgments.sets import list_sets, read_judgments

        if set_name in {s.name for s in list_sets(db)}:
            judged = {(j.query_id, j.doc_id) for j in read_judgments(db, set_name)}
            kept = [key for key in keys if key not in judged]
            left_out, keys = len(keys) - len(kept), kept
    return with_texts(keys, queries, documents), left_out
