"""What an incoming A2A message means to a served graph: its run's input, or a decision."""

from __future__ import annotations

from pathlib import Path

import pytest
from a2a.helpers import new_data_part, new_text_part
from a2a.types.a2a_pb2 import Message, Role

from plait.engine.spec.loader import load_spec
from plait.engine.spec.models import GraphSpec
from plait.server.a2a.cards import agent_card, is_exposed
from plait.server.a2a.messages import NotADecision, decision_of, run_input

SPECS = Path(__file__).resolve().parents[3] / "specs"


@pytest.fixture(scope="module")
def agent() -> GraphSpec:
    return load_spec(SPECS / "a2a-expense-agent.yaml").spec


def message(*parts: object) -> Message:
    return Message(role=Role.ROLE_USER, parts=list(parts))  # type: ignore[arg-type]


def test_text_fills_the_text_input_field(agent: GraphSpec) -> None:
    assert run_input(agent, message(new_text_part("Taxi 42.50"))) == {"request": "Taxi 42.50"}


def test_data_parts_give_input_fields_and_unknown_keys_are_dropped(agent: GraphSpec) -> None:
    values = run_input(
        agent, message(new_data_part({"request": "Hotel 120", "claim": {"forged": True}}))
    )
    assert values == {"request": "Hotel 120"}
    # Data wins over text for the same field.
    both = message(new_text_part("ignored"), new_data_part({"request": "Train 30"}))
    assert run_input(agent, both) == {"request": "Train 30"}


@pytest.mark.parametrize(
    ("text", "decision", "comment"),
    [
        ("approve", "approve", None),
        ("Approved.", "approve", None),
        ("yes: offsite dinner", "approve", "offsite dinner"),
        ("reject too expensive", "reject", "too expensive"),
        ("No", "reject", None),
        ("approve\nlooks fine", "approve", "looks fine"),
    ],
)
def test_a_text_follow_up_is_a_decision(text: str, decision: str, comment: str | None) -> None:
    found = decision_of(message(new_text_part(text)))
    assert (found.decision, found.comment) == (decision, comment)


def test_a_data_part_decision_wins_and_may_edit() -> None:
    found = decision_of(
        message(
            new_text_part("reject"),
            new_data_part({"decision": "edit", "arguments": {"amount": 500}, "comment": "cap"}),
        )
    )
    assert found.decision == "edit"
    assert found.arguments == {"amount": 500.0}
    assert found.comment == "cap"


def test_anything_else_is_not_a_decision() -> None:
    with pytest.raises(NotADecision, match="approve"):
        decision_of(message(new_text_part("maybe later?")))
    with pytest.raises(NotADecision, match="invalid decision"):
        decision_of(message(new_data_part({"decision": "perhaps"})))


def test_the_card_lists_the_skills_and_the_endpoint(agent: GraphSpec) -> None:
    assert is_exposed(agent)
    card = agent_card(agent, "http://127.0.0.1:8000/a2a/a2a-expense-agent/")
    assert (card.name, card.version) == ("a2a-expense-agent", "1.0.0")
    assert card.supported_interfaces[0].url == "http://127.0.0.1:8000/a2a/a2a-expense-agent/"
    assert [s.id for s in card.skills] == ["settle-expense"]
    assert card.capabilities.streaming


def test_a_graph_without_spec_a2a_is_not_exposed() -> None:
    assert not is_exposed(load_spec(SPECS / "summarize.yaml").spec)
