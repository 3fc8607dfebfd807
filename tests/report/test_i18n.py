"""The message catalogue: every key in every language, with the same placeholders."""

from __future__ import annotations

import string

import pytest

from evaltool.errors import EvaltoolError
from evaltool.report.i18n import CATALOGUE, LANGUAGES, t, t_or


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_every_key_has_every_language_with_the_same_placeholders(key):
    entry = CATALOGUE[key]
    assert set(entry) == set(LANGUAGES), key
    assert all(entry[lang].strip() for lang in LANGUAGES), key
    assert len({frozenset(_placeholders(entry[lang])) for lang in LANGUAGES}) == 1, entry


def test_lookups():
    assert t("report.count", "es", count=3) == "3 evaluaciones"
    assert t("diff.heading", "es", b="rm3", b_id=2, a="bm25", a_id=1, count=5) == (
        "rm3 (#2) frente a bm25 (#1): 5 consultas en común")
    assert t_or("kind", "bench", "es") == "banco de pruebas" and t_or("kind", "other", "es") == "other"
    with pytest.raises(EvaltoolError, match="lang 'fr': expected one of en, es"):
        t("nav.trends", "fr")
    with pytest.raises(KeyError):
        t("no.such.key")
