"""The only place that opens SQLite: apsw, sqlite-vec loaded, WAL and pragmas set."""

from __future__ import annotations

from pathlib import Path

import apsw
import sqlite_vec

BUSY_TIMEOUT_MS = 10_000


def connect(path: str | Path, *, readonly: bool = False) -> apsw.Connection:
    """Open `path` with sqlite-vec loaded.

    WAL lets one writer and many readers work at once; readers never see a half-written
    source because every source replacement is one transaction. Extension loading is switched
    off again once sqlite-vec is in, so SQL cannot load anything else.
    """
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE
    if not readonly:
        flags |= apsw.SQLITE_OPEN_CREATE
    connection = apsw.Connection(str(path), flags=flags)
    connection.set_busy_timeout(BUSY_TIMEOUT_MS)
    connection.enable_load_extension(True)
    connection.load_extension(sqlite_vec.loadable_path())
    connection.enable_load_extension(False)
    if not readonly:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA foreign_keys=ON")
    return connection


def sqlite_vec_version(connection: apsw.Connection) -> str:
    return str(connection.execute("SELECT vec_version()").fetchall()[0][0])
