"""Writing a report to a file: all or nothing (a temporary file beside it, then a rename)."""

from __future__ import annotations

import os
import tempfile

from evaltool.errors import EvaltoolError


def _mode(path: str) -> int:
    """The mode a plain open() would give: the old file's, else 0666 less the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one.

    The temporary file lives in the target's folder (``os.replace`` is atomic only within
    one file system). Ids that are not valid UTF-8 are written back as the bytes they were.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as exc:
        raise EvaltoolError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text.encode("utf-8", "surrogateescape"))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, _mode(path))
        os.replace(temporary, path)
    except OSError as exc:
        os.unlink(temporary)
        raise EvaltoolError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        os.unlink(temporary)
        raise
