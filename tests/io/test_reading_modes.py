"""Same bytes in, same output, in every reading mode (line reader, columnar, --stream)."""

from __future__ import annotations

from tests.support.helpers import invoke

# ids that are not UTF-8: trec_eval compares bytes, and so does every reader here
QRELS = b"q\xe91 0 d\xff1 1\nq\xe91 0 d3 0\nq2 0 d2 1\nq2 0 d\xfe9 1\n"
GROUPED = (b"q\xe91 Q0 d\xff1 1 2.0 r\nq\xe91 Q0 d3 2 2.0 r\nq\xe91 Q0 d\xfe2 3 1.0 r\n"
           b"q2 Q0 d2 1 1.0 r\nq2 Q0 d\xfe9 2 0.5 r\n")
UNGROUPED = (b"q2 Q0 d2 1 1.0 r\nq\xe91 Q0 d\xff1 1 2.0 r\nq\xe91 Q0 d3 2 2.0 r\n"
             b"q2 Q0 d\xfe9 2 0.5 r\nq\xe91 Q0 d\xfe2 3 1.0 r\n")
# per query, by hand: q\xe91 ranks d\xff1 (grade 1) above d3 (tie at 2.0, larger id first), so AP = 1;
# q2 ranks d2 then d\xfe9, both relevant: AP = 1 (the other tie order would give P_1 0 for q\xe91)
EXPECTED = (b"map                   \tq2\t1.0000\n"
            b"P_1                   \tq2\t1.0000\n"
            b"map                   \tq\xe91\t1.0000\n"
            b"P_1                   \tq\xe91\t1.0000\n"
            b"map                   \tall\t1.0000\n"
            b"P_1                   \tall\t1.0000\n")


def test_non_utf8_ids_score_alike_in_every_reading_mode(tmp_path, reading_mode):
    """--stream used to refuse such a run ('invalid UTF8 data') that the default reader scores."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(QRELS)
    for name, content in (("grouped.txt", GROUPED), ("ungrouped.txt", UNGROUPED)):
        run = tmp_path / name
        run.write_bytes(content)
        result = invoke(qrels, run, "-q", "-m", "map", "-m", "P.1", *reading_mode)
        assert result.exit_code == 0, (name, result.stderr)
        assert result.stdout_bytes == EXPECTED, name
