"""Fusion in one process: evaltool.fuse against ranx.fuse on the same runs, warm, build not timed.

usage: python fusion.py METHOD REPEAT RUN...   (prints one JSON object)

Both tools get their runs already built (evaltool: ``load_run``; ranx: ``Run.from_file``),
then fuse once to warm up (ranx compiles its numba kernels), then REPEAT times each,
interleaved. Times are medians of wall time (``perf_counter``). ``max_difference`` is the
largest difference of a fused score between the two (ranx's tie order in the input runs
aside: the runs written by the harness have none).
"""
import json
import statistics
import sys
import time

from ranx import Run, fuse as ranx_fuse

from evaltool.fusion import fuse
from evaltool.io.load import load_run


def main(method, repeat, paths):
    ours = [load_run(p) for p in paths]
    theirs = [Run.from_file(p, kind="trec") for p in paths]
    tasks = {"evaltool.fuse": lambda: fuse(ours, method, names=[str(i) for i in range(len(ours))]),
             "ranx.fuse": lambda: ranx_fuse(theirs, norm="min-max", method=method)}
    outputs = {name: task() for name, task in tasks.items()}
    walls = {name: [] for name in tasks}
    for _ in range(repeat):
        for name, task in tasks.items():
            start = time.perf_counter()
            task()
            walls[name].append(time.perf_counter() - start)
    a, b = outputs["evaltool.fuse"].to_dict(), outputs["ranx.fuse"].to_dict()
    difference = max(abs(a[q][d] - s) for q, docs in b.items() for d, s in docs.items())
    print(json.dumps({"median_s": {n: statistics.median(w) for n, w in walls.items()}, "runs": len(paths),
                      "rows": sum(len(r) for r in ours), "max_difference": difference}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
