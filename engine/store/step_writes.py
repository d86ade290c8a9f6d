"""One SQL statement that stores what steps wrote: task writes, blobs, checkpoints.

The rows are langgraph-checkpoint-postgres 3.2.0's (its tables, its
``ON CONFLICT`` rules, its encoding); only the way they travel differs. Its
saver sends one ``INSERT`` per row, in a pipeline; here every row of a step,
or of several runs' steps at once (:mod:`plait.engine.store.step_commits`),
goes in one statement (a multi-row insert per table, as CTEs), which is one
round trip, one implicit transaction and one commit. A guard
(:class:`BatchGuard`, a worker's lease of each run) lets each step through
or not on its own: the rows of a step it refuses are not stored, and the
statement returns the keys of the steps it stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.postgres import WRITES_IDX_MAP

#: A row of ``checkpoint_writes``: thread, namespace, checkpoint, task, task
#: path, index, channel, type, blob (as ``BasePostgresSaver._dump_writes`` makes it).
WriteRow = tuple[str, str, str, str, str, int, str, str, bytes]
#: A row of ``checkpoint_blobs``: thread, namespace, channel, version, type, blob.
BlobRow = tuple[str, str, str, str, str, bytes | None]
#: A row of ``checkpoints``: thread, namespace, id, parent id, checkpoint, metadata.
CheckpointRow = tuple[str, str, str, str | None, Any, Any]

#: Each table's columns, with the type each ``VALUES`` column is cast to (the
#: steps' rows are selected from ``VALUES`` lists, where a parameter's type is
#: not taken from the table).
_WRITE_COLUMNS = (
    ("thread_id", "text"),
    ("checkpoint_ns", "text"),
    ("checkpoint_id", "text"),
    ("task_id", "text"),
    ("task_path", "text"),
    ("idx", "int"),
    ("channel", "text"),
    ("type", "text"),
    ("blob", "bytea"),
)
_BLOB_COLUMNS = (
    ("thread_id", "text"),
    ("checkpoint_ns", "text"),
    ("channel", "text"),
    ("version", "text"),
    ("type", "text"),
    ("blob", "bytea"),
)
_CHECKPOINT_COLUMNS = (
    ("thread_id", "text"),
    ("checkpoint_ns", "text"),
    ("checkpoint_id", "text"),
    ("parent_checkpoint_id", "text"),
    ("checkpoint", "jsonb"),
    ("metadata", "jsonb"),
)
_WRITE_KEY = "(thread_id, checkpoint_ns, checkpoint_id, task_id, idx)"
_WRITE_SET = "channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob"
_CONFLICTS = {
    "upserts": f"ON CONFLICT {_WRITE_KEY} DO UPDATE SET {_WRITE_SET}",
    "inserts": f"ON CONFLICT {_WRITE_KEY} DO NOTHING",
    "blobs": "ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING",
    "checkpoints": (
        "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) "
        "DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata"
    ),
}
_TABLES = {
    "upserts": ("checkpoint_writes", _WRITE_COLUMNS),
    "inserts": ("checkpoint_writes", _WRITE_COLUMNS),
    "blobs": ("checkpoint_blobs", _BLOB_COLUMNS),
    "checkpoints": ("checkpoints", _CHECKPOINT_COLUMNS),
}


@dataclass(frozen=True)
class BatchGuard:
    """Which steps of a statement may be stored.

    ``sql`` selects, as ``key``, the keys it lets through from the CTE
    ``request``: one row per step, its key (``text``) and then ``columns``
    (name, SQL type), whose values each step's ticket carries
    (:func:`statement`). Without a guard every step is stored.
    """

    columns: tuple[tuple[str, str], ...]
    sql: str


#: What a step is stored under: its key (one step of a key per statement), then
#: the values of the guard's columns.
Ticket = tuple[Any, ...]


@dataclass
class StepWrites:
    """What a step wrote, gathered until it is stored."""

    upserts: dict[tuple[str, str, str, str, int], WriteRow] = field(default_factory=dict)
    inserts: dict[tuple[str, str, str, str, int], WriteRow] = field(default_factory=dict)
    blobs: list[BlobRow] = field(default_factory=list)
    checkpoint: CheckpointRow | None = None

    def __bool__(self) -> bool:
        return bool(self.upserts or self.inserts or self.blobs or self.checkpoint)

    def add_writes(self, rows: Sequence[WriteRow]) -> None:
        """Add one task's writes as LangGraph's ``aput_writes`` would store them.

        A batch of special channels only (errors, interrupts) replaces what a
        task wrote before under the same index; any other batch is stored once
        (a task run again does not overwrite its first result). Gathered, the
        last upsert of a key wins and the first insert of a key wins, as
        LangGraph's statements one after another would leave them (one
        ``INSERT`` may not update a row twice).
        """
        upsert = all(row[6] in WRITES_IDX_MAP for row in rows)
        for row in rows:
            key = (row[0], row[1], row[2], row[3], row[5])
            if upsert:
                self.inserts.pop(key, None)
                self.upserts[key] = row
            elif key not in self.upserts:
                self.inserts.setdefault(key, row)

    def rows(self) -> dict[str, Sequence[tuple[Any, ...]]]:
        """Its rows by kind (``upserts``, ``inserts``, ``blobs``, ``checkpoints``)."""
        return {
            "upserts": list(self.upserts.values()),
            "inserts": list(self.inserts.values()),
            "blobs": self.blobs,
            "checkpoints": [self.checkpoint] if self.checkpoint is not None else [],
        }

    def size(self) -> int:
        """How many parameters its rows take in a statement."""
        return (
            9 * (len(self.upserts) + len(self.inserts))
            + 6 * len(self.blobs)
            + (6 if self.checkpoint is not None else 0)
        )


def statement(
    steps: Sequence[tuple[Ticket, StepWrites]], guard: BatchGuard | None
) -> tuple[str, tuple[Any, ...]]:
    """The SQL and parameters that store ``steps`` (each with its ticket) behind ``guard``.

    It returns the keys of the steps stored. Each step's rows are tagged with
    its key and joined to the guard's keys, so a refused step inserts nothing.
    Rows go as ``VALUES`` lists: the text depends on how many rows of each
    kind there are. Arrays (one text for all) cost more to encode than this
    saves: psycopg encodes an array element by element in Python.
    """
    columns = guard.columns if guard is not None else ()
    request = "(" + ", ".join(["%s::text", *(f"%s::{kind}" for _, kind in columns)]) + ")"
    names = ", ".join(["key", *(name for name, _ in columns)])
    params: list[Any] = []
    for ticket, _ in steps:
        params.extend(ticket[: 1 + len(columns)])
    ctes = [
        f"request ({names}) AS (VALUES {', '.join([request] * len(steps))})",
        f"guard AS ({guard.sql if guard is not None else 'SELECT key FROM request'})",
    ]
    tagged: dict[str, list[Any]] = {kind: [] for kind in _TABLES}
    counts = dict.fromkeys(_TABLES, 0)
    for ticket, step in steps:
        for kind, rows in step.rows().items():
            for row in rows:
                tagged[kind].append(ticket[0])
                tagged[kind].extend(row)
                counts[kind] += 1
    for kind, (table, table_columns) in _TABLES.items():
        if not counts[kind]:
            continue
        typed = ", ".join(["%s::text", *(f"%s::{sql_type}" for _, sql_type in table_columns)])
        listed = ", ".join(name for name, _ in table_columns)
        ctes.append(
            f"w_{kind} AS (INSERT INTO {table} ({listed}) SELECT {listed} "
            f"FROM (VALUES {', '.join([f'({typed})'] * counts[kind])}) AS v (key, {listed}) "
            f"JOIN guard USING (key) {_CONFLICTS[kind]})"
        )
        params.extend(tagged[kind])
    return "WITH " + ",\n".join(ctes) + "\nSELECT key FROM guard", tuple(params)
