"""The checkpoint: one JSON line per finished query, written as each query finishes.

The first line is a header naming what the run is (the queries file and its SHA-256,
the backend, the limit, when it started); every other line is one query's outcome.
Each line is flushed and synced before the next query's result is written, so Ctrl-C,
a kill or a crash loses only the queries still in flight. ``--resume`` reads the file
back, checks that the header matches the command, and runs only the queries it lacks;
a last line cut off mid-write is dropped (its query runs again); ``--restart`` writes a
new one over it. When the report has been written the checkpoint is deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass

from evaltool.errors import EvaltoolError

FORMAT = 1
MATCHED = ("queries_sha256", "backend", "limit")


@dataclass
class Outcome:
    """What one query got: its ranking or its error, how long it took, how many attempts."""

    qid: str
    ids: list[str]
    scores: list[float] | None
    error: str | None
    execution_time_ms: float
    attempts: int
    duplicates_removed: int = 0
    http_status: int | None = None  # of the last failed HTTP answer
    redirects: list[dict] | None = None  # HTTP redirects met, followed or refused (see backends.redirect_step)
    texts: list[dict] | None = None  # per id {"title", "snippet"} when the backend returned text

    @property
    def key(self) -> str:
        return self.qid

    @classmethod
    def from_record(cls, record: dict) -> Outcome:
        """An outcome from its checkpoint line (a field added since the line was written takes its default)."""
        optional = {"duplicates_removed", "http_status", "redirects", "texts"}
        return cls(
            **{name: record[name] for name in cls.__dataclass_fields__ if name in record or name not in optional}
        )


def checkpoint_path(out_dir: str, queries_path: str, name: str | None = None) -> str:
    """``OUT/QUERIES.checkpoint.jsonl``, or ``OUT/NAME.checkpoint.jsonl`` for a run with a name of its
    own (a suite: two suites of one queries file must not share a checkpoint).

    A name is kept to letters, digits, ``.``, ``_`` and ``-`` and to 100 characters; one
    that had to change gets a hash of itself, so that two names never share a file.

    >>> checkpoint_path("out", "data/q.json"), checkpoint_path("out", "q.json", "suite-helpdesk")
    ('out/q.checkpoint.jsonl', 'out/suite-helpdesk.checkpoint.jsonl')
    >>> checkpoint_path("out", "q.json", "suite-a/b")
    'out/suite-a_b-2d0ef9fd.checkpoint.jsonl'
    """
    if name is None:
        stem = os.path.basename(queries_path)
        stem = stem[: -len(".json")] if stem.endswith(".json") else stem
    else:
        stem = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:100]
        if stem != name:
            stem += "-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return os.path.join(out_dir, f"{stem}.checkpoint.jsonl")


class Checkpoint:
    """An open checkpoint file, appended to one finished query at a time.

    Another kind of run keeps its own items in one by naming, in a subclass, the class of
    its lines (``outcome_type``: ``from_record(dict)``, a ``key``, a dataclass), the header
    keys that must match on ``--resume`` (``matched``), what an item is called (``unit``)
    and its header's marker (``marker``) and its ``kind``.
    """

    kind = "bench"
    outcome_type: type = Outcome
    matched: tuple[str, ...] = MATCHED
    unit = "query"
    units = "queries"
    marker = "evaltool_checkpoint"
    resume_hint = "was the run started with the same queries file and --out?"

    def __init__(self, path: str, header: dict, done: dict):
        self.path = path
        self.header = header
        self.done = done
        self.discarded = 0  # finished queries of an earlier run that this one was told to write over
        self._handle = None

    @classmethod
    def start(cls, path: str, header: dict, discard: bool = False) -> Checkpoint:
        """A new checkpoint. One that holds finished queries is refused, or, with ``discard``,
        written over (even a damaged one); ``discarded`` is then how many finished queries it held."""
        discarded = 0
        if os.path.exists(path):
            try:
                previous = cls.read(path)
            except EvaltoolError:
                if not discard:
                    raise
                previous = None
            if previous is not None and previous.done:
                if not discard:
                    raise EvaltoolError(
                        f"{path} holds an unfinished run ({len(previous.done)} {cls.units} done, started "
                        f"{previous.header.get('started', '?')}): add --resume to finish it, or --restart to "
                        "discard it and start over"
                    )
                discarded = len(previous.done)
        checkpoint = cls(path, {cls.marker: FORMAT, **header}, {})
        checkpoint.discarded = discarded
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            checkpoint._handle = open(path, "w", encoding="utf-8")
        except OSError as exc:
            raise EvaltoolError(f"cannot write the checkpoint {path}: {exc.strerror or exc}") from None
        checkpoint._write(checkpoint.header)
        return checkpoint

    @classmethod
    def resume(cls, path: str, header: dict) -> Checkpoint:
        """The checkpoint of the same run, opened for appending; refuses one of another run."""
        previous = cls.read(path)
        if previous is None:
            raise EvaltoolError(f"--resume: no checkpoint to resume at {path} ({cls.resume_hint})")
        differ = [
            f"{key}: {previous.header.get(key)!r} then, {header[key]!r} now"
            for key in cls.matched
            if previous.header.get(key) != header[key]
        ]
        if differ:
            raise EvaltoolError(
                f"--resume: {path} is a run with other settings ({'; '.join(differ)}); "
                "use the same ones, or --restart to discard it and start over"
            )
        previous._handle = open(path, "a", encoding="utf-8")
        return previous

    @classmethod
    def read(cls, path: str) -> Checkpoint | None:
        """The header and finished queries of a checkpoint; None when there is none (or no header yet)."""
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise EvaltoolError(f"cannot read {path}: {exc.strerror or exc}") from None
        lines = data.split(b"\n")
        complete = lines[:-1]  # a last piece without its newline was cut off mid-write
        kept = sum(len(line) + 1 for line in complete)
        if kept < len(data):
            with open(path, "r+b") as handle:
                handle.truncate(kept)
        if not complete:
            return None
        records = []
        for number, line in enumerate(complete, 1):
            try:
                records.append(json.loads(line))
            except ValueError:
                raise EvaltoolError(
                    f"{path}:{number}: not a checkpoint line (corrupt JSON); delete the file to start over"
                ) from None
        header = records[0]
        if not isinstance(header, dict) or header.get(cls.marker) != FORMAT:
            raise EvaltoolError(f"{path}:1: not an evaltool {cls.kind} checkpoint header")
        done: dict = {}
        for number, record in enumerate(records[1:], 2):
            try:
                outcome = cls.outcome_type.from_record(record)
            except (KeyError, TypeError, ValueError, AttributeError):
                raise EvaltoolError(
                    f"{path}:{number}: not a {cls.unit} outcome; delete the file to start over"
                ) from None
            if outcome.key in done:
                raise EvaltoolError(f"{path}:{number}: {cls.unit} {outcome.key} is recorded twice")
            done[outcome.key] = outcome
        return cls(path, header, done)

    def _write(self, record: dict) -> None:
        try:
            self._handle.write(json.dumps(record) + "\n")
            self._handle.flush()
            os.fsync(self._handle.fileno())
        except OSError as exc:
            raise EvaltoolError(f"cannot write the checkpoint {self.path}: {exc.strerror or exc}") from None

    def append(self, outcome) -> None:
        self._write(asdict(outcome))
        self.done[outcome.key] = outcome

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def remove(self) -> None:
        self.close()
        os.unlink(self.path)
