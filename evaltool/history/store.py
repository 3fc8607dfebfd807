"""Where the history lives: a SQLite file (default) or a PostgreSQL database, one code path.

``db`` is a path (SQLite), a URL (``sqlite:///path``, ``postgresql://user@host/name``;
``postgresql://`` uses the psycopg driver), an open :class:`History`, or None: the
``EVALTOOL_DB`` environment variable, else ``evaltool-history.sqlite`` in the current
directory.

SQLite runs in WAL mode, so readers never wait for a writer and never see half a
write; a writer takes the write lock when its transaction begins (``BEGIN IMMEDIATE``)
and waits up to :data:`BUSY_TIMEOUT` seconds for another writer, so concurrent
recorders queue instead of failing. On PostgreSQL the schema check runs under an
advisory lock, so two first writers do not both create the tables.

Schema versions (:mod:`~evaltool.history.schema`): a writer that finds no history
creates one at the current version; a history of an older version is refused by
readers and writers alike, with the command that brings it forward (:func:`upgrade`,
``evaltool history upgrade``), as MLflow's tracking store does: a database several people
share is changed only when its owner says so, never by whoever reads it first.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass

from evaltool.errors import EvaltoolError, HistoryError, quote

DEFAULT_FILE = "evaltool-history.sqlite"
ENV_VAR = "EVALTOOL_DB"
BUSY_TIMEOUT = 60.0  # seconds a SQLite writer waits for another one
SCHEMA_LOCK = 7_451_263  # the PostgreSQL advisory lock taken while the schema is checked or changed


def _sqlalchemy():
    try:
        import sqlalchemy
    except ImportError:
        raise EvaltoolError("the evaluation history needs SQLAlchemy: pip install 'sqlalchemy>=2'") from None
    return sqlalchemy


def default_db() -> str:
    """``$EVALTOOL_DB``, else ``evaltool-history.sqlite`` in the current directory."""
    return os.environ.get(ENV_VAR) or DEFAULT_FILE


def _url(db: str):
    """The SQLAlchemy URL of a path or URL; the SQLite file's path (None for a server)."""
    sa = _sqlalchemy()
    if "://" not in db:
        path = os.path.abspath(db)
        return sa.engine.URL.create("sqlite", database=path), path
    try:
        url = sa.engine.make_url(db)
    except sa.exc.ArgumentError:
        raise HistoryError(f"--db {db!r}: expected a file path or a URL such as postgresql://user@host/name") from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    backend = url.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise HistoryError(
            f"--db {url.render_as_string(hide_password=True)}: unsupported database {backend!r}; "
            "expected a SQLite file or postgresql://"
        )
    if backend == "postgresql":
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise HistoryError("a PostgreSQL history needs psycopg: pip install 'evaltool[postgres]'") from None
        return url, None
    if not url.database or url.database == ":memory:":
        raise HistoryError("--db: a SQLite history must be a file (an in-memory database forgets everything)")
    return url, os.path.abspath(url.database)


@dataclass
class History:
    """An open history: the engine, where it is (for messages) and its backend."""

    engine: object
    where: str
    backend: str  # sqlite | postgresql

    @contextmanager
    def reading(self):
        """A connection for reads: one consistent snapshot (one transaction; on PostgreSQL at
        REPEATABLE READ, so every statement of it sees the same commits, as SQLite's WAL does)."""
        with self._errors(), self.engine.connect() as conn:
            if self.backend == "postgresql":
                conn = conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                yield conn

    @contextmanager
    def writing(self):
        """One write transaction: committed whole at the end, or rolled back whole. It counts itself
        in ``evaltool_schema.changes`` first (on PostgreSQL that row lock also queues the writers)."""
        from evaltool.history.schema import schema_table

        with self._errors(), self.engine.connect() as conn:
            conn = conn.execution_options(evaltool_write=True)
            with conn.begin():
                conn.execute(schema_table.update().values(changes=schema_table.c.changes + 1))
                yield conn

    @contextmanager
    def _errors(self):
        sa = _sqlalchemy()
        try:
            yield
        except sa.exc.DBAPIError as exc:
            raise HistoryError(describe(exc, self.where)) from None
        except DamagedHistory as exc:
            raise HistoryError(f"{self.where}: damaged history: {exc}") from None
        except UnicodeDecodeError as exc:  # SQLite hands back the bytes of a damaged text cell as they are
            raise HistoryError(
                f"{self.where}: damaged history: a text value that is not UTF-8 ({exc.reason} at byte {exc.start})"
            ) from None

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class DamagedHistory(HistoryError):
    """A value in the history that evaltool never writes there (a hand edit, a disk fault, a
    foreign program). Raised by the readers of rows, which do not know where the history is;
    :meth:`History.reading` turns it into a HistoryError naming the history."""


def checked_version(value) -> int:
    """The schema version stored in a history, refused unless it is a whole number of 1 or more.

    >>> checked_version(2)
    2
    >>> checked_version("abc")
    Traceback (most recent call last):
    evaltool.history.store.DamagedHistory: evaltool_schema holds the version 'abc'; expected a whole number from 1
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DamagedHistory(
            f"evaltool_schema holds the version {quote(str(value), 40)}; expected a whole number from 1"
        )
    return value


def describe(exc, where: str) -> str:
    """One line for a database error: where, and what the driver said (its first line)."""
    said = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    text = said[0] if said else type(exc).__name__
    if "file is not a database" in text or "file is encrypted" in text:
        return f"{where}: not an evaltool history (SQLite says: {text})"
    if "Could not decode to UTF-8" in text:
        return f"{where}: damaged history: {text[:200]}"
    return f"{where}: {text}"


def _sqlite_engine(url):
    sa = _sqlalchemy()
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT})

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # transactions are begun below, not by the driver
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(conn):
        write = conn.get_execution_options().get("evaltool_write")
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def where(db=None) -> str:
    """How messages name the history at ``db``: the SQLite file's absolute path, or the URL without
    its password."""
    if isinstance(db, History):
        return db.where
    url, path = _url(os.fspath(db) if db is not None else default_db())
    return path or url.render_as_string(hide_password=True)


def _connect(db, create: bool) -> History:
    """The History at ``db`` (a path, a URL, None: the default), its schema not looked at yet."""
    text = os.fspath(db) if db is not None else default_db()
    url, path = _url(text)
    sa = _sqlalchemy()
    where = path or url.render_as_string(hide_password=True)
    if path is not None:
        _check_file(path, create)
        return History(_sqlite_engine(url), where, "sqlite")
    return History(sa.create_engine(url, pool_pre_ping=True), where, "postgresql")


def open_history(db=None, *, create: bool = False) -> History:
    """Open the history at ``db`` (see the module docstring), checking its schema version.

    ``create`` makes a new history where there is none (recording does; reading does not:
    a reader given a path with no file gets a HistoryError rather than an empty file). A
    history of an older schema version is a HistoryError naming ``evaltool history upgrade``.
    """
    if isinstance(db, History):
        return db
    from evaltool.history.schema import CURRENT_VERSION

    history = _connect(db, create)
    try:
        with history._errors():
            if _version(history) != CURRENT_VERSION:
                _prepare(history, create)
    except BaseException:
        history.close()
        raise
    return history


def upgrade(db=None) -> tuple[int, int]:
    """Bring the history at ``db`` forward to this evaltool's schema version, in one transaction;
    returns (version found, version now). A current history is left as it is.

    Back the database up first: older evaltool versions refuse an upgraded history.
    """
    from evaltool.history import schema
    from evaltool.history.migrations import MIGRATIONS

    history = db if isinstance(db, History) else _connect(db, create=False)
    try:
        with history._errors(), _schema_lock(history) as conn:
            version = _stored_version(history, conn)
            if version is None:
                raise HistoryError(f"{history.where}: no evaltool history there to upgrade")
            if version > schema.CURRENT_VERSION:
                raise HistoryError(_newer(history, version))
            for step in range(version, schema.CURRENT_VERSION):
                MIGRATIONS[step](conn)
            if version != schema.CURRENT_VERSION:
                conn.execute(
                    schema.schema_table.update().values(
                        version=schema.CURRENT_VERSION, changes=schema.schema_table.c.changes + 1
                    )
                )
    finally:
        if history is not db:
            history.close()
    return version, schema.CURRENT_VERSION


def _check_file(path: str, create: bool) -> None:
    if not create and not os.path.exists(path):
        raise HistoryError(f"{path}: no history there (record one with --record, or give --db)")
    if os.path.isdir(path):
        raise HistoryError(f"{path}: is a folder; --db takes a file")
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise HistoryError(f"{path}: the folder {folder} does not exist")


def check_writable(db=None) -> None:
    """Fail now (HistoryError) when nothing could be recorded at ``db``: a bad URL, a missing
    folder, a file that is not a history or is of another schema version, a server that does
    not answer. A SQLite file that does not exist yet is not created (that waits for a record)."""
    if isinstance(db, History):
        return
    _, path = _url(os.fspath(db) if db is not None else default_db())
    if path is not None and not os.path.exists(path):
        _check_file(path, create=True)
        return
    open_history(db, create=True).close()


def _version(history: History) -> int | None:
    """The schema version, None for a database without evaltool's tables (HistoryError for a foreign one)."""
    with history.engine.connect() as conn:
        return _stored_version(history, conn)


def _stored_version(history: History, conn) -> int | None:
    from evaltool.history import schema

    sa = _sqlalchemy()
    names = set(sa.inspect(conn).get_table_names())
    if schema.schema_table.name not in names:
        foreign = sorted(names - set(schema.TABLES))
        if foreign:
            shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
            raise HistoryError(
                f"{history.where}: a database, but not an evaltool history (it has the tables "
                f"{shown}); give another --db"
            )
        return None
    rows = conn.execute(sa.select(schema.schema_table.c.version)).scalars().all()
    if len(rows) != 1:
        raise HistoryError(f"{history.where}: damaged history: evaltool_schema holds {len(rows)} rows, expected 1")
    return checked_version(rows[0])


def _newer(history: History, version: int) -> str:
    from evaltool import __version__
    from evaltool.history.schema import CURRENT_VERSION

    return (
        f"{history.where}: written by a newer evaltool (history schema version {version}); "
        f"evaltool {__version__} reads versions up to {CURRENT_VERSION}: upgrade evaltool to read it"
    )


def _older(history: History, version: int) -> str:
    from evaltool.history.schema import CURRENT_VERSION

    return (
        f"{history.where}: a history of schema version {version}; this evaltool uses version "
        f"{CURRENT_VERSION}: bring it forward with 'evaltool history upgrade --db {history.where}' "
        "(back it up first: older evaltool versions cannot read an upgraded history)"
    )


@contextmanager
def _schema_lock(history: History):
    """A write transaction holding the schema lock (SQLite's write lock; a PostgreSQL advisory lock)."""
    sa = _sqlalchemy()
    with history.engine.connect() as conn:
        conn = conn.execution_options(evaltool_write=True)
        with conn.begin():
            if history.backend == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK})
            yield conn


def _prepare(history: History, create: bool) -> None:
    """Create the tables where there are none (under the schema lock, re-checked there), or say why
    the history found cannot be used as it is."""
    from evaltool.history import schema

    with _schema_lock(history) as conn:
        version = _stored_version(history, conn)
        if version is None:
            if not create:
                raise HistoryError(f"{history.where}: no evaltool history there yet (record one with --record first)")
            schema.metadata.create_all(conn)
            conn.execute(schema.schema_table.insert().values(version=schema.CURRENT_VERSION, changes=0))
            return
        if version > schema.CURRENT_VERSION:
            raise HistoryError(_newer(history, version))
        if version < schema.CURRENT_VERSION:
            raise HistoryError(_older(history, version))
