"""What the model is asked, and how its answer is read.

The prompt is a text with placeholders, filled per (query, document) pair: ``{query}``,
``{description}``, ``{narrative}`` (empty when the topics give none), ``{title}``,
``{text}`` (the document's, from the corpus), and ``{grades}``: one line per grade of the
set's scale with its meaning. Only these names are placeholders; any other brace is kept
as written, so a prompt may show JSON. :data:`DEFAULT_PROMPT`, written for evaltool, asks
for one grade of the scale and an answer of the form ``{"grade": G}``; ``--prompt FILE``
replaces it. The prompt's SHA-256 (of its text as read, UTF-8) names it in the judgments
and in the cache, so judgments made under two prompts never pass for one another.

An answer parses when, once any ``<think>...</think>`` block and code fences are set
aside, it holds JSON objects with a ``"grade"`` key that all give the same grade, and
that grade is on the scale (a whole number, or one of the scale's labels). Anything else
is *unparsed*, with the reason, and never guessed: no object, two different grades, a
grade outside the scale, a grade that is not a whole number.

>>> from evaltool.judgments.scales import Scale
>>> read_grade('Relevant, mostly. {"grade": 2}', Scale.graded())
(2, None)
>>> read_grade('```json\\n{"grade": 7}\\n```', Scale.graded())
(None, 'grade 7 is not on the scale (0, 1, 2, 3)')
>>> read_grade("I would say 2", Scale.graded())
(None, 'no {"grade": ...} object in the answer')
"""

from __future__ import annotations

import hashlib
import json
import re

from evaltool.errors import EvaltoolError

PLACEHOLDERS = ("query", "description", "narrative", "title", "text", "grades")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)
_OBJECT = re.compile(r"\{[^{}]*\}")
MAX_PROMPT_CHARS = 100_000

# the meaning of each grade of the two built-in scales, in evaltool's words
MEANINGS = {
    "graded": {
        0: "not relevant: the document has nothing to do with what the query asks",
        1: "related: the document is on the query's topic but does not answer it",
        2: "highly relevant: the document answers the query, partly, or among other material",
        3: "perfectly relevant: the document is about the query and answers it fully",
    },
    "binary": {
        0: "not useful: the document does not help someone who asked the query",
        1: "useful: the document helps someone who asked the query",
    },
}

DEFAULT_PROMPT = """You judge how relevant a document is to a search query, for the evaluation of a search engine.

Query: {query}
{description}
{narrative}
Document title: {title}
Document:
{text}

Grade the document on this scale:
{grades}

Judge the document's content against what the query asks, not its style or length. Answer with
one JSON object and nothing else: {"grade": G}, where G is one of the grades above.
"""


def prompt_sha256(template: str) -> str:
    """The SHA-256 of a prompt's text (UTF-8), hexadecimal.

    >>> prompt_sha256("Grade it: {query}")[:12]
    'f67c4a107936'
    """
    return hashlib.sha256(template.encode("utf-8")).hexdigest()


def read_prompt(path) -> str:
    """The prompt in file ``path`` (UTF-8); it must name ``{query}`` and ``{text}``."""
    try:
        with open(path, encoding="utf-8") as handle:
            template = handle.read(MAX_PROMPT_CHARS + 1)
    except OSError as exc:
        raise EvaltoolError(f"--prompt {path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise EvaltoolError(f"--prompt {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if len(template) > MAX_PROMPT_CHARS:
        raise EvaltoolError(f"--prompt {path}: longer than {MAX_PROMPT_CHARS} characters")
    named = set(_PLACEHOLDER.findall(template))
    lacking = [name for name in ("query", "text") if name not in named]
    if lacking:
        raise EvaltoolError(
            f"--prompt {path}: the prompt must hold {' and '.join('{' + n + '}' for n in lacking)} "
            f"(placeholders: {', '.join('{' + n + '}' for n in PLACEHOLDERS)})"
        )
    return template


def grade_lines(scale) -> str:
    """One line per grade of ``scale``, highest first: ``G = meaning`` (a declared scale: its labels).

    >>> from evaltool.judgments.scales import Scale
    >>> print(grade_lines(Scale.parse("labels:bad=0,ok=1,fine=1,great=2")))
    2 = great
    1 = ok, fine
    0 = bad
    """
    meanings = MEANINGS.get(scale.kind, {})
    lines = []
    for grade in sorted(scale.grades, reverse=True):
        names = ", ".join(name for name, g in scale.labels if g == grade)
        lines.append(f"{grade} = {meanings.get(grade, names)}")
    return "\n".join(lines)


def render(
    template: str,
    *,
    query: str,
    title: str | None,
    text: str,
    scale,
    description: str | None = None,
    narrative: str | None = None,
) -> str:
    """The prompt for one pair: the placeholders of ``template`` filled in (see the module docstring).

    >>> from evaltool.judgments.scales import Scale
    >>> render('Q: {query} | D: {text} | {"keep": 1}', query="flat tyre", title=None, text="Patch it.",
    ...        scale=Scale.binary())
    'Q: flat tyre | D: Patch it. | {"keep": 1}'
    """
    values = {
        "query": query,
        "title": title or "",
        "text": text,
        "grades": grade_lines(scale),
        "description": f"Description: {description}" if description else "",
        "narrative": f"Narrative: {narrative}" if narrative else "",
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _candidates(answer: str) -> list:
    answer = _THINKING.sub("", answer)
    stripped = answer.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    found = [whole] if isinstance(whole, dict) else []
    if not found:
        for match in _OBJECT.finditer(answer):
            try:
                found.append(json.loads(match.group(0)))
            except ValueError:
                continue
    return [item["grade"] for item in found if isinstance(item, dict) and "grade" in item]


def read_grade(answer: str, scale) -> tuple[int | None, str | None]:
    """(grade, None) when ``answer`` parses (see the module docstring), else (None, why it does not)."""
    values = _candidates(answer)
    if not values:
        return None, 'no {"grade": ...} object in the answer'
    distinct = list(dict.fromkeys(json.dumps(v) for v in values))
    if len(distinct) > 1:
        return None, f"the answer gives several grades: {', '.join(distinct[:5])}"
    value = values[0]
    on_scale = ", ".join(str(g) for g in scale.grades)
    if isinstance(value, str) and value in {name for name, _ in scale.labels}:
        return scale.judge(value)[0], None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (isinstance(value, float) and not value.is_integer())
    ):
        return None, f"grade {json.dumps(value)[:40]} is not a whole number of the scale ({on_scale})"
    if int(value) not in scale.grades:
        return None, f"grade {int(value)} is not on the scale ({on_scale})"
    return int(value), None
