"""Hostile and broken inputs for every reader, through the command line (tests/support/fuzzing.py): each
case must end in exit 0 or 2 (1 where the command documents it), with no traceback and a short
message. Seeded, so a failure is replayed with ``python -m tests.support.fuzzing --only INDEX``.

CI runs a few hundred cases (well under a minute); a local hunt runs thousands:
``EVALTOOL_FUZZ_CASES=5000 EVALTOOL_FUZZ_SEED=7 pytest tests/test_fuzz.py`` or
``python -m tests.support.fuzzing --cases 5000 --seed 7``.
"""

from __future__ import annotations

import json
import os

from tests.support.fuzzing import fuzz

CASES = int(os.environ.get("EVALTOOL_FUZZ_CASES", "240"))
SEED = int(os.environ.get("EVALTOOL_FUZZ_SEED", "0"))


def test_mutated_inputs_of_every_reader_end_in_one_message():
    failures = fuzz(CASES, seed=SEED, timeout=1800)
    shown = "\n".join(json.dumps({k: failure.get(k) for k in ("index", "target", "mutations", "code", "problems",
                                                                "stderr")})[:1500] for failure in failures[:10])
    assert not failures, (f"{len(failures)} of {CASES} fuzzed inputs (seed {SEED}) broke a promise; replay one with "
                          f"'python -m tests.support.fuzzing --seed {SEED} --only INDEX':\n{shown}")
