"""One SQL statement that stores what a step wrote: task writes, blobs, its checkpoint.

The rows are langgraph-checkpoint-postgres 3.2.0's (its tables, its
``ON CONFLICT`` rules, its encoding); only the way they travel differs. Its
saver sends one ``INSERT`` per row, in a pipeline; here every row of a step
goes in one statement (a multi-row insert per table, as CTEs of the
checkpoint's insert), which is one round trip, one implicit
transaction and one commit, and which a guard (the lease fence of a worker's
run) opens: when the guard raises, nothing of the step is stored.
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

#: A guard with nothing to check.
NO_GUARD: tuple[str, tuple[Any, ...]] = ("SELECT 1", ())

_WRITE_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob"
)
_WRITE_KEY = "(thread_id, checkpoint_ns, checkpoint_id, task_id, idx)"
_UPSERT_WRITES = f"""
    INSERT INTO checkpoint_writes ({_WRITE_COLUMNS}) VALUES {{rows}}
    ON CONFLICT {_WRITE_KEY} DO UPDATE SET
        channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob"""
_INSERT_WRITES = f"""
    INSERT INTO checkpoint_writes ({_WRITE_COLUMNS}) VALUES {{rows}}
    ON CONFLICT {_WRITE_KEY} DO NOTHING"""
_INSERT_BLOBS = """
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    VALUES {rows}
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING"""
_CHECKPOINT = """
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
SELECT %s, %s, %s, %s, %s, %s FROM guard
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata"""
# Referencing the guard makes Postgres evaluate it; the inserts run regardless.
_ONLY_GUARD = "SELECT 1 FROM guard"


@dataclass
class StepWrites:
    """What a step wrote, gathered until it is stored in one statement."""

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

    def add_later(self, later: StepWrites) -> None:
        """Add the task writes ``later`` gathered after these, as :meth:`add_writes` would have."""
        for key, row in later.upserts.items():
            self.inserts.pop(key, None)
            self.upserts[key] = row
        for key, row in later.inserts.items():
            if key not in self.upserts:
                self.inserts.setdefault(key, row)

    def statement(self, guard: tuple[str, tuple[Any, ...]]) -> tuple[str, tuple[Any, ...]]:
        """The SQL and parameters that store all of it behind ``guard`` (SQL, parameters).

        Rows go as ``VALUES`` lists, so the statement's text depends on how many
        rows of each kind there are: a few shapes per graph, each prepared once
        per connection. Arrays (one text for all) cost more to encode than this
        saves: psycopg encodes an array element by element in Python.
        """
        guard_sql, guard_params = guard
        parts = [f"WITH guard AS ({guard_sql})"]
        params = list(guard_params)
        for template, rows, width in (
            (_UPSERT_WRITES, list(self.upserts.values()), 9),
            (_INSERT_WRITES, list(self.inserts.values()), 9),
            (_INSERT_BLOBS, self.blobs, 6),
        ):
            if rows:
                parts.append(template.format(rows=_placeholders(len(rows), width)))
                params.extend(value for row in rows for value in row)
        ctes = ",\n".join(
            parts[:1] + [f"w{index} AS ({part})" for index, part in enumerate(parts[1:])]
        )
        if self.checkpoint is None:
            return f"{ctes}\n{_ONLY_GUARD}", tuple(params)
        return f"{ctes}{_CHECKPOINT}", (*params, *self.checkpoint)


def _placeholders(rows: int, width: int) -> str:
    row = "(" + ", ".join(["%s"] * width) + ")"
    return ", ".join([row] * rows)
