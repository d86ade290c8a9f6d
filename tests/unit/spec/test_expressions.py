"""CEL syntax errors read as a person would say them: where, and what went wrong."""

from __future__ import annotations

import pytest

from plait.engine.spec.expressions import ExpressionError, compile_cel


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("state.a +", "syntax error at character 10: the expression ends too early"),
        ("a b", "syntax error at character 3: unexpected 'b'"),
        ("state.a == (1", "syntax error at character 14: missing ')' at the end"),
        ("x ? y", "syntax error at character 1: a `? :` conditional is missing its `:` part"),
        ("state..a", "syntax error at character 7: cannot read '..'"),
    ],
)
def test_cel_syntax_errors_name_the_position_and_the_problem(source: str, message: str) -> None:
    with pytest.raises(ExpressionError) as raised:
        compile_cel(source)
    assert raised.value.message == message
    assert "expecting" not in str(raised.value)
