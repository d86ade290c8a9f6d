"""The offline ``scripted`` provider: replays replies and tool calls written in a spec."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ToolCall,
    ToolCallChunk,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import PrivateAttr, model_validator

from plait.engine.spec.expressions import ExpressionError, compile_regex
from plait.engine.spec.models import ScriptedResponse, duration_seconds

# Rough size of a token in characters, as in OpenAI's rule of thumb.
_CHARS_PER_TOKEN = 4
# A token while streaming: a word with the whitespace after it (or leading whitespace).
_TOKEN = re.compile(r"\s+|\S+\s*")


class ScriptedChatModel(BaseChatModel):
    """A chat model that replays ``script`` deterministically.

    Reply choice: the first reply whose ``when`` regex matches the last input
    message; otherwise the i-th reply without ``when``, where i is the number of
    AI messages already in the input (so a resumed run gets the reply it would
    have got), the last one repeating past the end. The choice depends only on
    the input messages, never on earlier calls.

    Built on ``BaseChatModel`` rather than langchain-core's ``GenericFakeChatModel``:
    that one consumes an iterator (stateful, so a resumed run would get the next
    reply instead of the same one) and streams no tool calls.
    """

    script: list[ScriptedResponse]
    model_name: str = "scripted"

    _patterns: list[re.Pattern[str] | None] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _compile_patterns(self) -> ScriptedChatModel:
        if not self.script:
            raise ValueError("a scripted model needs at least one reply")
        patterns: list[re.Pattern[str] | None] = []
        for index, reply in enumerate(self.script):
            try:
                patterns.append(None if reply.when is None else compile_regex(reply.when))
            except ExpressionError as error:
                raise ValueError(
                    f"reply {index}: `when` is not a valid regex: {error.message}"
                ) from None
        self._patterns = patterns
        return self

    @property
    def _llm_type(self) -> str:
        return "plait-scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    # ------------------------------------------------------------------ choosing a reply

    def choose(self, messages: Sequence[BaseMessage]) -> int:
        """Index in ``script`` of the reply to ``messages``."""
        last = messages[-1].text if messages else ""
        for index, pattern in enumerate(self._patterns):
            if pattern is not None and pattern.search(last):
                return index
        in_order = [index for index, pattern in enumerate(self._patterns) if pattern is None]
        if not in_order:
            raise ValueError(
                "the scripted model has no reply for this input: no `when` matched "
                f"{last[:80]!r} and every reply has a `when`; add a reply without `when`"
            )
        return in_order[min(_turn(messages), len(in_order) - 1)]

    def reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The complete reply to ``messages`` (what ``invoke`` returns)."""
        index = self.choose(messages)
        response = self.script[index]
        content = _content(response)
        tool_calls = _tool_calls(response, index, _turn(messages))
        return AIMessage(
            content=content,
            tool_calls=tool_calls,
            usage_metadata=_usage(response, messages, content, tool_calls),
            response_metadata=self._metadata(tool_calls),
        )

    def latency(self, messages: Sequence[BaseMessage]) -> float:
        """Seconds the reply to ``messages`` takes (its ``latency``), as a real model would."""
        return duration_seconds(self.script[self.choose(messages)].latency)

    def _metadata(self, tool_calls: list[ToolCall]) -> dict[str, Any]:
        return {
            "model_name": self.model_name,
            "model_provider": "scripted",
            "finish_reason": "tool_calls" if tool_calls else "stop",
        }

    # ------------------------------------------------------------------ BaseChatModel

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        delay = self.latency(messages)
        if delay > 0:
            time.sleep(delay)
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # No I/O: answer inline instead of the default thread-pool hop.
        delay = self.latency(messages)
        if delay > 0:
            await asyncio.sleep(delay)
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        delay = self.latency(messages)
        if delay > 0:
            time.sleep(delay)
        yield from self._chunks(messages)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        delay = self.latency(messages)
        if delay > 0:
            await asyncio.sleep(delay)
        for chunk in self._chunks(messages):
            yield chunk

    def _chunks(self, messages: Sequence[BaseMessage]) -> Iterator[ChatGenerationChunk]:
        """The reply token by token; the last chunk carries tool calls and usage."""
        message = self.reply(messages)
        for token in _TOKEN.findall(message.text):
            yield ChatGenerationChunk(message=AIMessageChunk(content=token))
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                tool_call_chunks=[
                    ToolCallChunk(
                        name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=i
                    )
                    for i, call in enumerate(message.tool_calls)
                ],
                usage_metadata=message.usage_metadata,
                response_metadata=message.response_metadata,
                chunk_position="last",
            )
        )

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools like a real provider would; the script alone decides the calls.

        Tools are still converted, so a tool a real provider would reject fails here too.
        """
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)


def _turn(messages: Sequence[BaseMessage]) -> int:
    """How many replies the model already gave in this conversation."""
    return sum(isinstance(message, AIMessage) for message in messages)


def _content(response: ScriptedResponse) -> str:
    if response.data is not None:
        return json.dumps(response.data)
    return response.content


def _tool_calls(response: ScriptedResponse, index: int, turn: int) -> list[ToolCall]:
    # Ids derive from the turn as well as the reply, so a reply that repeats
    # past the end of the script does not reuse the ids of its earlier calls.
    return [
        ToolCall(
            name=call.name,
            args=call.args,
            id=call.id or f"call_{turn}_{index}_{position}",
            type="tool_call",
        )
        for position, call in enumerate(response.tool_calls)
    ]


def _usage(
    response: ScriptedResponse,
    messages: Sequence[BaseMessage],
    content: str,
    tool_calls: list[ToolCall],
) -> UsageMetadata:
    if response.usage is not None:
        input_tokens, output_tokens = response.usage.input_tokens, response.usage.output_tokens
    else:
        input_tokens = _estimate(sum(len(message.text) for message in messages))
        output_tokens = _estimate(
            len(content)
            + sum(len(call["name"]) + len(json.dumps(call["args"])) for call in tool_calls)
        )
    return UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )


def _estimate(characters: int) -> int:
    return -(-characters // _CHARS_PER_TOKEN)
