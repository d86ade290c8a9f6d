"""The statements every run sends are converted by psycopg once, not on every call.

psycopg caches the conversion of a query (placeholders to ``$n``) only when it is
at most ``MAX_CACHED_STATEMENT_LENGTH`` characters long; a longer one is split
with a regular expression on every execution (about 60 us for a run's insert).
"""

from __future__ import annotations

import pytest
from psycopg import _queries
from psycopg.adapt import Transformer

from plait.server.queue import journal, runs

HOT = {
    "a run's creation": runs._INSERT_RUN,
    "a run's end": runs._FINISH,
    "a journal append": journal._APPEND,
}


@pytest.mark.parametrize("query", HOT.values(), ids=list(HOT))
def test_a_hot_statement_is_converted_once(query: str) -> None:
    names = {part.item for part in _queries._split_query(query.encode(), "utf-8")[:-1]}
    params = dict.fromkeys(names)
    before = _queries._query2pg.cache_info()
    for _ in range(2):
        _queries.PostgresQuery(Transformer()).convert(query, params)
    after = _queries._query2pg.cache_info()
    assert after.hits > before.hits, f"{len(query)} characters: psycopg converts it every time"
