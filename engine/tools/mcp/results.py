"""MCP call results as JSON-like values; large ones stored by reference.

A result's value is its ``structured_content`` when the tool gives one;
otherwise its content blocks: the text of a single text block (parsed when it
is JSON), or a list of the blocks as dicts.

A value whose JSON is larger than the server's ``inline_limit`` is stored once
in Postgres (``plait_blobs``, content-addressed) and the run sees a small
reference instead::

    {"$ref": "plait-blob:sha256:<hex>", "media_type": "application/json",
     "size": <bytes>, "preview": "<first 200 characters>"}

Read it back with :func:`load_reference` (or ``SELECT content FROM plait_blobs
WHERE digest = 'sha256:<hex>'``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp_types import CallToolResult, TextContent

from plait.engine.errors import ToolReportedError
from plait.engine.store.blobs import get_blob, put_blob
from plait.engine.store.pool import Pool

#: The prefix of a blob reference's ``$ref``.
BLOB_SCHEME = "plait-blob:"
PREVIEW_CHARS = 200


def _text_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def result_value(result: CallToolResult) -> Any:
    """The JSON-like value of a successful result."""
    if result.structured_content is not None:
        return result.structured_content
    blocks = result.content
    if len(blocks) == 1 and isinstance(blocks[0], TextContent):
        return _text_value(blocks[0].text)
    return [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in blocks]


def raise_for_error(tool: str, result: CallToolResult) -> None:
    """Raise :class:`ToolReportedError` for an ``is_error`` result.

    The status comes from the structured result's ``status`` (or a JSON text
    block's), so the retry rules can tell a 503 from a 400.
    """
    if not result.is_error:
        return
    value = result_value(result)
    details: Mapping[str, Any] = value if isinstance(value, Mapping) else {}
    status = details.get("status")
    retry_after = details.get("retry_after")
    texts = [b.text for b in result.content if isinstance(b, TextContent)]
    message = str(details.get("message") or " ".join(texts) or "error result")
    raise ToolReportedError(
        tool,
        message[:1000],
        status_code=status if isinstance(status, int) else None,
        retry_after=float(retry_after) if isinstance(retry_after, int | float) else None,
        content=value,
    )


async def by_reference(pool: Pool | None, value: Any, inline_limit: int) -> Any:
    """``value``, or a reference to it in ``plait_blobs`` when its JSON exceeds ``inline_limit``."""
    if pool is None:
        return value
    encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    content = encoded.encode()
    size = len(content)
    if size <= inline_limit:
        return value
    digest = await put_blob(pool, content, "application/json")
    return {
        "$ref": BLOB_SCHEME + digest,
        "media_type": "application/json",
        "size": size,
        "preview": encoded[:PREVIEW_CHARS],
    }


def is_reference(value: Any) -> bool:
    """Whether ``value`` is a blob reference made by :func:`by_reference`."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("$ref"), str)
        and value["$ref"].startswith(BLOB_SCHEME)
    )


async def load_reference(pool: Pool, reference: Mapping[str, Any]) -> Any:
    """The value a blob reference points to."""
    digest = str(reference["$ref"]).removeprefix(BLOB_SCHEME)
    blob = await get_blob(pool, digest)
    if blob is None:
        raise LookupError(f"no blob {digest}")
    return json.loads(blob.content)
