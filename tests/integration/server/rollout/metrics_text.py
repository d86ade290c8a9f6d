"""Samples of a ``/metrics`` text, read with prometheus-client's own parser."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str, name: str, **match: str) -> list[tuple[dict[str, str], float]]:
    """Samples of ``name`` (a counter's ``_total`` included) whose labels include ``match``."""
    return [
        (dict(sample.labels), float(sample.value))
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and all(sample.labels.get(k) == v for k, v in match.items())
    ]
