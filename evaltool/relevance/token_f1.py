"""Token F1 between an expected answer and a retrieved text: the fallback judgment.

Normalisation is SQuAD's (Rajpurkar et al., 2016, ``evaluate-v1.1.py``
``normalize_answer``): lowercase, remove punctuation (ASCII punctuation and every Unicode
punctuation character), remove the articles *a*, *an*, *the*, split on whitespace.
F1 counts shared tokens with multiplicity (SQuAD's ``Counter`` intersection)::

    F1 = 2 * shared / (tokens(answer) + tokens(text))

which equals 2PR / (P + R) and is computed as one division of two integers, so that a
value which is exactly a threshold (say 3/10) compares equal to it. No shared token
(or no token at all on either side) gives 0. An item is relevant when F1 >= the
threshold (0.3 by default); with several expected answers, the best F1 counts.

>>> tokens("The Eiffel Tower, in Paris!")
['eiffel', 'tower', 'in', 'paris']
>>> token_f1(tokens("Paris"), tokens("It is in Paris."))
0.4
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ASCII_PUNCTUATION = frozenset(string.punctuation)


def _is_punctuation(char: str) -> bool:
    return char in _ASCII_PUNCTUATION or unicodedata.category(char).startswith("P")


def normalize(text: str) -> str:
    """SQuAD's answer normalisation (with Unicode punctuation removed too)."""
    text = "".join(c for c in text.lower() if not _is_punctuation(c))
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    return normalize(text).split()


def token_f1(expected: list[str], found: list[str]) -> float:
    """F1 of two token lists, shared tokens counted with multiplicity."""
    shared = sum((Counter(expected) & Counter(found)).values())
    if shared == 0:
        return 0.0
    return 2 * shared / (len(expected) + len(found))


def best_f1(answers: list[list[str]], text: str) -> float:
    """The highest F1 of ``text`` against any of the (tokenised) expected answers."""
    found = tokens(text)
    return max((token_f1(answer, found) for answer in answers), default=0.0)
