"""The scale a judgment set is graded on: binary, graded 0-3, or declared labels mapped to grades.

A scale is an ordered list of labels, each with an integer grade (the number qrels carry and
measures read). ``binary`` is ``not_useful`` = 0, ``useful`` = 1 (a "Useful / Not useful"
button); ``graded`` is 0 to 3 (TREC's and the seed's relevance grades: not relevant, related,
highly relevant, perfectly relevant); ``labels:NAME=GRADE,...`` declares any other (say a
five-star rating ``labels:1star=0,2stars=0,3stars=1,4stars=2,5stars=3``). Several labels may
share a grade; a label's position is its keyboard key on the judging page (0, 1, 2, ...).

A judgment is given as a grade of the scale or as one of its labels; anything else is
refused with what the scale accepts.

>>> scale = Scale.parse("labels:bad=0,fair=1,good=2")
>>> scale.judge("good"), scale.judge(1), scale.grades
((2, 'good'), (1, 'fair'), (0, 1, 2))
>>> Scale.parse("graded").judge(3)
(3, '3')
>>> Scale.parse("binary").judge(2)
Traceback (most recent call last):
evaltool.errors.EvaltoolError: grade 2 is not on the binary scale; expected one of 0, 1 or a label: not_useful, useful
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from evaltool.errors import EvaltoolError, quote

KINDS = ("binary", "graded", "labels")
MAX_LABELS = 10  # one keyboard digit each
_LABEL = re.compile(r"[^\s=,]{1,40}")


@dataclass(frozen=True)
class Scale:
    """``kind`` (binary | graded | labels) and its ``labels``: (label, grade) pairs in key order."""

    kind: str
    labels: tuple[tuple[str, int], ...]

    @classmethod
    def binary(cls) -> Scale:
        return cls("binary", (("not_useful", 0), ("useful", 1)))

    @classmethod
    def graded(cls) -> Scale:
        return cls("graded", tuple((str(g), g) for g in range(4)))

    @classmethod
    def parse(cls, text: str) -> Scale:
        """``binary``, ``graded`` or ``labels:NAME=GRADE,NAME=GRADE,...`` (at most ten labels, grades
        whole numbers from 0 to 99, names without spaces, ``=`` or ``,``)."""
        text = (text or "").strip()
        if text == "binary":
            return cls.binary()
        if text == "graded":
            return cls.graded()
        if not text.startswith("labels:"):
            raise EvaltoolError(f"scale {quote(text)}: expected binary, graded or labels:NAME=GRADE,...")
        pairs = []
        for part in text[len("labels:") :].split(","):
            name, eq, grade = part.strip().partition("=")
            if not eq or not _LABEL.fullmatch(name) or not grade.strip().isdigit() or int(grade) > 99:
                raise EvaltoolError(
                    f"scale {quote(text)}: the label {quote(part.strip())} is not NAME=GRADE "
                    "(a name without spaces, '=' or ',', a grade from 0 to 99)"
                )
            pairs.append((name, int(grade)))
        return cls.of_labels(pairs)

    @classmethod
    def of_labels(cls, pairs) -> Scale:
        """A declared scale from (label, grade) pairs, checked: 2 to 10 distinct labels, grades 0 to 99."""
        pairs = tuple((str(name), int(grade)) for name, grade in pairs)
        names = [name for name, _ in pairs]
        if not 2 <= len(pairs) <= MAX_LABELS:
            raise EvaltoolError(f"a scale of labels needs 2 to {MAX_LABELS} labels; {len(pairs)} given")
        if len(set(names)) != len(names):
            raise EvaltoolError(f"the scale names a label twice: {', '.join(names)}")
        if any(not 0 <= grade <= 99 for _, grade in pairs):
            raise EvaltoolError("a label's grade is a whole number from 0 to 99")
        return cls("labels", pairs)

    @property
    def grades(self) -> tuple[int, ...]:
        """The distinct grades, ascending."""
        return tuple(sorted({grade for _, grade in self.labels}))

    @property
    def ordinal(self) -> bool:
        """More than two grades: agreement is weighted by how far apart two grades are."""
        return len(self.grades) > 2

    def label_of(self, grade: int) -> str:
        """The first label with ``grade``."""
        return next(name for name, g in self.labels if g == grade)

    def judge(self, value) -> tuple[int, str]:
        """(grade, label) of a value given as a grade of the scale or one of its labels."""
        if isinstance(value, str):
            for name, grade in self.labels:
                if name == value:
                    return grade, name
            if value.strip().lstrip("-").isdigit():
                value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and value in self.grades:
            return value, self.label_of(value)
        accepted = ", ".join(str(g) for g in self.grades)
        names = ", ".join(name for name, _ in self.labels)
        shown = quote(value) if isinstance(value, str) else str(value)
        raise EvaltoolError(
            f"grade {shown} is not on the {self.kind} scale; expected one of {accepted} or a label: {names}"
        )

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "labels": [list(pair) for pair in self.labels]})

    @classmethod
    def from_json(cls, text: str) -> Scale:
        data = json.loads(text)
        return cls(data["kind"], tuple((str(name), int(grade)) for name, grade in data["labels"]))

    def describe(self) -> str:
        """The scale as ``parse`` reads it back (for a declared scale) or its kind."""
        if self.kind != "labels":
            return self.kind
        return "labels:" + ",".join(f"{name}={grade}" for name, grade in self.labels)
