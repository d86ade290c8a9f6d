"""Agent Spec documents built with pyagentspec's own classes, as another tool would write them."""

from __future__ import annotations

from pyagentspec.agent import Agent
from pyagentspec.flows.edges import ControlFlowEdge, DataFlowEdge
from pyagentspec.flows.flow import Flow
from pyagentspec.flows.node import Node
from pyagentspec.flows.nodes import AgentNode, BranchingNode, EndNode, LlmNode, StartNode
from pyagentspec.llms import OpenAiConfig
from pyagentspec.property import StringProperty


def support_flow() -> Flow:
    """A support desk: classify a question, answer billing ones with an LLM, others with an
    agent."""
    llm = OpenAiConfig(name="gpt", model_id="gpt-4o-mini")
    question = StringProperty(title="question")
    category = StringProperty(title="category")
    answer = StringProperty(title="answer")
    start = StartNode(name="start", inputs=[question])
    classify = LlmNode(
        name="classify",
        llm_config=llm,
        prompt_template="Classify as billing or other: {{question}}",
        outputs=[category],
    )
    route = BranchingNode(name="route", mapping={"billing": "billing"}, inputs=[category])
    billing = LlmNode(
        name="billing answer",
        llm_config=llm,
        prompt_template="Answer this billing question: {{question}}",
        outputs=[answer],
    )
    helper = AgentNode(
        name="helper",
        agent=Agent(
            name="helper",
            llm_config=llm,
            system_prompt="You help customers who ask: {{question}}",
            outputs=[answer],
        ),
    )
    end = EndNode(name="end", outputs=[answer])

    def data(source: Node, output: str, target: Node, input_: str) -> DataFlowEdge:
        return DataFlowEdge(
            name=f"{source.name}-{target.name}-{input_}",
            source_node=source,
            source_output=output,
            destination_node=target,
            destination_input=input_,
        )

    return Flow(
        name="Support desk",
        start_node=start,
        nodes=[start, classify, route, billing, helper, end],
        control_flow_connections=[
            ControlFlowEdge(name="a", from_node=start, to_node=classify),
            ControlFlowEdge(name="b", from_node=classify, to_node=route),
            ControlFlowEdge(name="c", from_node=route, from_branch="billing", to_node=billing),
            ControlFlowEdge(name="d", from_node=route, from_branch="default", to_node=helper),
            ControlFlowEdge(name="e", from_node=billing, to_node=end),
            ControlFlowEdge(name="f", from_node=helper, to_node=end),
        ],
        data_flow_connections=[
            data(start, "question", classify, "question"),
            data(start, "question", billing, "question"),
            data(start, "question", helper, "question"),
            data(classify, "category", route, "category"),
            data(billing, "answer", end, "answer"),
            data(helper, "answer", end, "answer"),
        ],
    )
