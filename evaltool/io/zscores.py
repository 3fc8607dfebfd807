"""trec_eval's ``-Z`` file: ``qid measure mean stddev`` per line, the reference for z-scores."""

from __future__ import annotations

from evaltool.errors import ParseError
from evaltool.io.common import decode, read_bytes


def read_zscores(path: str) -> dict[tuple[str, str], tuple[float, float]]:
    """``qid measure mean stddev`` lines (trec_eval's ``-Z`` file)."""
    name, data = read_bytes(path)
    table = {}
    for number, raw in enumerate(data.split(b"\n"), 1):
        fields = raw.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise ParseError(name, number, decode(raw.rstrip(b"\r")), "4 fields 'query_id measure mean stddev'")
        try:
            mean, std = float(fields[2]), float(fields[3])
        except ValueError:
            raise ParseError(name, number, decode(raw.rstrip(b"\r")), "numbers as mean and stddev") from None
        table[(decode(fields[0]), decode(fields[1]))] = (mean, std)
    if not table:
        raise ParseError(name, None, None, "at least one 'query_id measure mean stddev' line")
    return table
