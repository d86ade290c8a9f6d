"""The OpenAI-compatible provider path, through langchain-openai, against a local server.

The server is a real HTTP server on 127.0.0.1 speaking ``/v1/chat/completions``
(plain JSON and SSE streaming): with tools offered and no tool result yet it
calls ``get_weather``; after a tool result it answers in text.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.tools import tool

from plait.engine.governance.model_access import ModelAccess
from plait.engine.models.factory import make_chat_model
from plait.engine.spec.models import ModelDef

API_KEY = "sk-local-test"
USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
ANSWER = "It is sunny in Paris."
TOOL_CALL = {"id": "call_w1", "name": "get_weather", "arguments": '{"city": "Paris"}'}


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


class _ChatCompletions(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        if self.headers.get("Authorization") != f"Bearer {API_KEY}":
            self.send_error(401)
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(body)
        wants_tool = bool(body.get("tools")) and body["messages"][-1]["role"] != "tool"
        if body.get("stream"):
            self._stream(body, wants_tool)
        else:
            self._complete(body, wants_tool)

    def _complete(self, body: dict[str, Any], wants_tool: bool) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": None if wants_tool else ANSWER}
        if wants_tool:
            message["tool_calls"] = [
                {
                    "id": TOOL_CALL["id"],
                    "type": "function",
                    "function": {"name": TOOL_CALL["name"], "arguments": TOOL_CALL["arguments"]},
                }
            ]
        self._send_json(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if wants_tool else "stop",
                    }
                ],
                "usage": USAGE,
            }
        )

    def _stream(self, body: dict[str, Any], wants_tool: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": "chatcmpl-2",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        events = [chunk({"role": "assistant", "content": ""})]
        if wants_tool:
            name, arguments = TOOL_CALL["name"], TOOL_CALL["arguments"]
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": TOOL_CALL["id"],
                                "type": "function",
                                "function": {"name": name, "arguments": arguments[:8]},
                            }
                        ]
                    }
                )
            )
            events.append(
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[8:]}}]})
            )
            events.append(chunk({}, "tool_calls"))
        else:
            events += [chunk({"content": word}) for word in ("It is ", "sunny ", "in Paris.")]
            events.append(chunk({}, "stop"))
        if body.get("stream_options", {}).get("include_usage"):
            events.append({**chunk({}), "choices": [], "usage": USAGE})
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def _send_json(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatCompletions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def model_def(base_url: str) -> ModelDef:
    _ChatCompletions.requests.clear()
    return ModelDef(
        provider="openai",
        model="test-model",
        base_url=base_url,
        api_key_env="TEST_OPENAI_KEY",
        params={"stream_usage": True, "max_retries": 0},
    )


async def test_invoke(model_def: ModelDef, tmp_path: Path) -> None:
    model = make_chat_model(model_def, base_dir=tmp_path, access=ModelAccess(API_KEY))
    reply = await model.ainvoke("weather in Paris?")
    assert reply.content == ANSWER
    assert reply.usage_metadata is not None
    usage = reply.usage_metadata
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (11, 7, 18)
    assert _ChatCompletions.requests[-1]["model"] == "test-model"


async def test_stream(model_def: ModelDef, tmp_path: Path) -> None:
    model = make_chat_model(model_def, base_dir=tmp_path, access=ModelAccess(API_KEY))
    chunks = [chunk async for chunk in model.astream("weather in Paris?")]
    assert [chunk.content for chunk in chunks if chunk.content] == ["It is ", "sunny ", "in Paris."]
    total = chunks[0]
    for chunk in chunks[1:]:
        total += chunk
    assert total.content == ANSWER
    assert total.usage_metadata is not None
    assert total.usage_metadata["total_tokens"] == 18
    assert _ChatCompletions.requests[-1]["stream"] is True


@pytest.mark.parametrize("streaming", [False, True])
async def test_tool_call_round_trip(model_def: ModelDef, tmp_path: Path, streaming: bool) -> None:
    model = make_chat_model(model_def, base_dir=tmp_path, access=ModelAccess(API_KEY)).bind_tools(
        [get_weather]
    )
    question = HumanMessage("weather in Paris?")

    if streaming:
        first: AIMessage | AIMessageChunk | None = None
        async for chunk in model.astream([question]):
            first = chunk if first is None else first + chunk
    else:
        first = await model.ainvoke([question])
    assert first is not None
    assert first.tool_calls == [
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_w1", "type": "tool_call"}
    ]
    sent_tools = _ChatCompletions.requests[-1]["tools"]
    assert [t["function"]["name"] for t in sent_tools] == ["get_weather"]

    tool_message = await get_weather.ainvoke(first.tool_calls[0])
    final = await model.ainvoke([question, first, tool_message])

    assert final.content == ANSWER
    sent = _ChatCompletions.requests[-1]["messages"]
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_w1", "content": "sunny in Paris"}
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "get_weather"
