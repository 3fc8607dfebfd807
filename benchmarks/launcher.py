"""Process launcher for benchmarks/run.py: start one command per request, report wall time and
the child's peak RSS (ru_maxrss from wait4).

Why a separate process: on Linux a child's ru_maxrss includes the memory of the process it
was forked from (and with vfork/posix_spawn, that process's whole peak), so timing children
straight from the harness, which has numpy loaded, would put a ~50 MB floor under every
tool's peak RSS.  This launcher is a bare interpreter (run with -I -S, imports only builtins
and json), so the floor is its own few MB of private memory (measured and reported by run.py).

Protocol: one JSON request per stdin line {"cmd": [...], "stdout": path, "stderr": path,
"timeout": seconds}; one JSON reply per stdout line {"wall": s, "maxrss_kb": n, "status": n,
"timed_out": bool}.
"""
import json
import os
import signal
import sys
import time

_child = [0]
_timed_out = [False]


def _on_alarm(signum, frame):
    if _child[0]:
        _timed_out[0] = True
        try:
            os.killpg(_child[0], signal.SIGKILL)
        except OSError:
            pass


def run(req):
    out_fd = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err_fd = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    _timed_out[0] = False
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:                                   # child: own session so a timeout kills its group
        try:
            os.setsid()
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.dup2(out_fd, 1)
            os.dup2(err_fd, 2)
            os.execv(req["cmd"][0], req["cmd"])
        except BaseException as e:
            try:
                os.write(2, f"launcher: cannot run {req['cmd'][0]}: {e}\n".encode())
            finally:
                os._exit(127)
    os.close(out_fd)
    os.close(err_fd)
    _child[0] = pid                                # not reaped until wait4 returns: no pid reuse
    signal.setitimer(signal.ITIMER_REAL, float(req.get("timeout") or 0))
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    signal.setitimer(signal.ITIMER_REAL, 0)
    _child[0] = 0
    return {"wall": wall, "maxrss_kb": usage.ru_maxrss, "status": status, "timed_out": _timed_out[0]}


def main():
    signal.signal(signal.SIGALRM, _on_alarm)
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(run(json.loads(line))) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
