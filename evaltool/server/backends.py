"""Backends the server may run, declared by its operator: ``evaltool serve --backend NAME=SPEC``.

A suite made in the browser names one of these; nothing a request says is ever imported,
opened or fetched (a ``module:function`` or URL typed in a form would be remote code
execution or a request-forgery proxy). A suite made on the command line keeps its own
spec, and the server runs it only when that spec is one the operator declared.

A backends file is a JSON object, ``{"NAME": "SPEC"}`` or ``{"NAME": {"backend": "SPEC",
...}}`` where the other keys are runner settings that go with the backend (``response_path``,
``request_template``, ``headers``, ``timeout``, ``concurrency``, ``retries``,
``max_response_bytes``, ``corpus``).

>>> declared = parse_backends(["bm25=evaltool.bench.examples:bm25_search"])
>>> declared["bm25"].spec
'evaltool.bench.examples:bm25_search'
>>> parse_backends(["no spec"])
Traceback (most recent call last):
...
evaltool.errors.EvaltoolError: --backend 'no spec': expected NAME=SPEC (NAME of letters, digits, '_', '-', '.'; SPEC module:function, a URL or a run file)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from evaltool.errors import EvaltoolError

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
SETTINGS = (
    "response_path",
    "request_template",
    "headers",
    "timeout",
    "concurrency",
    "retries",
    "max_response_bytes",
    "corpus",
)


@dataclass(frozen=True)
class DeclaredBackend:
    name: str
    spec: str
    settings: dict = field(default_factory=dict)


def _declared(name: str, value, where: str) -> DeclaredBackend:
    if not NAME.match(name):
        raise EvaltoolError(
            f"{where}: backend name {name[:80]!r}: expected letters, digits, '_', '-', '.' (at most 64)"
        )
    if isinstance(value, str):
        value = {"backend": value}
    if not isinstance(value, dict) or not isinstance(value.get("backend"), str) or not value["backend"].strip():
        raise EvaltoolError(f'{where}: backend {name!r}: expected a SPEC text or an object with "backend": SPEC')
    unknown = sorted(set(value) - {"backend", *SETTINGS})
    if unknown:
        raise EvaltoolError(
            f"{where}: backend {name!r}: unknown setting {unknown[0]!r}; expected one of " + ", ".join(SETTINGS)
        )
    settings = {k: v for k, v in value.items() if k != "backend"}
    if "headers" in settings:
        settings["headers"] = tuple(settings["headers"])
    return DeclaredBackend(name, value["backend"].strip(), settings)


def parse_backends(specs=(), config_file: str | None = None) -> dict[str, DeclaredBackend]:
    """The declared backends of ``--backend NAME=SPEC`` texts and a backends file (a name given twice
    is an error)."""
    declared: dict[str, DeclaredBackend] = {}

    def add(backend: DeclaredBackend, where: str) -> None:
        if backend.name in declared:
            raise EvaltoolError(f"{where}: backend {backend.name!r} is declared twice")
        declared[backend.name] = backend

    if config_file is not None:
        from evaltool.io.textfiles import read_text

        name, text = read_text(config_file)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EvaltoolError(
                f'{name}:{exc.lineno}: not JSON ({exc.msg}); expected an object {{"NAME": "SPEC", ...}}'
            ) from None
        if not isinstance(data, dict):
            raise EvaltoolError(f'{name}: expected a JSON object {{"NAME": "SPEC", ...}}')
        for key, value in data.items():
            add(_declared(key, value, name), name)
    for text in specs:
        key, sep, spec = text.partition("=")
        if not sep or not NAME.match(key.strip()) or not spec.strip():
            raise EvaltoolError(
                f"--backend {text[:200]!r}: expected NAME=SPEC (NAME of letters, digits, '_', '-', "
                "'.'; SPEC module:function, a URL or a run file)"
            )
        add(_declared(key.strip(), spec.strip(), "--backend"), "--backend")
    return declared


def resolve(declared: dict[str, DeclaredBackend], suite_backend: str) -> DeclaredBackend | None:
    """The declared backend a suite's ``backend`` stands for: a declared name, or a spec that the
    operator declared under some name; None when it is neither (the server will not run it)."""
    if suite_backend in declared:
        return declared[suite_backend]
    return next((b for b in declared.values() if b.spec == suite_backend), None)
