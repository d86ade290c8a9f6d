"""What an agent's model is sent once its conversation outgrows the agent's ``context``.

``trim`` drops the oldest turns: the system prompt stays, and what is kept
starts at a person's message, so no tool result arrives without the call it
answers (langchain-core's ``trim_messages``, with its approximate token count:
about four characters a token, no tokenizer to download). ``summarize`` asks a
model to summarise what ``trim`` would drop and adds the summary to the system
prompt. Either way only what the model is sent changes: the conversation the
state keeps is whole.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, trim_messages
from langchain_core.messages.utils import count_tokens_approximately

from plait.engine.spec.models import ContextPolicy

#: Writes a summary of messages (a model call, counted and audited like the others).
Summarize = Callable[[Sequence[BaseMessage]], Awaitable[str]]

SUMMARY_HEADING = "Summary of the earlier conversation:"


async def fit(
    policy: ContextPolicy,
    head: list[BaseMessage],
    conversation: list[BaseMessage],
    summarize: Summarize,
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """``(head, conversation)`` within ``policy.max_tokens``; unchanged when they fit.

    ``head`` is the system prompt (if any), which a summary joins; the latest
    person's message and what follows it are always kept.
    """
    room = policy.max_tokens - count_tokens_approximately(head)
    if count_tokens_approximately(conversation) <= room:
        return head, conversation
    kept = trim_messages(
        conversation,
        max_tokens=max(room, 0),
        token_counter=count_tokens_approximately,
        strategy="last",
        start_on="human",
    )
    if not kept:
        # Even the latest turn is over: the model still needs the task.
        last = max(i for i, m in enumerate(conversation) if isinstance(m, HumanMessage))
        kept = conversation[last:]
    dropped = conversation[: len(conversation) - len(kept)]
    if policy.strategy == "trim" or not dropped:
        return head, kept
    summary = f"{SUMMARY_HEADING}\n{await summarize(dropped)}"
    if head and isinstance(head[0], SystemMessage):
        return [SystemMessage(f"{head[0].text}\n\n{summary}"), *head[1:]], kept
    return [SystemMessage(summary), *head], kept


def transcript(messages: Sequence[BaseMessage]) -> str:
    """Messages as plain text for a summary: one ``role: text`` line each, tool calls named."""
    lines = []
    for message in messages:
        calls = getattr(message, "tool_calls", None) or []
        named = f" (calls {', '.join(call['name'] for call in calls)})" if calls else ""
        lines.append(f"{message.type}{named}: {message.text}")
    return "\n".join(lines)
