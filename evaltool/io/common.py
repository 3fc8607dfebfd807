"""Pieces shared by every reader: opening files, encoding ids, duplicate policy."""

from __future__ import annotations

import gzip
import os
import sys
import zlib

import numpy as np

from evaltool.errors import EvaltoolError, ParseError

GZIP_MAGIC = b"\x1f\x8b"
DUPLICATE_POLICIES = ("error", "first", "max")
# grades are stored as int64 (trec_eval reads them into a C long)
GRADE_MIN, GRADE_MAX = -(2**63), 2**63 - 1
GRADE_RANGE = f"between {GRADE_MIN} and {GRADE_MAX}"


def read_bytes(path: str | os.PathLike, *, allow_stdin: bool = False) -> tuple[str, bytes]:
    """Return (display name, content) of a file; ``-`` is stdin; gzip is found by magic bytes."""
    name = os.fspath(path)
    if name == "-":
        if not allow_stdin:
            raise EvaltoolError("reading judgments from stdin ('-') is not supported; give a file")
        data = sys.stdin.buffer.read()
        name = "<stdin>"
    else:
        try:
            with open(name, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise EvaltoolError(f"cannot read {name}: {exc.strerror or exc}") from None
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ParseError(name, None, None, f"a readable gzip stream ({exc})") from None
    return name, data


def decode(token: bytes) -> str:
    """Ids are bytes on disk; undecodable bytes survive a round trip unchanged."""
    return token.decode("utf-8", "surrogateescape")


class Encoder:
    """Dictionary-encodes ids in first-seen order."""

    __slots__ = ("codes", "vocab")

    def __init__(self) -> None:
        self.codes: dict = {}
        self.vocab: list[str] = []

    def __call__(self, key) -> int:
        code = self.codes.get(key)
        if code is None:
            code = len(self.vocab)
            self.codes[key] = code
            self.vocab.append(decode(key) if isinstance(key, bytes) else str(key))
        return code


def check_policy(policy: str) -> None:
    if policy not in DUPLICATE_POLICIES:
        raise EvaltoolError(f"unknown duplicate policy {policy!r}; expected one of {', '.join(DUPLICATE_POLICIES)}")


def find_duplicates(qid_codes: np.ndarray, doc_codes: np.ndarray, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """Row order sorted by (query, document) and a mask of rows repeating their predecessor."""
    key = qid_codes.astype(np.int64) * max(n_docs, 1) + doc_codes
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    repeat = np.zeros(len(key), dtype=bool)
    repeat[1:] = sorted_key[1:] == sorted_key[:-1]
    return order, repeat


def resolve_duplicates(
    policy: str,
    qid_codes: np.ndarray,
    doc_codes: np.ndarray,
    values: np.ndarray,
    n_docs: int,
    on_error,
) -> tuple[np.ndarray, int]:
    """Rows to keep (sorted indices) under ``policy``, and how many were dropped.

    ``error`` calls ``on_error(first_row, repeated_row)`` for the first duplicate found,
    ``first`` keeps the earliest line, ``max`` keeps the largest value (earliest on ties).
    """
    if policy not in DUPLICATE_POLICIES:
        raise EvaltoolError(f"unknown duplicate policy {policy!r}; expected one of {', '.join(DUPLICATE_POLICIES)}")
    order, repeat = find_duplicates(qid_codes, doc_codes, n_docs)
    if not repeat.any():
        return np.arange(len(values)), 0
    if policy == "error":
        where = int(np.flatnonzero(repeat)[0])
        start = where
        while repeat[start]:
            start -= 1
        on_error(int(order[start]), int(order[where]))
    group = np.cumsum(~repeat) - 1
    if policy == "first":
        keep = order[~repeat]
    else:
        # within each (query, document) group: the largest value, then the earliest row
        by_value = np.lexsort((order, -values[order], group))
        first_of_group = np.ones(len(by_value), dtype=bool)
        first_of_group[1:] = group[by_value][1:] != group[by_value][:-1]
        keep = order[by_value[first_of_group]]
    keep = np.sort(keep)
    return keep, len(values) - len(keep)
