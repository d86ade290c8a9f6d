"""A small offline knowledge base and the summary step of ``research-team.yaml``."""

from __future__ import annotations

import asyncio
from typing import Any

#: Topic -> what the "source" knows and how long it takes to answer (seconds).
#: ``quantum gravity`` stands for a source that hangs: it answers far later
#: than any reasonable per-item timeout.
CORPUS: dict[str, dict[str, Any]] = {
    "solar power": {
        "finding": "Utility-scale solar is the cheapest new electricity in most markets.",
        "sources": ["iea-2024-renewables", "irena-costs-2023"],
        "latency": 0.01,
    },
    "wind power": {
        "finding": "Offshore wind capacity factors exceed 40% at good sites.",
        "sources": ["gwec-2024"],
        "latency": 0.02,
    },
    "battery storage": {
        "finding": "Lithium-ion pack prices fell about 90% between 2010 and 2023.",
        "sources": ["bnef-battery-survey-2023"],
        "latency": 0.01,
    },
    "quantum gravity": {
        "finding": "No experimentally confirmed theory yet.",
        "sources": [],
        "latency": 30.0,
    },
}


async def lookup_topic(topic: str) -> dict[str, Any]:
    """Look ``topic`` up in the knowledge base; raises ``LookupError`` for unknown topics."""
    key = " ".join(topic.lower().split())
    entry = CORPUS.get(key)
    if entry is None:
        raise LookupError(f"no sources cover {topic!r}")
    await asyncio.sleep(entry["latency"])
    return {"topic": key, "finding": entry["finding"], "sources": list(entry["sources"])}


def summarize_findings(
    question: str, findings: list[dict[str, Any]], failures: list[Any] | None = None
) -> dict[str, Any]:
    """Combine per-topic findings into a summary that says what is missing and why."""
    failures = failures or []
    covered = [finding["topic"] for finding in findings]
    lines = [f"{finding['topic']}: {finding['finding']}" for finding in findings]
    missing = [_describe_failure(failure) for failure in failures]
    sources = sorted({source for finding in findings for source in finding["sources"]})
    text = f"{question}\n" + "\n".join(f"- {line}" for line in lines)
    if missing:
        text += "\nNot covered: " + "; ".join(missing)
    return {
        "text": text,
        "covered": covered,
        "missing": missing,
        "sources": sources,
        "complete": not failures,
    }


def _describe_failure(failure: Any) -> str:
    """``item (error)`` for a map error record, whatever keys the record carries."""
    if isinstance(failure, dict):
        item = failure.get("item", failure.get("index", "?"))
        error = failure.get("error", "failed")
        return f"{item} ({error})"
    return str(failure)
