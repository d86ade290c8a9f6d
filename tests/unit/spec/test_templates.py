"""Prompt templates render what they read, and convert only that (a map's prompts)."""

from __future__ import annotations

from typing import Any

import pytest

from plait.engine.spec.expressions import ExpressionError, render


class Counted:
    """A state value that counts how often it is turned into plain data."""

    dumps = 0

    def model_dump(self) -> dict[str, Any]:
        Counted.dumps += 1
        return {"n": 1}


@pytest.fixture(autouse=True)
def _reset() -> None:
    Counted.dumps = 0


def test_a_field_the_template_selects_is_rendered_and_the_rest_is_not_converted() -> None:
    state = {"plan": {"steps": ["a", "b"]}, "big": Counted(), "items": list(range(1000))}
    text = render(
        "{{ state.plan.steps | join(',') }} / {{ state['plan'].steps[0] }} / {{ item }}",
        {"state": state, "item": 7, "input": {"other": Counted()}},
    )
    assert text == "a,b / a / 7"
    assert Counted.dumps == 0


@pytest.mark.parametrize(
    "template",
    [
        "{{ state | tojson }}",
        "{{ state.keys() | list | length }}",
        "{% for key in state %}{{ key }}{% endfor %}",
        "{% set name = 'big' %}{{ state[name] }}",
    ],
)
def test_a_template_that_reads_the_whole_state_gets_the_whole_state(template: str) -> None:
    render(template, {"state": {"big": Counted(), "plan": 1}})
    assert Counted.dumps == 1


def test_a_field_the_state_lacks_is_still_an_error_naming_it() -> None:
    with pytest.raises(ExpressionError) as raised:
        render("{{ state.missing }}", {"state": {"plan": 1}})
    assert "missing" in str(raised.value)
