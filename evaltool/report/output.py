"""Writing a report to a file: all or nothing (a temporary file beside it, then a rename)."""

from __future__ import annotations

import os
import shutil
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


PARTIAL_SUFFIX = ".partial"


def write_together(files: list[tuple[str, str]]) -> None:
    """Write several ``(path, text)`` files of one folder as one step: all of them, or none.

    They are written and synced in a temporary folder beside them (``.NAME.partial``, for
    the first file's NAME), then renamed into place in the order given, so the last one
    appears only when the others are there: put the file that readers look for last.
    A kill during the renames can leave the first files without the last;
    :func:`remove_partials` and a writer that reuses the same names clean that up.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> write_together([(os.path.join(folder, "a.txt"), "A"), (os.path.join(folder, "b.json"), "{}")])
    >>> sorted(os.listdir(folder))
    ['a.txt', 'b.json']
    """
    folder = os.path.dirname(os.path.abspath(files[0][0]))
    try:
        staging = tempfile.mkdtemp(dir=folder, prefix=f".{os.path.basename(files[0][0])}.", suffix=PARTIAL_SUFFIX)
    except OSError as exc:
        raise EvaltoolError(f"cannot write {files[0][0]}: {exc.strerror or exc}") from None
    try:
        staged = []
        for path, text in files:
            temporary = os.path.join(staging, os.path.basename(path))
            with open(temporary, "wb") as out:
                out.write(text.encode("utf-8", "surrogateescape"))
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, _mode(path))
            staged.append((temporary, path))
        for temporary, path in staged:
            os.replace(temporary, path)
    except OSError as exc:
        raise EvaltoolError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def remove_partials(folder: str) -> list[str]:
    """Delete the temporary folders a killed :func:`write_together` left in ``folder``; their paths."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    removed = []
    for name in names:
        path = os.path.join(folder, name)
        if name.startswith(".") and name.endswith(PARTIAL_SUFFIX) and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
