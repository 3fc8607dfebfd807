#!/usr/bin/env python3
"""Performance harness: evaltool vs trec_eval, pytrec_eval, ir_measures (and ranx).

    .venv/bin/python benchmarks/run.py                 # every data set, 3 repetitions
    .venv/bin/python benchmarks/run.py --quick         # S and DL only (seconds)
    .venv/bin/python benchmarks/run.py --sizes L XL --tools evaltool trec_eval --repeat 5

Each tool runs as its own whole process (interpreter start-up and imports included) on
the same cached files; wall time is the median over --repeat runs, interleaved round-robin
across tools; peak RSS is the child's ru_maxrss from wait4.  See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import importlib.util
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import clicks as click_logs  # noqa: E402
import datagen  # noqa: E402

ALL_SIZES = ["S", "DL", "R03", "L", "L-shuffled", "XL"]
QUICK_SIZES = ["S", "DL", "R03"]
DASK_SIZES = {"L", "XL"}  # local vs Dask (LocalCluster) on the big runs
ALL_TOOLS = ["evaltool", "trec_eval", "pytrec_eval", "ir_measures", "ranx"]
MEASURE_OPTS = ["-m", "map", "-m", "ndcg_cut.10", "-m", "P.10", "-m", "recall.1000", "-m", "recip_rank"]
KEYS = ["map", "ndcg_cut_10", "P_10", "recall_1000", "recip_rank"]
ALL_TREC_SIZES = {"L"}          # data sets that also get the '-m all_trec' rows
# ranx compiles its numba kernels in every process (8 s on the 43,000-line DL set, most of it
# compiling) and reads runs in Python; three repetitions on 7M and 20M lines would add tens of
# minutes to a harness meant to finish in about fifteen, so
# ranx is timed on the small sets only and the big sets say so in the log
RANX_SIZES = {"S", "DL"}
STAGES = ["parse", "rank", "measures", "output"]


@dataclass
class Row:
    """One (tool, options) combination measured on one data set."""
    label: str                   # e.g. "evaltool", "evaltool -m all_trec"
    tool: str
    variant: str                 # "5" (the five measures) or "all_trec"
    cmd: list
    walls: list = field(default_factory=list)
    rss_kb: list = field(default_factory=list)
    timings: list = field(default_factory=list)
    values: dict = field(default_factory=dict)
    status: str = "ok"           # ok | error | timeout
    error: str = ""
    check: str = ""              # result of the value comparison
    mismatches: list = field(default_factory=list)

    @property
    def ok(self):
        return self.status == "ok" and bool(self.walls)

    def wall(self):
        return statistics.median(self.walls) if self.walls else None

    def rss(self):
        return max(self.rss_kb) if self.rss_kb else None


# ---------------------------------------------------------------- running one process

class Launcher:
    """Runs commands through benchmarks/launcher.py (a bare interpreter) so that a child's peak RSS
    is not inflated by this process's memory; see launcher.py."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="evaltool-bench-")
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", str(HERE / "launcher.py")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.floor_kb = self.run([shutil.which("true") or "/bin/true"], 60)[1]

    def run(self, cmd, timeout):
        """Run cmd; return (wall seconds, ru_maxrss KB, exit code, timed_out, stdout, stderr)."""
        cmd = list(cmd)
        if not os.path.isabs(cmd[0]):
            cmd[0] = shutil.which(cmd[0]) or cmd[0]
        out, err = os.path.join(self.tmp.name, "out"), os.path.join(self.tmp.name, "err")
        self.proc.stdin.write(json.dumps({"cmd": cmd, "stdout": out, "stderr": err, "timeout": timeout}) + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError("benchmarks/launcher.py died")
        r = json.loads(reply)
        with open(out, "rb") as f:
            stdout = f.read().decode(errors="replace")
        with open(err, "rb") as f:
            stderr = f.read().decode(errors="replace")
        return (r["wall"], r["maxrss_kb"], os.waitstatus_to_exitcode(r["status"]), r["timed_out"], stdout, stderr)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        finally:
            self.tmp.cleanup()


def parse_summary(stdout):
    """{measure: value string} from trec_eval-format 'measure all value' lines."""
    values = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "all":
            values[parts[0]] = parts[2]
    return values


def parse_timings(stderr):
    for line in reversed(stderr.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if isinstance(d, dict) and "parse" in d:
                return d
    return None


# ---------------------------------------------------------------- tools

def evaltool_path():
    cand = Path(sys.executable).with_name("evaltool")
    if cand.exists():
        return str(cand)
    return shutil.which("evaltool")


def compile_evaltool() -> bool:
    """Write evaltool's .pyc files when the environment forbids the interpreter to
    (PYTHONDONTWRITEBYTECODE): an installed package has them (pip compiles on install, an
    editable one writes them on first import), so no timed run should compile the sources.
    numpy and the other tools come from site-packages, compiled at install. True if it compiled."""
    spec = importlib.util.find_spec("evaltool")
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or spec is None or not spec.submodule_search_locations:
        return False
    done = subprocess.run([sys.executable, "-m", "compileall", "-q", *spec.submodule_search_locations],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return done.returncode == 0


def available_tools(args):
    """{tool: path-or-True} for the tools that can run here, {tool: reason} for the others."""
    have, missing = {}, {}
    for tool in args.tools:
        if tool == "evaltool":
            p = evaltool_path()
            (have if p else missing)[tool] = p or "evaltool not installed in this environment"
        elif tool == "trec_eval":
            p = args.trec_eval or shutil.which("trec_eval")
            (have if p else missing)[tool] = p or "trec_eval not on PATH"
        else:
            module = tool
            if importlib.util.find_spec(module) is not None:
                have[tool] = str(HERE / "drivers" / f"{tool}_driver.py")
            else:
                missing[tool] = f"python module {module} not importable"
    return have, missing


def tool_versions(have):
    versions = {}
    for tool, path in have.items():
        try:
            if tool == "evaltool":
                r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
                versions[tool] = (r.stdout or r.stderr).strip()
            elif tool == "trec_eval":
                r = subprocess.run([path, "-v"], capture_output=True, text=True, timeout=60)
                versions[tool] = ((r.stdout or "") + (r.stderr or "")).strip().splitlines()[0]
            else:
                dist = {"pytrec_eval": "pytrec-eval-terrier"}.get(tool, tool)
                try:
                    versions[tool] = importlib.metadata.version(dist)
                except importlib.metadata.PackageNotFoundError:
                    versions[tool] = importlib.metadata.version(tool)
        except Exception as e:  # a version string is nice-to-have
            versions[tool] = f"unknown ({e})"
    return versions


def rows_for(size, have, qrels, run):
    rows = []
    for tool in ALL_TOOLS:
        if tool not in have:
            continue
        path = have[tool]
        if tool == "ranx" and size not in RANX_SIZES:
            continue
        if tool == "evaltool":
            rows.append(Row("evaltool", tool, "5", [path, *MEASURE_OPTS, qrels, run, "--timings"]))
            if size in ALL_TREC_SIZES:
                rows.append(Row("evaltool -m all_trec", tool, "all_trec",
                                [path, "-m", "all_trec", qrels, run, "--timings"]))
            if size in DASK_SIZES and importlib.util.find_spec("distributed") is not None:
                # a LocalCluster of one worker process per core, started by the command itself:
                # wall time includes the cluster's start-up; peak RSS is the largest single process
                rows.append(Row("evaltool --engine dask", tool, "5",
                                [path, *MEASURE_OPTS, "--engine", "dask", qrels, run]))
        elif tool == "trec_eval":
            rows.append(Row("trec_eval", tool, "5", [path, *MEASURE_OPTS, qrels, run]))
            if size in ALL_TREC_SIZES:
                rows.append(Row("trec_eval -m all_trec", tool, "all_trec", [path, "-m", "all_trec", qrels, run]))
        else:
            rows.append(Row(tool, tool, "5", [sys.executable, path, qrels, run]))
    return rows


# ---------------------------------------------------------------- comparing values

def _decimals(s):
    return len(s.split(".", 1)[1]) if "." in s else 0


def same_value(a, b):
    """Agree at trec_eval's 4 printed decimals.  Two values printed with <= 4 decimals must be
    equal; a full-precision value must round to the other (half a unit of slack so that a
    value sitting on a rounding boundary is not a false alarm)."""
    try:
        fa, fb = float(a), float(b)
    except ValueError:
        return a == b
    if _decimals(a) <= 4 and _decimals(b) <= 4:
        return abs(fa - fb) < 1e-9
    return abs(fa - fb) <= 0.5e-4 + 1e-9


def compare(row, ref, keys):
    bad = []
    for k in keys:
        a, b = row.values.get(k), ref.values.get(k)
        if a is None or b is None:
            if b is not None:
                bad.append(f"{k}: missing")
            continue
        if not same_value(a, b):
            bad.append(f"{k}: {a} vs {b}")
    return bad


def check_values(rows):
    """Compare every row's five summary values with trec_eval's (evaltool's if trec_eval did
    not run); evaltool -m all_trec is compared measure by measure with trec_eval -m all_trec."""
    by_label = {r.label: r for r in rows if r.ok}
    ref = by_label.get("trec_eval") or by_label.get("evaltool")
    ref_all = by_label.get("trec_eval -m all_trec")
    for r in rows:
        if not r.ok:
            r.check = r.status.upper()
            continue
        if r is ref:
            r.check = "reference"
            continue
        if r.label == "evaltool -m all_trec" and ref_all is not None:
            target, keys = ref_all, sorted(ref_all.values)
        else:
            target, keys = ref, KEYS
        if target is None:
            r.check = "-"
            continue
        r.mismatches = compare(r, target, keys)
        if not r.mismatches:
            r.check = f"= {target.label}" + (f" ({len(keys)} measures)" if len(keys) != len(KEYS) else "")
        elif r.tool == "ranx":
            r.check = "DIFFERS (ties?)"
        else:
            r.check = "MISMATCH"


# ---------------------------------------------------------------- goals

GOALS = [
    # (data set, row, baseline row, quantity, max ratio, description); a max ratio of None is a
    # row reported with its ratio, not held to a limit (status REPORT)
    ("L", "evaltool", "trec_eval", "wall", 0.15, "L: evaltool wall <= 0.15x trec_eval"),
    ("L", "evaltool", "pytrec_eval", "wall", 0.20, "L: evaltool wall <= 0.2x pytrec_eval"),
    ("L", "evaltool", "trec_eval", "rss", 1.50, "L: evaltool peak RSS <= 1.5x trec_eval"),
    ("L-shuffled", "evaltool", "trec_eval", "wall", 0.30, "L-shuffled: evaltool wall <= 0.3x trec_eval"),
    ("XL", "evaltool", "trec_eval", "wall", 0.12, "XL: evaltool wall <= 0.12x trec_eval"),
    # start-up bound (interpreter and imports are most of 0.3 s): reported, as issue 28 asks
    ("DL", "evaltool", "pytrec_eval", "wall", None, "DL: evaltool whole process vs pytrec_eval (start-up bound; reported)"),
    ("R03", "evaltool", "trec_eval", "wall", 2.0, "R03: evaltool whole process <= 2x trec_eval"),
    ("L", "evaltool -m all_trec", "trec_eval -m all_trec", "wall", 0.30,
     "L: evaltool -m all_trec wall <= 0.3x trec_eval -m all_trec"),
]


def check_goals(results, have, missing, sizes):
    out = []
    for size, label, base_label, qty, limit, desc in GOALS:
        g = {"goal": desc, "data_set": size, "row": label, "baseline": base_label, "quantity": qty,
             "limit": limit, "ratio": None, "status": "SKIP", "note": ""}
        out.append(g)
        rows = {r.label: r for r in results.get(size, [])}
        base_tool = base_label.split()[0]
        if size not in sizes:
            g["note"] = f"data set {size} not run"
            continue
        if base_tool not in have:
            g["note"] = missing.get(base_tool, f"{base_tool} not selected")
            continue
        if "evaltool" not in have:
            g["note"] = missing.get("evaltool", "evaltool not selected")
            continue
        row, base = rows.get(label), rows.get(base_label)
        if base is None or not base.ok:
            g["note"] = f"{base_label} did not finish ({base.status if base else 'absent'})"
            continue
        if row is None:
            g["note"] = f"{label} absent"
            continue
        if not row.ok:
            g["status"] = "FAIL"
            g["note"] = f"{label} {row.status}"
            continue
        a, b = (row.wall(), base.wall()) if qty == "wall" else (row.rss(), base.rss())
        g["ratio"] = a / b
        g["status"] = "REPORT" if limit is None else "PASS" if a <= limit * b else "FAIL"
        if qty == "wall":
            g["note"] = f"{a:.3f}s vs {b:.3f}s"
        else:
            g["note"] = f"{a / 1024:.0f} MB vs {b / 1024:.0f} MB"
        if label == "evaltool -m all_trec" and rows.get("trec_eval") and rows["trec_eval"].ok:
            g["note"] += f"; vs plain trec_eval (5 measures) {a / rows['trec_eval'].wall():.3f}x"
    return out


# ---------------------------------------------------------------- start-up and in-process

TINY_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
TINY_RUN = "q1 Q0 d1 1 2.0 tiny\nq1 Q0 d2 2 1.0 tiny\nq2 Q0 d3 1 1.0 tiny\n"
INPROCESS_DEPTHS = [None, 100]  # DL as it is (43 x 1000), and cut to a reranker's top 100 (43 x 100)
INPROCESS_GOALS = [
    # (depth, row, baseline row, max ratio, description)
    (None, "evaltool.evaluate", "pytrec_eval build+evaluate", 1.0,
     "DL in-process: evaltool.evaluate <= 1.0x pytrec_eval build+evaluate"),
    (None, "evaltool Evaluator.evaluate", "pytrec_eval evaluate", 0.5,
     "DL 43x1000 in-process: Evaluator.evaluate <= 0.5x pytrec_eval evaluate"),
    (None, "evaltool Evaluator.evaluate (DataFrames)", "pytrec_eval evaluate", 0.5,
     "DL 43x1000 in-process: Evaluator.evaluate, DataFrames <= 0.5x pytrec_eval evaluate"),
    (100, "evaltool Evaluator.evaluate", "pytrec_eval evaluate", 0.5,
     "DL 43x100 in-process: Evaluator.evaluate <= 0.5x pytrec_eval evaluate"),
    (100, "evaltool Evaluator.evaluate (DataFrames)", "pytrec_eval evaluate", 0.5,
     "DL 43x100 in-process: Evaluator.evaluate, DataFrames <= 0.5x pytrec_eval evaluate"),
]


def timed_rows(launcher, commands, times, timeout, outputs=None):
    """Each command run ``times`` times, interleaved: median wall and the last error, per label
    (``outputs``, a dict, receives each label's last stdout)."""
    walls = {label: [] for label in commands}
    failed = {}
    for _ in range(times):
        for label, cmd in commands.items():
            wall, _, code, timed_out, out, err = launcher.run(cmd, timeout)
            if code != 0 or timed_out:
                failed[label] = err.strip()[-300:] or f"exit {code}"
            walls[label].append(wall)
            if outputs is not None:
                outputs[label] = out
    return [{"row": label, "median_wall_s": statistics.median(w), "error": failed.get(label)}
            for label, w in walls.items()]


def startup_rows(launcher, have, cache_dir, repeat, timeout):
    """Whole-process rows where start-up is everything: `evaltool --help` and a 3-line evaluation."""
    qrels, run = Path(cache_dir, "tiny.qrels"), Path(cache_dir, "tiny.run")
    qrels.write_text(TINY_QRELS)
    run.write_text(TINY_RUN)
    commands = {}
    if "evaltool" in have:
        commands["evaltool --help"] = [have["evaltool"], "--help"]
        commands["evaltool, 3 lines"] = [have["evaltool"], *MEASURE_OPTS, str(qrels), str(run)]
    if "trec_eval" in have:
        commands["trec_eval, 3 lines"] = [have["trec_eval"], *MEASURE_OPTS, str(qrels), str(run)]
    for tool in ("pytrec_eval", "ir_measures"):
        if tool in have:
            commands[f"{tool}, 3 lines"] = [sys.executable, have[tool], str(qrels), str(run)]
    return timed_rows(launcher, commands, max(repeat, 5), timeout)


MANY_RUNS = 30


def many_runs_files(d, cache_dir):
    """MANY_RUNS distinct runs made from DL's, as an ablation set is: the same documents per query,
    every score moved by seeded noise, each query's lines in score order, a run tag each.
    Written once (a stamp names the source)."""
    import random

    folder = Path(cache_dir, "DL-many")
    folder.mkdir(exist_ok=True)
    runs = [folder / f"run{i:02d}.txt" for i in range(MANY_RUNS)]
    source = Path(d["run"])
    stamp = folder / "stamp.json"
    wanted = {"source": str(source.resolve()), "size": source.stat().st_size, "runs": MANY_RUNS, "kind": "noise, sorted"}
    if stamp.exists() and json.loads(stamp.read_text()) == wanted and all(r.is_file() for r in runs):
        return [str(r) for r in runs]
    queries = {}
    for line in source.read_text().splitlines():
        if line.strip():
            q, _, doc, _, score, *_ = line.split()
            queries.setdefault(q, []).append((doc, float(score)))
    for i, path in enumerate(runs):
        rng = random.Random(i)
        out = []
        for q, docs in queries.items():  # written as systems write them: by score, ranks 1, 2, ...
            moved = sorted(((round(score + rng.gauss(0, 0.1), 6), doc) for doc, score in docs), reverse=True)
            out += [f"{q} Q0 {doc} {rank} {score:.6f} dl{i:02d}\n" for rank, (score, doc) in enumerate(moved, 1)]
        text = "".join(out)
        path.unlink(missing_ok=True)  # earlier harnesses linked every run to DL's
        temp = path.with_suffix(".tmp")
        temp.write_text(text)
        temp.replace(path)
    stamp.write_text(json.dumps(wanted))
    return [str(r) for r in runs]


def many_values(stdout, runs):
    """Per-run {measure: value}: trec_eval-format blocks in run order ('measure all value', a block
    ends when a measure repeats) or pytrec_eval_many.py's 'measure RUN value' lines."""
    blocks, by_run = [], {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        name, where, value = parts
        if where == "all":
            if not blocks or name in blocks[-1]:
                blocks.append({})
            blocks[-1][name] = value
        else:
            by_run.setdefault(where, {})[name] = value
    return blocks or [by_run.get(run, {}) for run in runs]


def many_runs_rows(launcher, have, qrels, runs, repeat, timeout):
    """Several distinct runs against one qrels: evaltool in one process, a shell loop of trec_eval,
    and a one-process pytrec_eval script (evaluator built once). Every tool's values, run by run,
    are checked against the trec_eval loop's. Rows are labelled with the number of runs."""
    n = len(runs)
    commands = {}
    if "evaltool" in have:
        commands[f"evaltool QRELS RUN x{n}"] = [have["evaltool"], *MEASURE_OPTS, qrels, *runs]
    if "trec_eval" in have:
        loop = " ".join(shlex.quote(a) for a in [have["trec_eval"], *MEASURE_OPTS, qrels])
        commands[f"trec_eval, shell loop x{n}"] = ["sh", "-c", f'for r in "$@"; do {loop} "$r"; done', "sh", *runs]
    if "pytrec_eval" in have:
        commands[f"pytrec_eval, one process x{n}"] = [sys.executable, str(HERE / "drivers" / "pytrec_eval_many.py"),
                                                      qrels, *runs]
    outputs = {}
    rows = timed_rows(launcher, commands, repeat, timeout, outputs)
    reference = many_values(outputs.get(f"trec_eval, shell loop x{n}", ""), runs)
    for row in rows:
        if row["row"].startswith("trec_eval"):
            row["check"] = "reference"
            continue
        if len(reference) != len(runs) or row["error"]:
            row["check"] = "-"
            continue
        got = many_values(outputs.get(row["row"], ""), runs)
        bad = [f"{Path(run).name} {k}: {(g or {}).get(k)} vs {ref.get(k)}"
               for run, g, ref in zip(runs, got + [None] * (len(runs) - len(got)), reference)
               for k in KEYS if not same_value((g or {}).get(k, "absent"), ref.get(k, "absent"))]
        row["check"] = "ok" if not bad else f"{len(bad)} values differ: " + "; ".join(bad[:3])
    return rows


# (data set, runs, baseline row, max ratio): one process scoring every run against a trec_eval loop or a
# pytrec_eval process
MANY_RUNS_GOALS = [
    ("DL", MANY_RUNS, "trec_eval, shell loop", 0.4),
    ("DL", MANY_RUNS, "pytrec_eval, one process", 1.0),
    ("R03", 17, "trec_eval, shell loop", 0.5),
]


def many_runs_goals(sections):
    """``sections``: {data set: rows of :func:`many_runs_rows`}."""
    goals = []
    for size, n, base, limit in MANY_RUNS_GOALS:
        row, base = f"evaltool QRELS RUN x{n}", f"{base} x{n}"
        desc = f"{size} x{n} runs: evaltool <= {limit}x " + ("a trec_eval shell loop" if base.startswith("trec_eval")
                                                             else "one pytrec_eval process")
        rows = sections.get(size) or []
        medians = {r["row"]: r["median_wall_s"] for r in rows if not r["error"]}
        g = {"goal": desc, "data_set": size, "row": row, "baseline": base, "limit": limit, "ratio": None,
             "status": "SKIP", "note": "not run"}
        if row in medians and base in medians:
            a, b = medians[row], medians[base]
            g.update(ratio=a / b, status="PASS" if a <= limit * b else "FAIL", note=f"{a:.3f}s vs {b:.3f}s")
            wrong = [r["check"] for r in rows if r["row"] in (row, base)
                     and r.get("check", "ok") not in ("ok", "reference", "-")]
            if wrong:
                g.update(status="FAIL", note=g["note"] + "; " + "; ".join(wrong))
        goals.append(g)
    return goals


def inprocess_rows(d, repeat, timeout, depth=None):
    """benchmarks/drivers/inprocess.py on a data set (its run cut to ``depth`` per query): per-call
    medians of each in-process route."""
    done = subprocess.run([sys.executable, str(HERE / "drivers" / "inprocess.py"), d["qrels"], d["run"],
                           str(max(10, 5 * repeat))] + ([str(depth)] if depth else []),
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        return {"depth": depth, "error": done.stderr.strip()[-600:]}
    out = json.loads(done.stdout)
    reference = out["values"]["pytrec_eval evaluate"]
    # pytrec_eval orders tied scores its own way on dict input: equal at trec_eval's 4 printed decimals
    out["values_check"] = {name: ("= pytrec_eval" if all(abs(v[k] - reference[k]) < 5e-5 for k in KEYS)
                                  else "MISMATCH") for name, v in out["values"].items()}
    return out


def fusion_rows(d, cache_dir, repeat, timeout):
    """benchmarks/drivers/fusion.py on the 30 runs of the many-runs section: evaltool.fuse and
    ranx.fuse (RRF), in one process, warm, runs built beforehand."""
    runs = many_runs_files(d, cache_dir)
    done = subprocess.run([sys.executable, str(HERE / "drivers" / "fusion.py"), "rrf", str(max(3, repeat)), *runs],
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        return {"error": done.stderr.strip()[-600:]}
    return json.loads(done.stdout)


def fusion_goals(fusion):
    g = {"goal": "DL x30 fusion (RRF) in-process: evaltool.fuse <= 1.0x ranx.fuse (warm)", "row": "evaltool.fuse",
         "baseline": "ranx.fuse", "limit": 1.0, "ratio": None, "status": "SKIP", "note": "not run"}
    medians = (fusion or {}).get("median_s")
    if medians:
        a, b = medians["evaltool.fuse"], medians["ranx.fuse"]
        g.update(ratio=a / b, status="PASS" if a <= b else "FAIL", note=f"{a:.3f}s vs {b:.3f}s")
    elif fusion:
        g["note"] = fusion.get("error", "")[:200]
    return [g]


def inprocess_goals(sections):
    goals = []
    by_depth = {section.get("depth"): section for section in sections or []}
    for depth, row, base, limit, desc in INPROCESS_GOALS:
        g = {"goal": desc, "row": row, "baseline": base, "limit": limit, "ratio": None, "status": "SKIP", "note": ""}
        section = by_depth.get(depth) or {}
        medians = section.get("median_s")
        if medians and row in medians and base in medians:
            if section["values_check"].get(row) != "= pytrec_eval":
                g.update(status="FAIL", note="values differ from pytrec_eval's")
            else:
                g["ratio"] = medians[row] / medians[base]
                g["status"] = "PASS" if g["ratio"] <= limit else "FAIL"
                g["note"] = f"{medians[row] * 1e3:.1f} ms vs {medians[base] * 1e3:.1f} ms"
        else:
            g["note"] = section.get("error", "DL not run or pytrec_eval absent")[:200]
        goals.append(g)
    return goals


RANX_WORKLOAD_QUICK = [2000]
RANX_WORKLOAD_SIZES = [2000, 100_000, 1_000_000]
RANX_WORKLOAD_ROUTES = ["evaltool dicts", "evaltool pandas", "evaltool polars", "evaltool pyarrow"]
RANX_WORKLOAD_LIMIT = 0.5  # evaltool <= 0.5x ranx warm, every input, every measure
# ranx's published size: each route in a process of its own (its peak RSS is then its own), the
# data built there from the same seeded arrays; with the calls it times (None: --repeat, at
# least 3). ranx's Qrels / Run of 100M rows would not fit in 23 GB (~3 GB at 100,000 x 100):
# ranx is timed on the arrays its evaluate takes (python_dict_to_typed_list's), its kernels
# alone. evaltool and pytrec_eval take dicts (~7 GB) and are timed once per measure (the
# first call: neither compiles anything), pytrec_eval on MAP only (~30 s a call).
RANX_WORKLOAD_LARGE = 1_000_000
RANX_WORKLOAD_LARGE_ROUTES = [("ranx arrays", None), ("evaltool dicts", 1), ("pytrec_eval", 1)]


def _ranx_baseline(queries):
    """The ranx route evaltool is held against: ranx's Qrels / Run below the published size,
    its arrays at it (where its Qrels / Run do not fit)."""
    return "ranx arrays" if queries >= RANX_WORKLOAD_LARGE else "ranx"


def ranx_workload_rows(queries, repeat, timeout):
    """benchmarks/drivers/ranx_workload.py at one size: per-call medians of every route, and the
    values checked against pytrec_eval's (equal to 1e-12: one sum in another order) before any
    ratio; from RANX_WORKLOAD_LARGE queries each route in its own process, checked against
    ranx's arrays' values (pytrec_eval's MAP among them)."""
    driver = [sys.executable, str(HERE / "drivers" / "ranx_workload.py"), str(queries)]
    if queries < RANX_WORKLOAD_LARGE:
        done = subprocess.run([*driver, str(repeat)], capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            return {"queries": queries, "error": done.stderr.strip()[-600:]}
        out = json.loads(done.stdout)
        reference_route = "pytrec_eval"
    else:
        out = {"queries": queries, "rows": [], "peak_rss_kb": {}, "data_rss_kb": {}, "build_s": {}, "errors": {}}
        for route, calls in RANX_WORKLOAD_LARGE_ROUTES:
            try:
                done = subprocess.run([*driver, str(calls or repeat), route], capture_output=True, text=True,
                                      timeout=timeout)
            except subprocess.TimeoutExpired:
                out["errors"][route] = f"killed after {timeout:g}s"
                continue
            if done.returncode != 0:
                out["errors"][route] = done.stderr.strip()[-600:] or f"exit status {done.returncode}"
                continue
            part = json.loads(done.stdout)
            out["rows"] += part["rows"]
            for key in ("peak_rss_kb", "data_rss_kb", "build_s"):
                out[key][route] = part[key]
            if part.get("floors"):
                out.setdefault("floors", {})[route] = part["floors"]
            out["run_rows"], out["qrels_rows"] = part["run_rows"], part["qrels_rows"]
        if not out["rows"]:
            return {"queries": queries, "error": "; ".join(f"{k}: {v}" for k, v in out["errors"].items())}
        reference_route = "ranx arrays"
    reference = {r["measure"]: r["value"] for r in out["rows"] if r["route"] == reference_route}
    for r in out["rows"] + out.get("jobs", {}).get("rows", []):
        value = reference.get(r["measure"])
        r["check"] = "-" if value is None else \
            f"= {reference_route}" if abs(r["value"] - value) <= 1e-12 else "MISMATCH"
    return out


def ranx_workload_goals(sections):
    """At 100,000 x 100 (the largest size run below ranx's published one) and at ranx's published
    1,000,000 x 100: each evaltool route against ranx warm, per measure."""
    goals = []
    done = [s for s in sections if "rows" in s]
    below = [s for s in done if s["queries"] < RANX_WORKLOAD_LARGE]
    chosen = [max(below, key=lambda s: s["queries"])] if below else []
    chosen += [s for s in sections if s.get("queries", 0) >= RANX_WORKLOAD_LARGE]
    if not chosen:
        chosen = [sections[-1] if sections else {}]
    for section in chosen:
        goals += _ranx_workload_goals(section)
    return goals


def _agreed(row):
    return row["check"] in ("= pytrec_eval", "= ranx arrays")


def _ranx_workload_goals(section):
    goals = []
    rows = {(r["measure"], r["route"]): r for r in section.get("rows", [])}
    size = f"{section.get('queries', 0):,} x 100"
    large = section.get("queries", 0) >= RANX_WORKLOAD_LARGE
    baseline = _ranx_baseline(section.get("queries", 0))
    for measure in ("MAP", "MRR", "nDCG"):
        for route in ["evaltool dicts"] if large else RANX_WORKLOAD_ROUTES:
            desc = f"ranx workload {size} {measure}: {route} <= {RANX_WORKLOAD_LIMIT}x {baseline} warm"
            g = {"goal": desc, "row": route, "baseline": baseline, "limit": RANX_WORKLOAD_LIMIT, "ratio": None,
                 "status": "SKIP", "note": section.get("error", "ranx workload not run")[:200]}
            row, base = rows.get((measure, route)), rows.get((measure, baseline))
            if large and not (row and base):
                g["note"] = "; ".join(f"{k}: {v}" for k, v in section.get("errors", {}).items())[:200] or g["note"]
            if row and base:
                if not (_agreed(row) and _agreed(base)):
                    g.update(status="FAIL", note=f"values differ: {row['value']!r} ({route}), {base['value']!r} "
                                                 f"({baseline}), against {row['check'].lstrip('= ')}'s")
                else:
                    g["ratio"] = row["median_s"] / base["median_s"]
                    g["status"] = "PASS" if g["ratio"] <= RANX_WORKLOAD_LIMIT else "FAIL"
                    g["note"] = f"{fmt_s(row['median_s'])} vs {fmt_s(base['median_s'])}"
                    if large:
                        g["note"] += f" ({row['calls']} call(s))"
                        g["note"] += _floor_note(section, route, RANX_WORKLOAD_LIMIT * base["median_s"])
                        g["note"] += "; peak RSS " + ", ".join(
                            f"{name} {kb / 1024 ** 2:.1f} GB (data {section['data_rss_kb'][name] / 1024 ** 2:.1f} GB)"
                            for name, kb in section["peak_rss_kb"].items())
            goals.append(g)
    return goals


def _floor_note(section, route, limit_s):
    """The goal's limit in seconds beside what merely reading ``route``'s input took in its
    process (the driver's ``floors``): a limit below the floor cannot be met by any tool
    reading that input."""
    floors = (section.get("floors") or {}).get(route) or []
    if not floors:
        return ""
    least = min(floors, key=lambda f: f["median_s"])
    if limit_s < least["median_s"]:
        return f"; limit {fmt_s(limit_s)}, less than reading the dicts' {least['read']} alone ({fmt_s(least['median_s'])})"
    return f"; limit {fmt_s(limit_s)}; reading the dicts' {least['read']} alone: {fmt_s(least['median_s'])}"


def ranx_workload_table(sections):
    lines = []
    for section in sections:
        if "rows" not in section:
            lines.append(f"ranx workload, {section['queries']:,} queries: ERROR {section.get('error')}")
            continue
        large = section["queries"] >= RANX_WORKLOAD_LARGE
        baseline = _ranx_baseline(section["queries"])
        lines.append(f"ranx workload in process, one core ({section['queries']:,} queries x 100, "
                     f"{section['qrels_rows']:,} judgments; median per call; values against "
                     f"{'ranx arrays' if large else 'pytrec_eval'}" + ("; one process per route" if large else "") + "):")
        by = {(r["measure"], r["route"]): r for r in section["rows"]}
        for (measure, route), r in by.items():
            base = by.get((measure, baseline))
            ratio = f"{r['median_s'] / base['median_s']:.2f}x {baseline}" if base and _agreed(r) and _agreed(base) \
                else "-"
            calls = f"  ({r['calls']} call{'s' if r['calls'] > 1 else ''})" if large else ""
            lines.append(f"  {measure:<5} {route:<16} {fmt_s(r['median_s']):>8}  {ratio:>17}  "
                         f"{r['value']:.6f} {r['check']}{calls}")
        for route, kb in (section.get("peak_rss_kb") or {}).items() if large else ():
            lines.append(f"  {route}: peak RSS {kb / 1024 ** 2:.1f} GB, of which data "
                         f"{section['data_rss_kb'][route] / 1024 ** 2:.1f} GB, built in {section['build_s'][route]:.0f}s")
        for route, floors in (section.get("floors") or {}).items():
            lines += [f"  {route}: reading the dicts' {f['read']} alone (C loops, {f['entries']:,} entries): "
                      f"{fmt_s(f['median_s'])}" for f in floors]
        for route, error in (section.get("errors") or {}).items():
            lines.append(f"  {route}: ERROR {error}")
        lines += _jobs_lines(section.get("jobs"))
    return "\n".join(lines)


def _jobs_lines(jobs):
    """evaltool's ``jobs`` on every core (the driver's ``"jobs"``): each input's time with one
    thread and with one per core, and the speed-up (values checked as the other rows')."""
    if not jobs:
        return []
    lines = [f"  jobs, on {jobs['cores']} cores (Evaluator(..., jobs=J), not pinned):"]
    by = {r["route"]: r for r in jobs["rows"]}
    for route, r in by.items():
        one = by.get(route.rsplit(" jobs=", 1)[0] + " jobs=1")
        speedup = f"speed-up {one['median_s'] / r['median_s']:.2f}x" \
            if one and one is not r and _agreed(r) and _agreed(one) else ""
        lines.append(f"  {r['measure']:<5} {route:<24} {fmt_s(r['median_s']):>8}  {speedup:>20}  "
                     f"{r['value']:.6f} {r['check']}")
    return lines


def startup_table(rows, inprocess):
    lines = ["start-up (whole process, median):"]
    lines += [f"  {r['row']:<30} {fmt_s(r['median_wall_s']):>8}" + (f"  ERROR: {r['error']}" if r["error"] else "")
              for r in rows]
    for section in inprocess or []:
        if "median_s" not in section:
            lines.append(f"in-process (depth {section.get('depth') or 'all'}): ERROR {section.get('error')}")
            continue
        m = section["median_s"]
        lines.append(f"in-process on DL ({section['queries']} queries, {section['run_rows']:,} run rows; "
                     "dicts unless said; median per call):")
        for name, value in m.items():
            base = m["pytrec_eval evaluate"] if "Evaluator" in name else m["pytrec_eval build+evaluate"]
            ratio = "" if name.startswith("pytrec_eval") else f"  {value / base:.2f}x"
            lines.append(f"  {name:<42} {value * 1e3:7.1f} ms{ratio}  values {section['values_check'][name]}")
    return "\n".join(lines)


# ---------------------------------------------------------------- reporting

def fmt_s(x):
    if x is None:
        return "-"
    return f"{x:.3f}s" if x < 10 else f"{x:.1f}s"


def fmt_ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def table(results):
    head = ["data set", "tool", "median wall", "min..max", "peak RSS", "x trec_eval", "x pytrec_eval",
            "RSS x trec_eval", "values"]
    lines = []
    for size, rows in results.items():
        by = {r.label: r for r in rows if r.ok}
        for r in rows:
            te = by.get("trec_eval -m all_trec" if r.variant == "all_trec" else "trec_eval")
            pt = by.get("pytrec_eval") if r.variant == "5" else None
            w = r.wall() if r.ok else None
            lines.append([
                size, r.label,
                fmt_s(w) if r.ok else r.status.upper(),
                f"{fmt_s(min(r.walls))}..{fmt_s(max(r.walls))}" if r.ok and len(r.walls) > 1 else "",
                f"{r.rss() / 1024:.0f} MB" if r.rss() else "-",
                fmt_ratio(w, te.wall() if te else None),
                fmt_ratio(w, pt.wall() if pt else None),
                fmt_ratio(r.rss() if r.ok else None, te.rss() if te else None),
                r.check,
            ])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    fmt = lambda cells: "  ".join(str(c).ljust(w) if i < 2 or i == len(cells) - 1 else str(c).rjust(w)
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    out = [fmt(head), fmt(["-" * w for w in widths])]
    prev = None
    for ln in lines:
        if prev is not None and ln[0] != prev:
            out.append("")
        prev = ln[0]
        out.append(fmt(ln))
    return "\n".join(out)


def stage_table(results):
    out = []
    for size, rows in results.items():
        for r in rows:
            if r.tool != "evaltool" or not r.timings:
                continue
            med = {k: statistics.median(t[k] for t in r.timings if k in t)
                   for k in STAGES if any(k in t for t in r.timings)}
            inside = sum(med.values())
            parts = "  ".join(f"{k} {v:.3f}s" for k, v in med.items())
            w = r.wall()
            rest = f"  (in-process {inside:.3f}s of {w:.3f}s wall; start-up/imports/exit {w - inside:.3f}s)" if w else ""
            out.append(f"  {size:<11} {r.label:<21} {parts}{rest}")
    return "\n".join(out)


CLICK_GOALS = [
    # (data set, layout, max ratio of evaltool's wall to DuckDB's)
    ("clicks-10M", "parquet", 1.0),
    ("clicks-10M", "jsonl", 1.5),
]
CLICK_KEYS = ["click_mrr", "ctr", "ctr@10"]


def click_commands(path, layout, have_duckdb):
    """{label: command} of the click rows on one file: evaltool, and the same metrics as one DuckDB query."""
    commands = {"evaltool": [evaltool_path(), *click_logs.COMMAND[:1], path, *click_logs.COMMAND[1:]]}
    if have_duckdb:
        commands["duckdb"] = [sys.executable, str(HERE / "drivers" / "duckdb_clicks.py"), path, layout]
    return commands


def click_values_check(summaries):
    """'equal' when every tool's three values equal evaltool's (to 1e-12), else what differs."""
    reference = summaries.get("evaltool")
    if reference is None:
        return "-"
    bad = [f"{tool} {k}: {summary.get(k)!r} vs {reference.get(k)!r}"
           for tool, summary in summaries.items() if tool != "evaltool" for k in CLICK_KEYS
           if not isinstance(summary.get(k), float) or not isinstance(reference.get(k), float)
           or abs(summary[k] - reference[k]) > 1e-12]
    return "equal" if not bad else "DIFFER: " + "; ".join(bad)


def run_clicks(launcher, names, args, log):
    """``evaltool clicks`` on each click log, JSONL and Parquet, interleaved with the same three
    metrics as one DuckDB query (when duckdb is importable): wall time, events per second, peak RSS,
    and whether the values are equal."""
    out = []
    have_duckdb = importlib.util.find_spec("duckdb") is not None
    if not have_duckdb:
        log("  duckdb not importable: the click rows have no SQL baseline (pip install -e '.[test]')")
    for name in names:
        files, meta = click_logs.ensure(args.cache_dir, name, log=log)
        log(f"\n== {name}: {meta['events']:,} click-log events; {args.repeat} repetition(s)")
        warm(files.values())
        for layout, path in files.items():
            commands = click_commands(path, layout, have_duckdb)
            rows = {tool: {"data_set": name, "layout": layout, "tool": tool, "events": meta["events"],
                           "status": "ok", "error": "", "walls_s": [], "rss_kb": [], "summary": None, "cmd": cmd}
                    for tool, cmd in commands.items()}
            for rep in range(args.repeat):
                order = list(rows.values())
                k = rep % len(order)
                for row in order[k:] + order[:k]:  # round-robin, rotating who goes first
                    if row["status"] != "ok":
                        continue
                    wall, peak, code, timed_out, stdout, stderr = launcher.run(row["cmd"], args.timeout)
                    if timed_out or code != 0:
                        row["status"] = "timeout" if timed_out else "error"
                        row["error"] = f"killed after {args.timeout:g}s" if timed_out \
                            else f"exit {code}: {stderr.strip()[-600:]}"
                        continue
                    row["walls_s"].append(wall)
                    row["rss_kb"].append(peak)
                    row["summary"] = json.loads(stdout)["summary"]
                    log(f"  [{rep + 1}/{args.repeat}] {layout:<8} {row['tool']:<9} {fmt_s(wall):>8}  "
                        f"{peak / 1024:7.0f} MB")
            check = click_values_check({tool: r["summary"] for tool, r in rows.items() if r["summary"]})
            for row in rows.values():
                walls = row["walls_s"]
                wall = statistics.median(walls) if walls else None
                rss = row.pop("rss_kb")
                row.update(median_wall_s=wall, events_per_s=meta["events"] / wall if wall else None,
                           peak_rss_kb=max(rss) if rss else None, check=check)
                out.append(row)
    return out


def click_goals(rows):
    """evaltool against DuckDB on the same file, once the values are equal."""
    by = {(r["data_set"], r["layout"], r["tool"]): r for r in rows}
    goals = []
    for name, layout, limit in CLICK_GOALS:
        desc = f"{name} {layout}: evaltool clicks <= {limit}x DuckDB (one SQL query)"
        g = {"goal": desc, "row": f"{name} {layout} evaltool", "baseline": f"{name} {layout} duckdb",
             "limit": limit, "ratio": None, "status": "SKIP", "note": "not run"}
        mine, base = by.get((name, layout, "evaltool")), by.get((name, layout, "duckdb"))
        if mine is None or base is None:
            g["note"] = "not run" if mine is None else "duckdb not importable"
        elif not mine["median_wall_s"] or not base["median_wall_s"]:
            g.update(status="FAIL" if not mine["median_wall_s"] else "SKIP",
                     note=(mine["error"] or base["error"])[:200])
        elif mine["check"] != "equal":
            g.update(status="FAIL", note=f"values: {mine['check']}"[:200])
        else:
            a, b = mine["median_wall_s"], base["median_wall_s"]
            g.update(ratio=a / b, status="PASS" if a <= limit * b else "FAIL",
                     note=f"{a:.2f}s vs {b:.2f}s; peak RSS {mine['peak_rss_kb'] / 1024:.0f} MB vs "
                          f"{base['peak_rss_kb'] / 1024:.0f} MB")
        goals.append(g)
    return goals


def click_table(rows):
    lines = ["click logs: evaltool clicks (-m click_mrr -m ctr -m ctr@10 -o json) and the same metrics "
             "as one DuckDB query (drivers/duckdb_clicks.py), whole processes",
             f"{'data set':<12} {'layout':<8} {'tool':<9} {'events':>12} {'wall':>9} {'events/s':>12} "
             f"{'peak RSS':>10}  values"]
    for r in rows:
        head = f"{r['data_set']:<12} {r['layout']:<8} {r['tool']:<9} {r['events']:>12,}"
        if not r["median_wall_s"]:
            lines.append(f"{head} {r['status'].upper()}: {r['error']}")
            continue
        lines.append(f"{head} {fmt_s(r['median_wall_s']):>9} {r['events_per_s']:>12,.0f} "
                     f"{r['peak_rss_kb'] / 1024:>7.0f} MB  {r['check']}")
    return "\n".join(lines)


def machine_info():
    info = {"cpu_count": os.cpu_count(), "python": sys.version.split()[0], "python_executable": sys.executable,
            "platform": platform.platform(), "machine": platform.machine()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    info["mem_total_kb"] = int(line.split()[1])
                    break
    except OSError:
        pass
    try:
        info["affinity_cpus"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    try:
        info["loadavg"] = os.getloadavg()
    except OSError:
        pass
    return info


def git_info():
    def git(*a):
        try:
            return subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True,
                                  timeout=30).stdout.strip()
        except Exception:
            return None
    return {"commit": git("rev-parse", "HEAD"),
            "evaltool_dirty": bool(git("status", "--porcelain", "--", "evaltool"))}


def warm(paths):
    """Read the files once so every tool starts with them in the page cache."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 23):
                pass


def split_list(values, allowed, what):
    out = []
    for v in values:
        for x in v.split(","):
            x = x.strip()
            if not x:
                continue
            match = {a.lower(): a for a in allowed}.get(x.lower())
            if match is None:
                sys.exit(f"unknown {what} {x!r}; choose from {', '.join(allowed)}")
            if match not in out:
                out.append(match)
    return out


# ---------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="only S and DL")
    ap.add_argument("--sizes", nargs="+", metavar="NAME", help=f"data sets ({', '.join(ALL_SIZES)}); "
                    "space or comma separated; overrides --quick")
    ap.add_argument("--tools", nargs="+", metavar="NAME", help=f"tools ({', '.join(ALL_TOOLS)}); default all")
    ap.add_argument("--repeat", type=int, default=3, help="runs per tool and data set (median reported)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per single run (default 600)")
    ap.add_argument("--cache-dir", default=str(HERE / "cache"))
    ap.add_argument("--results-dir", default=str(HERE / "results"))
    ap.add_argument("--no-save", action="store_true", help="do not write the results JSON")
    ap.add_argument("--trec-eval", metavar="PATH", help="trec_eval binary (default: from PATH)")
    ap.add_argument("--clicks", nargs="*", metavar="NAME",
                    help=f"click-log data sets ({', '.join(click_logs.ALL_CLICKS)}) for the 'evaltool clicks' rows; "
                         "default clicks-S with --quick, all otherwise; no names: none")
    ap.add_argument("--ranx-workload", nargs="*", type=int, metavar="QUERIES",
                    help="sizes (queries x 100) of ranx's workload timed in process (needs ranx and pytrec_eval); "
                         f"default {RANX_WORKLOAD_QUICK} with --quick, {RANX_WORKLOAD_SIZES} otherwise; no sizes: none")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 on a value mismatch, a failed run or a FAIL goal")
    args = ap.parse_args(argv)
    sizes = split_list(args.sizes, ALL_SIZES, "data set") if args.sizes else \
        (QUICK_SIZES if args.quick else ALL_SIZES)
    args.tools = split_list(args.tools, ALL_TOOLS, "tool") if args.tools else list(ALL_TOOLS)
    if args.repeat < 1:
        sys.exit("--repeat must be >= 1")

    def log(msg=""):
        print(msg, flush=True)

    started = dt.datetime.now(dt.timezone.utc)
    have, missing = available_tools(args)
    versions = tool_versions(have)
    log(f"tools: " + ", ".join(f"{t} ({versions.get(t)})" for t in have))
    for t, why in missing.items():
        log(f"  skipping {t}: {why}")
    if "ranx" in have and set(sizes) - RANX_SIZES:
        log(f"  ranx only on {', '.join(sorted(RANX_SIZES))}: on 7M and 20M lines it would add tens of minutes to the run")

    datasets = {}
    for size in sizes:
        qrels, run, meta = datagen.ensure(args.cache_dir, size, log=log)
        datasets[size] = {"qrels": qrels, "run": run, **{k: meta[k] for k in
                          ("generator_version", "run_lines", "qrels_lines", "run_bytes", "qrels_bytes")}}

    launcher = Launcher()
    log(f"peak RSS floor of a launched process (/bin/true): {launcher.floor_kb / 1024:.1f} MB")
    if "evaltool" in have and compile_evaltool():
        log("byte-compiled evaltool's modules (as pip does on install; PYTHONDONTWRITEBYTECODE is set here)")
    # One untimed run of every tool on a tiny data set: .pyc files compiled, binaries cached.
    wq, wr, _ = datagen.ensure(args.cache_dir, "S", log=lambda *a: None)
    for r in rows_for("S", have, wq, wr):
        launcher.run(r.cmd, args.timeout)

    results, measurements = {}, []

    def time_data_set(size):
        d = datasets[size]
        log(f"\n== {size}: {d['run_lines']:,} run lines ({d['run_bytes'] / 1e6:.0f} MB), "
            f"{d['qrels_lines']:,} qrels lines; {args.repeat} repetition(s)")
        warm([d["qrels"], d["run"]])
        rows = rows_for(size, have, d["qrels"], d["run"])
        results[size] = rows
        for rep in range(args.repeat):
            k = rep % len(rows) if rows else 0
            for r in rows[k:] + rows[:k]:          # round-robin, rotating who goes first
                if r.status != "ok":
                    continue                        # a timeout or crash is not retried
                wall, rss, code, timed_out, out, err = launcher.run(r.cmd, args.timeout)
                timings = parse_timings(err) if r.tool == "evaltool" else None
                m = {"data_set": size, "row": r.label, "rep": rep, "cmd": r.cmd, "wall_s": round(wall, 6),
                     "maxrss_kb": rss, "exit": code, "timed_out": timed_out, "timings": timings}
                measurements.append(m)
                if timed_out:
                    r.status, r.error = "timeout", f"killed after {args.timeout:g}s"
                elif code != 0:
                    r.status, r.error = "error", f"exit {code}: " + err.strip()[-600:]
                else:
                    vals = parse_summary(out)
                    if not vals:
                        r.status, r.error = "error", "no summary values in output: " + (out + err)[-600:]
                    else:
                        r.values = vals
                        r.walls.append(wall)
                        r.rss_kb.append(rss)
                        if timings:
                            r.timings.append(timings)
                state = "" if r.status == "ok" else f"  {r.status.upper()}: {r.error}"
                log(f"  [{rep + 1}/{args.repeat}] {r.label:<22} {fmt_s(wall):>8}  {rss / 1024:7.0f} MB{state}")
        check_values(rows)

    # The small data sets and the small-input sections first, the big data sets after them, ranx's
    # in-process workload last: on
    # this VM the memory a multi-GB process frees goes back to the hypervisor, and the processes
    # started in the following seconds pay to fault memory in again (30 runs of DL took 0.43 s
    # before the XL rows and 0.97 s right after them, trec_eval's loop 1.3-1.4 s either way).
    for size in [s for s in sizes if s in QUICK_SIZES]:
        time_data_set(size)
    startup = startup_rows(launcher, have, args.cache_dir, args.repeat, args.timeout)
    many = {}
    if "DL" in datasets:
        many["DL"] = many_runs_rows(launcher, have, datasets["DL"]["qrels"],
                                    many_runs_files(datasets["DL"], args.cache_dir), args.repeat, args.timeout)
    if "R03" in datasets:  # the 17 systems' runs of the Robust stand-in
        many["R03"] = many_runs_rows(launcher, have, datasets["R03"]["qrels"],
                                     datagen.many_paths(args.cache_dir, "R03"), args.repeat, args.timeout)
    inprocess = [inprocess_rows(datasets["DL"], args.repeat, args.timeout, depth) for depth in INPROCESS_DEPTHS] \
        if "DL" in datasets and "evaltool" in have and "pytrec_eval" in have else None
    fusion = fusion_rows(datasets["DL"], args.cache_dir, args.repeat, args.timeout) \
        if "DL" in datasets and "evaltool" in have and "ranx" in have else None
    for size in [s for s in sizes if s not in QUICK_SIZES]:
        time_data_set(size)
    click_sets = click_logs.ALL_CLICKS if args.clicks is None and not args.quick else \
        click_logs.QUICK_CLICKS if args.clicks is None else split_list(args.clicks, click_logs.ALL_CLICKS, "click log")
    click_results = run_clicks(launcher, click_sets, args, log) if "evaltool" in have else []
    # ranx's workload last: its processes build up to ~10 GB of data (1,000,000 x 100) and free it,
    # which would make every whole process timed after them pay to fault memory in (see above); its
    # own routes are timed inside one process each, after their data is built
    workload_sizes = args.ranx_workload if args.ranx_workload is not None else \
        (RANX_WORKLOAD_QUICK if args.quick else RANX_WORKLOAD_SIZES)
    ranx_sections = []
    if workload_sizes and {"evaltool", "pytrec_eval", "ranx"} <= set(have):
        for queries in workload_sizes:
            log(f"\n== ranx workload in process: {queries:,} queries x 100, {max(3, args.repeat)} repetition(s)")
            ranx_sections.append(ranx_workload_rows(queries, max(3, args.repeat), args.timeout * 4))
    elif workload_sizes:
        log("\n== ranx workload skipped: it needs evaltool, pytrec_eval and ranx (pip install -e '.[test]')")
    launcher.close()

    goals = check_goals(results, have, missing, sizes) + inprocess_goals(inprocess) + many_runs_goals(many) + \
        fusion_goals(fusion) + (ranx_workload_goals(ranx_sections) if workload_sizes else []) + \
        click_goals(click_results)

    log("\n" + table(results))
    log("\n" + startup_table(startup, inprocess))
    for size, rows in many.items():
        log(f"many runs of {size} (whole process, median):")
        base = next((r["median_wall_s"] for r in rows if r["row"].startswith("trec_eval")), None)
        for r in rows:
            ratio = f"  {r['median_wall_s'] / base:.2f}x trec_eval loop" if base else ""
            log(f"  {r['row']:<30} {fmt_s(r['median_wall_s']):>8}{ratio}  values: {r.get('check', '-')}"
                + (f"  ERROR: {r['error']}" if r["error"] else ""))
    if fusion and "median_s" in fusion:
        log("fusion of the 30 runs, RRF (in-process, warm, median): "
            + ", ".join(f"{name} {fmt_s(t)}" for name, t in fusion["median_s"].items())
            + f"; largest fused-score difference {fusion['max_difference']:.2g} (tie order of the input runs)")
    if ranx_sections:
        log("\n" + ranx_workload_table(ranx_sections))
    if click_results:
        log("\n" + click_table(click_results))
    stages = stage_table(results)
    if stages:
        log("\nevaltool --timings stage split (medians):\n" + stages)
    problems = [(s, r) for s, rows in results.items() for r in rows if r.mismatches or not r.ok]
    if problems:
        log("\nvalue mismatches / failures:")
        for s, r in problems:
            detail = "; ".join(r.mismatches[:8]) + (" ..." if len(r.mismatches) > 8 else "") if r.mismatches \
                else r.error
            log(f"  {s} {r.label}: {detail}")
    log("\ngoals:")
    for g in goals:
        ratio = f"{g['ratio']:.3f}x" if g["ratio"] is not None else "-"
        log(f"  {g['status']:<6}  {g['goal']:<58} measured {ratio:>7}  ({g['note']})")

    record = {
        "timestamp": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "argv": sys.argv[1:] if argv is None else argv,
        "repeat": args.repeat, "timeout_s": args.timeout,
        "machine": machine_info(), "git": git_info(), "rss_floor_kb": launcher.floor_kb,
        "tools": versions, "tools_missing": missing,
        "data_sets": {s: {k: v for k, v in d.items() if k not in ("qrels", "run")} for s, d in datasets.items()},
        "measurements": measurements,
        "summary": [{"data_set": s, "row": r.label, "tool": r.tool, "variant": r.variant, "status": r.status,
                     "error": r.error, "median_wall_s": r.wall(), "walls_s": r.walls, "peak_rss_kb": r.rss(),
                     "check": r.check, "mismatches": r.mismatches,
                     "values": {k: r.values[k] for k in KEYS if k in r.values},
                     "stage_medians_s": ({k: statistics.median(t[k] for t in r.timings if k in t)
                                          for k in STAGES if any(k in t for t in r.timings)} if r.timings else None)}
                    for s, rows in results.items() for r in rows],
        "goals": goals,
        "startup": startup,
        "inprocess": inprocess,
        "many_runs": many.get("DL", []),
        "many_runs_r03": many.get("R03", []),
        "ranx_workload": ranx_sections,
        "fusion": fusion,
        "clicks": click_results,
    }
    if not args.no_save:
        os.makedirs(args.results_dir, exist_ok=True)
        path = Path(args.results_dir) / (started.strftime("%Y%m%dT%H%M%SZ") + ".json")
        with open(path, "w") as f:
            json.dump(record, f, indent=1)
        log(f"\nresults saved to {os.path.relpath(path)}")

    if args.strict and (problems or any(g["status"] == "FAIL" for g in goals)):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
