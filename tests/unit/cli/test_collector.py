"""The collector settings of a long-running ``plait serve`` or ``plait worker``."""

from __future__ import annotations

import subprocess
import sys

# In a process of its own: freezing the test process would keep its garbage for good.
_CYCLES = """
import gc, weakref
from plait.server.cli.collector import YOUNG_COLLECTION_THRESHOLD, tune_for_serving

class Node:
    pass

tune_for_serving()
refs = []
for _ in range(50_000):
    a, b = Node(), Node()
    a.other, b.other = b, a
    refs.append(weakref.ref(a))
    del a, b
print(sum(ref() is not None for ref in refs), gc.get_threshold()[0] == YOUNG_COLLECTION_THRESHOLD)
"""


def test_a_tuned_process_still_frees_reference_cycles() -> None:
    """Cycles made after start-up are freed in batches: of 50,000, only those made since
    the last young collection are alive at the end (three tracked objects an iteration:
    two nodes and a weak reference)."""
    done = subprocess.run(
        [sys.executable, "-c", _CYCLES], capture_output=True, text=True, check=True, timeout=60
    )
    alive, tuned = done.stdout.split()
    assert tuned == "True"
    assert int(alive) <= 10_000 // 3
