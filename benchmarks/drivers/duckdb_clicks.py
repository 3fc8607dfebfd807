"""The click metrics of ``evaltool clicks -m click_mrr -m ctr -m ctr@10`` as one DuckDB query.

usage: python duckdb_clicks.py LOG parquet|jsonl   (prints {"summary": {...}} as JSON)

The query is ``benchmarks/clicks.py``'s ``duckdb_sql``: evaltool's definitions written in
SQL, run by DuckDB on all cores. ``run.py`` times this whole process against ``evaltool
clicks`` on the same file and checks the values are equal before any ratio.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import duckdb  # noqa: E402

from clicks import duckdb_sql  # noqa: E402


def main(path, layout):
    connection = duckdb.connect()
    cursor = connection.execute(duckdb_sql(path, layout))
    names = [column[0] for column in cursor.description]
    row = cursor.fetchall()[0]
    print(json.dumps({"summary": dict(zip(names, row))}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
