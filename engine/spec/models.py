"""Pydantic models of the Plait spec language, ``apiVersion: plait/v1``.

These models are the single source of truth for the spec: the loader validates
YAML against them, ``schemas/plait-v1.schema.json`` is generated from them, and
the compiler reads them. Fields documented as *CEL* hold a Common Expression
Language expression (roots ``state``, ``input``, ``result``, ``run``, and
``item`` / ``index`` inside a map); fields documented as *template* are Jinja2
rendered in a sandbox. Nothing else is interpreted.
"""

# No `from __future__ import annotations` here: pydantic would have to evaluate each of the
# models' ~300 annotations from a string when the module is imported (docs/decisions.md 85).
import re
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

API_VERSION = "plait/v1"

#: Node ids, state field names and definition names.
IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
#: A duration: seconds as a number, or a string such as ``"250ms"``, ``"30s"``, ``"5m"``, ``"2h"``.
DURATION_PATTERN = r"^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)\s*$"
#: A python ``module:function`` reference (python nodes and tools, compensations).
FUNCTION_REF_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"
#: A rate: calls per second, minute or hour, such as ``"10/s"`` or ``"600/min"``.
RATE_PATTERN = r"^\s*\d+(\.\d+)?\s*/\s*(s|sec|second|m|min|minute|h|hour)\s*$"
SEMVER_PATTERN = r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
START = "START"
END = "END"

_RATE_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0}
_RATE_UNITS |= {"h": 3600.0, "hour": 3600.0}
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}

Identifier = Annotated[str, Field(pattern=IDENTIFIER_PATTERN)]
Cel = Annotated[str, Field(min_length=1, description="A CEL expression.")]
Template = Annotated[str, Field(description="A Jinja2 template (sandboxed, strict undefined).")]
Duration = Annotated[
    float | Annotated[str, Field(pattern=DURATION_PATTERN)],
    Field(description='Seconds as a number, or a string like "250ms", "30s", "5m", "2h", "1d".'),
]


def duration_seconds(value: float | str) -> float:
    """Return a spec duration in seconds."""
    if isinstance(value, int | float):
        return float(value)
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*", value)
    if match is None:
        raise ValueError(f"not a duration: {value!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def rate_per_second(value: str) -> float:
    """Return a spec rate (``"10/s"``, ``"600/min"``, ``"100/h"``) in calls per second."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*/\s*([a-z]+)\s*", value)
    if match is None or match.group(2) not in _RATE_UNITS:
        raise ValueError(f"not a rate: {value!r}")
    return float(match.group(1)) / _RATE_UNITS[match.group(2)]


class _Model(BaseModel):
    """Base: unknown keys are errors, so typos never pass silently."""

    # defer_build: validators are built on first use, so loading a spec builds GraphSpec's
    # once instead of every model's at import (docs/decisions.md 85).
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class LiteralArgument(_Model):
    """An argument taken as written, never evaluated: ``{value: hello}``."""

    value: Any = Field(description="The value as written: a string needs no CEL quotes.")


#: A value of an argument map: a string is CEL; a number, boolean or null is
#: itself; ``{value: ...}`` is anything, as written (docs/spec-language.md).
Argument = Annotated[
    Cel | bool | int | float | LiteralArgument | None,
    Field(
        description="CEL (a string); a number, boolean or null as written; or `{value: ...}` "
        "for any value as written."
    ),
]


def literal_of(argument: Argument) -> tuple[bool, Any]:
    """``(True, value)`` for an argument given as written, ``(False, source)`` for CEL."""
    if isinstance(argument, LiteralArgument):
        return True, argument.value
    if isinstance(argument, str):
        return False, argument
    return True, argument


# --------------------------------------------------------------------------- metadata


class Metadata(_Model):
    """Identity of a graph. ``name`` and ``version`` together name an assistant."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", max_length=63)]
    version: Annotated[
        str,
        Field(
            pattern=SEMVER_PATTERN,
            description='Semantic version, quoted: "1.0.0". Required.',
        ),
    ]
    description: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)


# --------------------------------------------------------------------------- state

Reducer = Literal[
    "replace", "append", "extend", "merge", "add_messages", "sum", "max", "min", "union"
]
FieldType = Literal["string", "integer", "number", "boolean", "object", "list", "messages", "any"]


class StateField(_Model):
    """One channel of the graph state."""

    type: FieldType = "any"
    reducer: Reducer = Field(
        default="replace",
        description=(
            "How writes combine. `replace` keeps the last write and refuses two writers in "
            "one step; the others combine parallel writes."
        ),
    )
    default: Any = None
    description: str | None = None


# --------------------------------------------------------------------------- models


class ScriptedToolCall(_Model):
    """A tool call the scripted model emits."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class ScriptedUsage(_Model):
    input_tokens: Annotated[int, Field(ge=0)] = 0
    output_tokens: Annotated[int, Field(ge=0)] = 0


class ScriptedResponse(_Model):
    """One reply of the scripted model.

    Replies with ``when`` are chosen when the regular expression matches the
    last input message; the others are replayed in order, indexed by how many
    assistant messages the conversation already holds (so a resumed run gets
    the same reply it would have got).
    """

    when: str | None = Field(default=None, description="Regex matched against the last message.")
    content: str = ""
    data: dict[str, Any] | list[Any] | None = Field(
        default=None, description="Structured output returned to an llm node with a schema."
    )
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    usage: ScriptedUsage | None = Field(
        default=None, description="Token usage to report; estimated from text when absent."
    )
    latency: Duration = Field(
        default=0.0,
        description="Simulated time the reply takes (e.g. `800ms`), awaited before it starts.",
    )


class _Backoff(_Model):
    """Attempts and exponential backoff, shared by node and call retries."""

    max_attempts: Annotated[int, Field(ge=1, le=20)] = 3
    initial_interval: Duration = 0.5
    backoff: Annotated[float, Field(ge=1.0)] = 2.0
    max_interval: Duration = 30.0
    jitter: bool = True


class CallRetrySpec(_Backoff):
    """Retries of one model or tool call, by error class (docs/governance.md).

    Rate limits, 5xx answers, timeouts and network errors are retried with
    exponential backoff and jitter; validation and permission errors never are.
    """


class ModelRetrySpec(CallRetrySpec):
    """Retries of a model call, plus repairs of malformed output."""

    repair_attempts: Annotated[int, Field(ge=0, le=5)] = Field(
        default=0,
        description=(
            "How often a reply that fails an llm `schema` (or has unparsable tool-call "
            "arguments) is asked for again, quoting the error."
        ),
    )


class BreakerSpec(_Model):
    """A circuit breaker: too many failures in a window open it; calls then fail fast."""

    failure_rate: Annotated[float, Field(gt=0, le=1)] = 0.5
    window: Duration = Field(default=60.0, description="Calls older than this are forgotten.")
    min_calls: Annotated[int, Field(ge=1)] = Field(
        default=5, description="Calls in the window before the rate can open the breaker."
    )
    open_for: Duration = Field(default=30.0, description="How long it stays open before a probe.")


class CallLimitsSpec(_Model):
    """Calls in flight and calls per second of a tool or an MCP server, shared by every run
    and worker of the tenant; a call over a limit waits its turn (docs/governance.md)."""

    concurrency: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="At most this many calls at once, across all runs and workers."
    )
    rate: Annotated[str, Field(pattern=RATE_PATTERN)] | None = Field(
        default=None,
        description='At most this many calls per second, minute or hour: "10/s", "600/min", '
        '"100/h", across all runs and workers.',
    )
    burst: Annotated[int, Field(ge=1)] = Field(
        default=1,
        description="With `rate`: how many calls may start at once after a quiet spell (1: "
        "evenly spaced).",
    )
    wait: Duration = Field(
        default=30.0,
        description="How long a call waits for its turn before it fails with an error naming "
        "the limit.",
    )

    @model_validator(mode="after")
    def _limits_something(self) -> Self:
        if self.concurrency is None and self.rate is None:
            raise ValueError("`limits` needs `concurrency`, `rate` or both")
        if self.rate is not None and rate_per_second(self.rate) <= 0:
            raise ValueError(f"`rate` {self.rate!r} allows no call; write e.g. `rate: 10/s`")
        return self


class ModelPrice(_Model):
    """What a model costs, for ``spec.budgets.max_cost``: currency units per million tokens."""

    input_per_million: Annotated[float, Field(ge=0)]
    output_per_million: Annotated[float, Field(ge=0)]

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """What a call with these token counts costs."""
        return (
            input_tokens * self.input_per_million + output_tokens * self.output_per_million
        ) / 1e6


class ModelDef(_Model):
    """A chat model. ``provider: scripted`` replays replies offline."""

    provider: str = Field(
        description=(
            "`scripted` (offline), `openai`, `anthropic`, `ollama`, or any provider "
            "`init_chat_model` knows."
        )
    )
    model: str | None = Field(default=None, description="The provider's model name.")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint.")
    api_key_env: str | None = Field(
        default=None,
        description="The secret holding the API key: an environment variable for `plait run`, "
        "a secret of the run's tenant on a server (never a `PLAIT_*` setting).",
    )
    temperature: float | None = None
    max_tokens: Annotated[int, Field(gt=0)] | None = None
    params: dict[str, Any] = Field(
        default_factory=dict, description="Extra keyword arguments for the provider."
    )
    script: list[ScriptedResponse] = Field(
        default_factory=list, description="Replies of a scripted model."
    )
    fixture: str | None = Field(
        default=None,
        description="YAML or JSON file (relative to the spec) holding a list of scripted replies.",
    )
    price: ModelPrice | None = Field(
        default=None, description="Price per million tokens; needed for `budgets.max_cost`."
    )
    retry: ModelRetrySpec | None = Field(
        default=None, description="Retries of each call of this model, by error class."
    )
    breaker: BreakerSpec | None = Field(
        default=None, description="Circuit breaker of this model's endpoint (per process)."
    )


# --------------------------------------------------------------------------- tools


class Compensation(_Model):
    """How to undo a completed step when a later step fails the run (a saga).

    Exactly one of ``function`` and ``tool``. ``args`` are CEL over ``args``
    (the original call's arguments; ``{}`` for a node that is not a tool call)
    and ``result`` (its result); without ``args`` a function receives
    ``args=`` and ``result=``.
    """

    function: str | None = Field(
        default=None, pattern=FUNCTION_REF_PATTERN, description="`module:function`."
    )
    tool: Identifier | None = Field(default=None, description="A tool of `spec.tools`.")
    args: dict[str, Argument] = Field(
        default_factory=dict, description="Argument -> CEL over `args` and `result`, or a value."
    )


class PerRunValue(_Model):
    """A value of an MCP server's ``args`` or ``env`` computed for each run: ``{expr: <CEL>}``.

    The expression reads ``input`` and ``run``; each distinct set of values gets
    its own server session (docs/mcp.md).
    """

    expr: Cel = Field(
        description="CEL over `input` and `run`; it must give text, a number or a boolean."
    )


class McpServerDef(_Model):
    """An MCP server that `kind: mcp` tools call (docs/mcp.md); one session per process."""

    transport: Literal["stdio", "http"] = Field(
        description="`stdio`: start `command` and talk over its stdin/stdout; `http`: "
        "streamable HTTP at `url`."
    )
    command: str | None = Field(
        default=None,
        description="stdio: the program to start; `python` is the interpreter running Plait.",
    )
    args: list[str | PerRunValue] = Field(
        default_factory=list,
        description="stdio: its arguments, each as written, or `{expr: <CEL>}` for a value "
        "of each run (over `input` and `run`).",
    )
    env: dict[str, str | PerRunValue] = Field(
        default_factory=dict,
        description="stdio: extra environment variables, each as written, or `{expr: <CEL>}` "
        "for a value of each run (over `input` and `run`).",
    )
    cwd: str | None = Field(
        default=None,
        description="stdio: working directory, relative to the spec's folder (default: it).",
    )
    url: str | None = Field(default=None, description="http: the endpoint, e.g. `http://host/mcp`.")
    headers: dict[str, Identifier] = Field(
        default_factory=dict,
        description="http: header name -> a secret of `spec.secrets`; its value is the header's.",
    )
    secrets: list[Identifier] = Field(
        default_factory=list,
        description="stdio: secrets of `spec.secrets` given to the process as environment "
        "variables of the same name.",
    )
    inline_limit: Annotated[int, Field(ge=256)] = Field(
        default=32768,
        description="Results whose JSON is larger than this many bytes are stored by reference.",
    )
    connect_timeout: Duration = Field(default=30.0, description="Limit on starting a session.")
    limits: CallLimitsSpec | None = Field(
        default=None,
        description="Caps on the calls of all this server's tools together, shared by every "
        "run and worker of the tenant.",
    )

    @property
    def per_run(self) -> dict[str, PerRunValue]:
        """The per-run values of ``args`` and ``env`` by place (``args[2]``, ``env.X``)."""
        found = {f"args[{i}]": v for i, v in enumerate(self.args) if isinstance(v, PerRunValue)}
        found.update({f"env.{k}": v for k, v in self.env.items() if isinstance(v, PerRunValue)})
        return found

    @model_validator(mode="after")
    def _transport_fields(self) -> Self:
        if self.transport == "stdio" and (self.command is None or self.url is not None):
            raise ValueError("a `stdio` MCP server needs `command` (and no `url`)")
        if self.transport == "http" and (self.url is None or self.command is not None):
            raise ValueError("an `http` MCP server needs `url` (and no `command`)")
        return self


class ToolDef(_Model):
    """A tool a node or an agent may call: a python function or a tool of an MCP server."""

    kind: Literal["python", "mcp"] = Field(
        default="python",
        description="`python`: `function` from the spec's folder; `mcp`: `tool` of MCP `server`.",
    )
    function: str | None = Field(
        default=None, pattern=FUNCTION_REF_PATTERN, description="python: `module:function`."
    )
    server: Identifier | None = Field(default=None, description="mcp: a key of `spec.mcp_servers`.")
    tool: str | None = Field(
        default=None, description="mcp: the server's name of the tool (default: this tool's key)."
    )
    task: bool = Field(
        default=False,
        description="mcp: run each call as an MCP task (Tasks extension); the run parks until "
        "the task ends.",
    )
    idempotent: bool = Field(
        default=True,
        description="`false`: a failed call is never retried automatically (no `retry`, no "
        "node retry after the call began), and a call that began but never recorded its "
        "result is not repeated blindly: `reconcile` settles it, or a person does.",
    )
    reconcile: str | None = Field(
        default=None,
        pattern=FUNCTION_REF_PATTERN,
        description="`idempotent: false` tools: `module:function(args, key)` that finds out "
        "whether a call in doubt happened; returns `{happened: true, result: ...}` or "
        "`{happened: false}` (then the call runs).",
    )
    description: str | None = Field(
        default=None, description="Shown to models; defaults to the docstring."
    )
    parameters: dict[str, Any] | None = Field(
        default=None,
        description="JSON Schema of the arguments; inferred from the signature when absent.",
    )
    timeout: Duration | None = None
    retry: CallRetrySpec | None = Field(
        default=None, description="Retries of each call of this tool, by error class."
    )
    breaker: BreakerSpec | None = Field(
        default=None, description="Circuit breaker of this tool (per process)."
    )
    limits: CallLimitsSpec | None = Field(
        default=None,
        description="Caps on this tool's calls in flight and per second, shared by every run "
        "and worker of the tenant.",
    )
    risk: Literal["low", "medium", "high"] = Field(
        default="low",
        description="`high`: every call waits for an approval ticket (see docs/governance.md).",
    )
    compensate: Compensation | None = Field(
        default=None, description="Undoes a successful call when the run fails later."
    )
    secrets: list[Identifier] = Field(
        default_factory=list,
        description="Names from `spec.secrets` passed to the function as the `secrets` dict.",
    )

    @model_validator(mode="after")
    def _kind_fields(self) -> Self:
        if self.kind == "python" and (self.function is None or self.server is not None):
            raise ValueError("a python tool needs `function` (and no `server`)")
        if self.kind == "mcp" and (self.server is None or self.function is not None):
            raise ValueError("an mcp tool needs `server` (and no `function`)")
        if self.kind == "mcp" and (self.secrets or self.parameters is not None):
            raise ValueError("an mcp tool takes no `secrets` or `parameters` (the server has them)")
        return self


class ModelRoute(_Model):
    """Call ``model`` instead of the agent's own when ``when`` holds."""

    when: Cel = Field(
        description=(
            "CEL over `state`, `input`, `run` and `usage` (this step's model calls so far: "
            "`model_calls`, `input_tokens`, `output_tokens`, `tokens`, and `run_tokens`, the "
            "run's tokens when the spec has budgets, else the step's); true picks `model`."
        )
    )
    model: Identifier = Field(description="A name in `spec.models`: the tier to call.")


class ContextPolicy(_Model):
    """What an agent's model sees once its conversation outgrows ``max_tokens``."""

    max_tokens: Annotated[int, Field(ge=16)] = Field(
        description="Tokens (estimated, about 4 characters each) the model is sent at most."
    )
    strategy: Literal["trim", "summarize"] = Field(
        default="trim",
        description=(
            "`trim`: drop the oldest turns (the system prompt and the latest turn stay); "
            "`summarize`: replace them by a summary the `summary_model` writes."
        ),
    )
    summary_model: Identifier | None = Field(
        default=None, description="`summarize`: the model that writes it (default: the agent's)."
    )


class AgentDef(_Model):
    """A model with instructions and tools that loops until it stops calling tools."""

    model: Identifier
    system: Template | None = Field(default=None, description="System prompt template.")
    tools: list[Identifier] = Field(default_factory=list)
    max_iterations: Annotated[int, Field(ge=1, le=100)] = 10
    tool_results: Literal["plain", "data"] = Field(
        default="plain",
        description=(
            "`data`: tool results reach the model wrapped as untrusted data, and the "
            "system prompt says so."
        ),
    )
    routes: list[ModelRoute] = Field(
        default_factory=list,
        description="Model tiers by condition, checked before each call; the first true wins.",
    )
    context: ContextPolicy | None = Field(
        default=None, description="Trim or summarise the conversation past `max_tokens`."
    )


# --------------------------------------------------------------------------- nodes


class RetrySpec(_Backoff):
    """Retry policy of a node (LangGraph ``RetryPolicy``)."""


class _NodeBase(_Model):
    description: str | None = None
    writes: dict[Identifier, Cel] = Field(
        default_factory=dict,
        description="State updates: field -> CEL over `result`, `state`, `input`.",
    )
    output: Identifier | None = Field(
        default=None, description="Shorthand for `writes: {<field>: result}`."
    )
    retry: RetrySpec | None = None
    timeout: Duration | None = Field(default=None, description="Step timeout.")
    max_visits: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="Bound on how often this node runs in one run (bounds cycles)."
    )
    compensate: Compensation | None = Field(
        default=None, description="Undoes this node's work when a later step fails the run."
    )


class AgentNode(_NodeBase):
    """Runs a named agent, or an inline one, until it answers without tool calls."""

    kind: Literal["agent"]
    agent: Identifier | None = None
    model: Identifier | None = None
    system: Template | None = None
    tools: list[Identifier] = Field(default_factory=list)
    max_iterations: Annotated[int, Field(ge=1, le=100)] | None = None
    tool_results: Literal["plain", "data"] | None = Field(
        default=None, description="Overrides the named agent's `tool_results`."
    )
    prompt: Template = Field(description="The user message template.")
    messages: Identifier | None = Field(
        default=None, description="A `messages` state field that receives the conversation."
    )
    routes: list[ModelRoute] | None = Field(
        default=None, description="Overrides the named agent's `routes` (model tiers)."
    )
    context: ContextPolicy | None = Field(
        default=None, description="Overrides the named agent's `context` policy."
    )


class LlmNode(_NodeBase):
    """One model call; with ``schema`` the reply is structured data validated against it."""

    kind: Literal["llm"]
    model: Identifier
    system: Template | None = None
    prompt: Template | None = Field(
        default=None,
        description="The user message: a Jinja2 template (sandboxed, strict undefined). "
        "Without it (a chat) the conversation in `messages` is the input.",
    )
    schema_: dict[str, Any] | None = Field(
        default=None, alias="schema", description="JSON Schema of a structured reply."
    )
    messages: Identifier | None = Field(
        default=None,
        description=(
            "A `messages` state field: the model sees the conversation it holds, and the "
            "prompt (if any) and the reply are added to it."
        ),
    )
    routes: list[ModelRoute] = Field(
        default_factory=list,
        description=(
            "Model tiers by condition (CEL over `state`, `input`, `run`, `usage`), checked "
            "before the call; the first true wins, else `model`."
        ),
    )

    @model_validator(mode="after")
    def _has_input(self) -> Self:
        if self.prompt is None and self.messages is None:
            raise ValueError(
                "an `llm` node needs a `prompt`, or `messages` (a chat: the conversation "
                "is the input)"
            )
        return self


class ToolNode(_NodeBase):
    """Calls one tool with arguments computed from state."""

    kind: Literal["tool"]
    tool: Identifier
    args: dict[str, Argument] = Field(
        default_factory=dict, description="Argument -> CEL, or a value as written."
    )
    on_reject: Identifier | None = Field(
        default=None,
        description=(
            "When a person rejects this high-risk call, continue at this node instead of "
            "failing (the result is `{rejected: true, tool, comment}`)."
        ),
    )


class RouterNode(_NodeBase):
    """Computes a label; a ``route`` edge picks the next node by it."""

    kind: Literal["router"]
    label: Cel = Field(description="CEL producing the label (the node's result).")
    labels: list[str] = Field(
        default_factory=list, description="Every label it can produce; each needs a target."
    )


class MapItemNode(_Model):
    """The work done for each item of a map (``item`` and ``index`` are in scope)."""

    kind: Literal["agent", "llm", "tool", "python", "subgraph"]
    agent: Identifier | None = None
    model: Identifier | None = None
    system: Template | None = None
    prompt: Template | None = None
    tools: list[Identifier] = Field(default_factory=list)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    tool: Identifier | None = None
    args: dict[str, Argument] = Field(default_factory=dict)
    function: str | None = Field(default=None, pattern=FUNCTION_REF_PATTERN)
    ref: str | None = None
    input: dict[str, Cel] = Field(default_factory=dict)
    result: Cel | None = Field(
        default=None, description="CEL over `result`, `item`: what the item contributes."
    )


class MapNode(_NodeBase):
    """Scatter-gather over a list: one task per item, then a join."""

    kind: Literal["map"]
    items: Cel = Field(description="CEL producing the list to map over.")
    do: MapItemNode
    concurrency: Annotated[int, Field(ge=1, le=1000)] = 8
    item_timeout: Duration | None = None
    min_success: Annotated[int, Field(ge=0)] | None = Field(
        default=None, description="Fewest successful items for the map to succeed (default: all)."
    )
    errors: Identifier | None = Field(
        default=None, description="State field that receives the failed items."
    )


class ParallelNode(_NodeBase):
    """Runs ``branches`` at once, then ``join`` after all of them finish."""

    kind: Literal["parallel"]
    branches: Annotated[list[Identifier], Field(min_length=2)]
    join: Identifier


class SubgraphNode(_NodeBase):
    """Runs another spec, pinned to a version, as one step."""

    kind: Literal["subgraph"]
    ref: str = Field(
        pattern=r"^[a-z0-9][a-z0-9-]*@\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$",
        description="`name@version` of another spec.",
    )
    input: dict[Identifier, Cel] = Field(
        default_factory=dict, description="Child input field -> CEL over the parent state."
    )


class ApprovalNode(_NodeBase):
    """Parks the run until a person approves, rejects or edits the action."""

    kind: Literal["approval"]
    action: str = Field(description="What will happen if approved, e.g. `issue_refund`.")
    arguments: Cel | None = Field(default=None, description="CEL producing the arguments shown.")
    reason: Template | None = None
    expires_in: Duration | None = None
    on_expire: Literal["approve", "reject", "fail"] = "reject"


class WaitNode(_NodeBase):
    """Parks the run until a time, holding no worker; a durable timer resumes it.

    Exactly one of ``for`` (a duration from when the node was first reached)
    and ``until`` (CEL giving an ISO 8601 time) says when. A person may resume
    it earlier with a value (``command.resume``).
    """

    kind: Literal["wait"]
    for_: Duration | None = Field(
        default=None,
        alias="for",
        description="How long to wait from when the node is first reached, e.g. `10m`.",
    )
    until: Cel | None = Field(
        default=None,
        description=(
            "CEL producing the time to wait until: an ISO 8601 string with a timezone "
            "(e.g. `state.remind_at`), or a CEL timestamp."
        ),
    )

    @model_validator(mode="after")
    def _one_time(self) -> Self:
        if (self.for_ is None) == (self.until is None):
            raise ValueError(
                "a `wait` node needs exactly one of `for` (a duration such as `10m`) "
                "and `until` (CEL giving an ISO 8601 time)"
            )
        return self


class PythonNode(_NodeBase):
    """Calls ``module:function`` with the state; its return value is the result."""

    kind: Literal["python"]
    function: str = Field(pattern=FUNCTION_REF_PATTERN)
    args: dict[str, Argument] = Field(
        default_factory=dict,
        description="Keyword arguments -> CEL, or a value as written; default: the whole state.",
    )


class A2aNode(_NodeBase):
    """Sends a message to a remote A2A agent and waits for its task (docs/a2a.md).

    The remote's ``input-required`` turns become approvals; a decision is sent
    back to the remote task as the follow-up message.
    """

    kind: Literal["a2a"]
    url: Template | None = Field(
        default=None,
        description="Base URL of the agent (its card is `<url>/.well-known/agent-card.json`).",
    )
    card: Template | None = Field(
        default=None, description="URL of the agent's card, instead of `url`."
    )
    message: Template = Field(description="The text of the message sent to the agent.")
    data: Cel | None = Field(
        default=None, description="CEL producing JSON sent with the message as a data part."
    )
    headers: dict[str, Identifier] = Field(
        default_factory=dict,
        description="HTTP header -> name of a secret in `spec.secrets` whose value it sends.",
    )
    request_timeout: Duration | None = Field(
        default=None, description="Timeout of each HTTP request to the agent (default 60s)."
    )


Node = Annotated[
    AgentNode
    | LlmNode
    | ToolNode
    | RouterNode
    | MapNode
    | ParallelNode
    | SubgraphNode
    | ApprovalNode
    | WaitNode
    | PythonNode
    | A2aNode,
    Field(discriminator="kind"),
]

NODE_KINDS = (
    "agent",
    "llm",
    "tool",
    "router",
    "map",
    "parallel",
    "subgraph",
    "approval",
    "wait",
    "python",
    "a2a",
)

# --------------------------------------------------------------------------- edges


class StaticEdge(_Model):
    """``from`` always continues to ``to``."""

    from_: str = Field(alias="from")
    to: str


class SwitchCase(_Model):
    when: Cel
    to: str


class SwitchEdge(_Model):
    """The first case whose ``when`` holds wins; otherwise ``default``."""

    from_: str = Field(alias="from")
    switch: Annotated[list[SwitchCase], Field(min_length=1)]
    default: str


class RouteEdge(_Model):
    """Picks the target by the label ``route`` computes from the node's ``result``."""

    from_: str = Field(alias="from")
    route: Cel = Field(description="CEL over `result` and `state` giving the label.")
    to: dict[str, str]
    default: str | None = None


def _edge_form(value: Any) -> str:
    """Pick the edge form by its keys, so errors speak of one form, not all three."""
    if isinstance(value, dict):
        if "switch" in value:
            return "switch"
        if "route" in value:
            return "route"
        return "static"
    if isinstance(value, SwitchEdge):
        return "switch"
    if isinstance(value, RouteEdge):
        return "route"
    return "static"


Edge = Annotated[
    Annotated[StaticEdge, Tag("static")]
    | Annotated[SwitchEdge, Tag("switch")]
    | Annotated[RouteEdge, Tag("route")],
    Discriminator(_edge_form),
]

# --------------------------------------------------------------------------- examples


class Decision(_Model):
    """A person's answer to an approval."""

    decision: Literal["approve", "reject", "edit"]
    arguments: dict[str, Any] | None = None
    comment: str | None = None


class ScriptOverride(_Model):
    """Scripted replies a test gives a model instead of the spec's (``script`` or ``fixture``)."""

    script: list[ScriptedResponse] = Field(default_factory=list)
    fixture: str | None = Field(
        default=None, description="YAML or JSON file (relative to the spec) of scripted replies."
    )


class Example(_Model):
    """A named input, with the approval decisions to give, in order.

    With ``expect`` it is also a test that ``plait test`` runs (docs/testing.md).
    """

    name: Identifier
    description: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    decisions: list[Decision] = Field(default_factory=list)
    models: dict[Identifier, ScriptOverride] = Field(
        default_factory=dict,
        description="Replies of these models for this example, instead of the spec's script "
        "(the model becomes `scripted`).",
    )
    expect: list[Cel] = Field(
        default_factory=list,
        description="Assertions (CEL) over `outcome`, `state`, `output`, `steps`, `usage` and "
        "`error` that `plait test` checks after the run.",
    )


# --------------------------------------------------------------------------- governance


class LimitsSpec(_Model):
    """Guards against runaway runs (docs/governance.md)."""

    max_identical_tool_calls: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description=(
            "How often one run may call the same tool with the same arguments; one more "
            "call fails the run (loop detection)."
        ),
    )
    parallel_tool_calls: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description=(
            "How many tool calls of one model reply an agent runs at once (default: all); "
            "the others wait for a slot."
        ),
    )


class BudgetSpec(_Model):
    """Limits of one run, checked before every step and every model call (docs/governance.md)."""

    max_steps: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="Node steps one run may take."
    )
    max_tokens: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="Input plus output tokens of every model call."
    )
    max_wall_time: Duration | None = Field(
        default=None, description="Time since the run's first step."
    )
    max_cost: Annotated[float, Field(gt=0)] | None = Field(
        default=None, description="Cost from the models' `price` (needs a price on each model)."
    )
    on_exceed: Literal["fail", "fallback", "return", "approval"] = Field(
        default="fail",
        description=(
            "`fail` the run; switch the remaining model calls to `fallback_model`; `return` "
            "what is known so far; or ask a person through an `approval`."
        ),
    )
    fallback_model: Identifier | None = Field(
        default=None, description="The model used after the budget is exceeded (`fallback`)."
    )


class QueueSpec(_Model):
    """How a server run of this graph waits in the queue (docs/operations.md); a run-creating
    request's ``priority`` / ``expires_at`` / ``expires_in`` win over these."""

    priority: Annotated[int, Field(ge=0, le=9)] = Field(
        default=5,
        description=(
            "0 (lowest) to 9 (highest): which of a tenant's queued runs a worker takes first "
            "(within the tenant's fair share; a waiting run gains a level per aging interval)."
        ),
    )
    expires_in: Duration | None = Field(
        default=None,
        description=(
            "A run not started this long after it was queued ends `expired` and never runs "
            '(e.g. "10m"); default: it waits as long as it takes.'
        ),
    )


# --------------------------------------------------------------------------- a2a


class AuditSpec(_Model):
    """What the run's audit trail records beyond tool calls, decisions and refusals."""

    model_calls: bool = Field(
        default=False,
        description=(
            "Record every model call: the messages the model saw and its reply (text, tool "
            "calls, usage), with the run's secrets masked as `[redacted:NAME]`. Opt-in: "
            "prompts and replies may hold personal data."
        ),
    )


class A2aSkill(_Model):
    """One skill listed on the graph's A2A Agent Card."""

    id: Annotated[str, Field(min_length=1)]
    name: str
    description: str
    tags: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)


class A2aExposure(_Model):
    """How the graph is served as an A2A agent at ``/a2a/<name>/``."""

    expose: bool = Field(default=True, description="Serve the graph over A2A.")
    description: str | None = Field(
        default=None, description="The card's description (default: `metadata.description`)."
    )
    skills: list[A2aSkill] = Field(
        default_factory=list, description="Skills on the card (default: one for the graph)."
    )
    text_input: Identifier | None = Field(
        default=None,
        description=(
            "State field a message's text fills (default: the first input field); a data "
            "part that is an object gives input fields by name."
        ),
    )


# --------------------------------------------------------------------------- migrations

#: One version, or comparators joined by spaces: ``"1.0.0"``, ``">=1.0.0 <1.1.0"``.
VERSION_RANGE_PATTERN = (
    r"^\s*(?:(?:>=|<=|>|<|=)?\s*\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?\s*)+$"
)


class Migration(_Model):
    """How a thread started on an earlier version continues on this one (docs/spec-language.md).

    A field of this version's state keeps its value when the old state has a
    field of the same name (unless dropped), takes the value of its ``state``
    expression when it has one, and starts from its default otherwise.
    """

    from_: Annotated[str, Field(pattern=VERSION_RANGE_PATTERN)] = Field(
        alias="from",
        description='The earlier versions it applies to: one (`"1.0.0"`) or a range of '
        'comparators (`">=1.0.0 <1.1.0"`).',
    )
    state: dict[Identifier, Cel] = Field(
        default_factory=dict,
        description="Fields of this version's state computed from the old state: CEL over "
        "`state` (the old version's fields), e.g. `client: state.customer`.",
    )
    drop: list[Identifier] = Field(
        default_factory=list,
        description="Old fields whose values are not kept: a field of the same name here "
        "starts from its default.",
    )
    nodes: dict[Identifier, Identifier] = Field(
        default_factory=dict,
        description="Renamed nodes, old id to new id: a thread parked on the old node "
        "resumes on the new one.",
    )


# --------------------------------------------------------------------------- evaluation


class LlmGrader(_Model):
    """A model that scores a finished run: it replies ``{"score": 0..1, "reason": "..."}``."""

    model: Identifier = Field(description="The model that grades: a name in `spec.models`.")
    prompt: Template = Field(
        description=(
            "What the model is asked: a Jinja2 template over `input`, `output`, `steps` and "
            "`run` (the run's trajectory, as `GET .../trajectory` returns it). The model must "
            'reply with JSON `{"score": <number 0..1>, "reason": "<why>"}`.'
        )
    )
    system: Template | None = Field(default=None, description="A system message (template).")


class GraderDef(_Model):
    """One grader: a python function or a model (exactly one of the two)."""

    python: str | None = Field(
        default=None,
        pattern=FUNCTION_REF_PATTERN,
        description=(
            "`module:function` called with the run's trajectory (a dict); it returns a number "
            "0..1, or `{score, reason}`. Sync functions run in a thread."
        ),
    )
    llm: LlmGrader | None = Field(default=None, description="A model that grades the run.")

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        if (self.python is None) == (self.llm is None):
            raise ValueError(
                "a grader is either `python: module:function` or `llm: {model, prompt}`, "
                "not both and not neither"
            )
        return self


#: The longest a grader may take on one run (``evaluation.timeout``).
MAX_GRADER_SECONDS = 600.0


class EvaluationSpec(_Model):
    """Graders run on a sample of finished server runs, off the run's path (docs/evaluation.md)."""

    sample: Annotated[float, Field(ge=0.0, le=1.0)] = Field(
        default=1.0,
        description=(
            "Share of finished runs graded, 0..1; chosen by a hash of the run id, so the same "
            "run is always in or out."
        ),
    )
    timeout: Duration = Field(
        default=60.0, description="Time limit of one grader on one run; past it the score fails."
    )
    graders: Annotated[dict[Identifier, GraderDef], Field(min_length=1)] = Field(
        description="Graders by name; each scores every sampled run once."
    )

    @field_validator("timeout")
    @classmethod
    def _bounded(cls, value: float | str) -> float | str:
        if not 0 < duration_seconds(value) <= MAX_GRADER_SECONDS:
            raise ValueError(
                f"a grader's timeout is more than 0 and at most {MAX_GRADER_SECONDS:g}s (10m)"
            )
        return value


# --------------------------------------------------------------------------- graph


class GraphBody(_Model):
    """The ``spec`` section of a graph."""

    state: dict[Identifier, StateField] = Field(default_factory=dict)
    input: list[Identifier] | None = Field(
        default=None, description="State fields a run accepts as input (default: all)."
    )
    output: list[Identifier] | None = Field(
        default=None, description="State fields a run returns (default: all)."
    )
    models: dict[Identifier, ModelDef] = Field(default_factory=dict)
    tools: dict[Identifier, ToolDef] = Field(default_factory=dict)
    mcp_servers: dict[Identifier, McpServerDef] = Field(
        default_factory=dict, description="MCP servers that `kind: mcp` tools call."
    )
    agents: dict[Identifier, AgentDef] = Field(default_factory=dict)
    nodes: Annotated[dict[Identifier, Node], Field(min_length=1)]
    edges: list[Edge] = Field(default_factory=list)
    examples: list[Example] = Field(default_factory=list)
    max_steps: Annotated[int, Field(ge=1, le=100_000)] = Field(
        default=200, description="LangGraph recursion limit for one run."
    )
    timeout: Duration | None = Field(default=None, description="Wall-clock limit of one run.")
    max_attempts: Annotated[int, Field(ge=1, le=100)] | None = Field(
        default=None,
        description=(
            "Attempts of one server run that may lose their worker in a row (it crashed, was "
            "killed or cut off before the run finished another step) before the run is "
            "dead-lettered; default: the server's `--max-attempts` (3). Attempts handed back "
            "on shutdown do not count."
        ),
    )
    budgets: BudgetSpec | None = Field(
        default=None, description="Per-run limits on steps, tokens, time and cost."
    )
    queue: QueueSpec | None = Field(
        default=None, description="A server run's default priority and deadline in the queue."
    )
    limits: LimitsSpec | None = Field(
        default=None, description="Loop detection and parallel tool calls."
    )
    a2a: A2aExposure | None = Field(
        default=None, description="Serve this graph as an A2A agent (docs/a2a.md)."
    )
    audit: AuditSpec | None = Field(
        default=None, description="Opt-in audit of model calls (docs/governance.md)."
    )
    migrations: list[Migration] = Field(
        default_factory=list,
        description=(
            "How threads started on earlier versions move to this one (`plait upgrade`, "
            "`POST /threads/{id}/upgrade`); the first entry whose `from` matches applies."
        ),
    )
    evaluation: EvaluationSpec | None = Field(
        default=None,
        description="Graders that score a sample of finished runs (docs/evaluation.md).",
    )
    secrets: list[Identifier] = Field(
        default_factory=list,
        description=(
            "Secret names: the environment or `PLAIT_SECRETS_FILE` for `plait run`, the run's "
            "tenant's secrets on a server; never a `PLAIT_*` setting. Only what lists them "
            "receives them."
        ),
    )

    @property
    def input_fields(self) -> list[str]:
        """The fields a run accepts as input: ``input``, or every state field."""
        return list(self.input) if self.input is not None else list(self.state)

    @property
    def output_fields(self) -> list[str]:
        """The fields a run returns: ``output``, or every state field."""
        return list(self.output) if self.output is not None else list(self.state)

    def agent_tools(self, agent: str | None, tools: list[str]) -> list[str]:
        """The tools an agent node (or a map's agent item) offers its model: its own
        ``tools`` when it lists any, else those of the agent it names."""
        named = self.agents.get(agent) if agent is not None else None
        return tools or (named.tools if named is not None else [])

    def high_risk(self, tools: list[str]) -> list[str]:
        """Those of ``tools`` defined with ``risk: high`` (each call asks for approval)."""
        return [name for name in tools if (tool := self.tools.get(name)) and tool.risk == "high"]

    @field_validator("nodes")
    @classmethod
    def _no_reserved_node_ids(cls, nodes: dict[str, Any]) -> dict[str, Any]:
        for name in nodes:
            if name in (START, END) or name.startswith("__"):
                raise ValueError(f"node id {name!r} is reserved; pick another name")
        return nodes


class GraphSpec(_Model):
    """A whole spec file."""

    api_version: Literal["plait/v1"] = Field(alias="apiVersion")
    kind: Literal["Graph"]
    metadata: Metadata
    spec: GraphBody
