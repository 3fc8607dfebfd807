"""Short, readable names for runs given as paths: what tables, charts and JSON call each run.

A run is named by its file name (``bm25.txt``). When two runs share a file name, each of
them gets the shortest tail of its path that tells them apart (``dl19/bm25.txt`` and
``dl20/bm25.txt``), never an absolute path unless nothing shorter is unique. Standard
input is ``-``; a run given as an object (a dict, a DataFrame) is ``runN`` by position.
A name the user chose (``NAME=PATH``, ``--run-name``) is kept as it is.

>>> run_names(["/data/dl19/bm25.txt", "/data/dl20/bm25.txt", "/data/dl19/splade.txt"])
['dl19/bm25.txt', 'dl20/bm25.txt', 'splade.txt']
>>> run_names(["runs/a.txt", {"q1": {"d1": 1.0}}])
['a.txt', 'run2']
>>> split_named_run("bm25=runs/bm25.txt")
('bm25', 'runs/bm25.txt')
"""

from __future__ import annotations

import os

from evaltool.errors import EvaltoolError


def _parts(path: str) -> list[str]:
    """Path components, last first, without empty ones (``a//b/`` is ``b, a``)."""
    return [part for part in reversed(path.replace(os.sep, "/").split("/")) if part and part != "."]


def run_names(runs) -> list[str]:
    """The name of each run: its file name, lengthened to a unique tail of its path where file names collide."""
    paths = [os.fspath(r) if isinstance(r, (str, os.PathLike)) else None for r in runs]
    parts = [_parts(p) if p is not None else [] for p in paths]
    depth = [1] * len(paths)

    def name(i: int) -> str:
        if paths[i] is None:
            return f"run{i + 1}"
        if not parts[i] or depth[i] > len(parts[i]):
            return paths[i]
        return "/".join(reversed(parts[i][: depth[i]]))

    while True:
        names = [name(i) for i in range(len(paths))]
        clashing = [
            i for i, n in enumerate(names) if names.count(n) > 1 and paths[i] is not None and depth[i] <= len(parts[i])
        ]
        if not clashing:
            return names
        for i in clashing:
            depth[i] += 1


def split_named_run(argument: str) -> tuple[str | None, str]:
    """``NAME=PATH`` as ``(NAME, PATH)``; any other argument (an existing file whose name has
    an ``=`` too) as ``(None, argument)``."""
    if argument == "-" or os.path.exists(argument) or "=" not in argument:
        return None, argument
    name, path = argument.split("=", 1)
    if not name or not path:
        raise EvaltoolError(
            f"RUN: {argument[:200]!r} is neither a file nor NAME=PATH (a name and a path on either side of '=')"
        )
    return name, path


def expand_run(argument: str) -> list[str]:
    """One RUN argument as files: a directory stands for its files, a glob pattern (``*?[``) that is
    not itself a file for the files it matches, both in sorted order; ``-`` is stdin."""
    if argument != "-" and os.path.isdir(argument):
        files = sorted(
            os.path.join(argument, name)
            for name in os.listdir(argument)
            if not name.startswith(".") and os.path.isfile(os.path.join(argument, name))
        )
        if not files:
            raise EvaltoolError(f"RUN: {argument} is a directory with no run files in it")
        return files
    if argument != "-" and not os.path.exists(argument) and any(c in argument for c in "*?["):
        import glob

        files = sorted(f for f in glob.glob(argument) if os.path.isfile(f))
        if not files:
            raise EvaltoolError(f"RUN: no file matches {argument}")
        return files
    return [argument]


def named_runs(arguments, run_name_options) -> tuple[list[str], list[str], list[bool]]:
    """RUN arguments and ``--run-name`` options as (paths, names, whether each name was chosen by the user).

    A plain argument stands for its files (:func:`expand_run`: a folder, a glob). ``NAME=PATH`` names
    one file; ``--run-name`` gives one name per run, in order; the other runs take
    :func:`run_names`. A chosen name must be distinct from every other (the same file given
    twice keeps its name twice).
    """
    paths, chosen = [], []
    for argument in arguments:
        name, path = split_named_run(argument)
        if name is None:
            files = expand_run(path)
            paths += files
            chosen += [None] * len(files)
            continue
        if os.path.isdir(path):
            raise EvaltoolError(f"RUN: {argument[:200]}: NAME=PATH names one run file; {path[:200]} is a folder")
        paths.append(path)
        chosen.append(name)
    if run_name_options:
        if any(name is not None for name in chosen):
            raise EvaltoolError("give run names either with --run-name or as NAME=PATH, not both")
        if len(run_name_options) != len(paths):
            raise EvaltoolError(
                f"--run-name: {len(run_name_options)} names for {len(paths)} runs; give one per run, in order"
            )
        chosen = list(run_name_options)
    defaults = run_names(paths)
    names = [c if c is not None else d for c, d in zip(chosen, defaults)]
    repeated = sorted({n for n, c in zip(names, chosen) if c is not None and names.count(n) > 1})
    if repeated:
        raise EvaltoolError(f"two runs are named {repeated[0]!r}; give each run its own name (--run-name or NAME=PATH)")
    return paths, names, [c is not None for c in chosen]
