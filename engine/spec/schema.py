"""The JSON Schema of ``plait/v1``, generated from the pydantic models.

Editors (VS Code's YAML extension, the browser editor) validate and complete
specs with it. The committed copy lives in ``schemas/plait-v1.schema.json``;
regenerate it with ``plait schema --write`` or ``python -m plait.engine.spec.schema``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from plait.engine.spec.models import API_VERSION, GraphSpec

SCHEMA_ID = "https://plait.dev/schemas/plait-v1.schema.json"
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "plait-v1.schema.json"


def json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a spec file, keyed by YAML names (``from``, ``schema``)."""
    generated = GraphSpec.model_json_schema(by_alias=True)
    generated.pop("title", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"Plait graph spec ({API_VERSION})",
        **generated,
    }


def schema_text() -> str:
    """The schema as the committed file holds it (stable formatting, trailing newline)."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def write_schema(path: Path = SCHEMA_PATH) -> Path:
    """Write the schema to ``path`` (default: the committed copy) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(schema_text(), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> None:
    """``python -m plait.engine.spec.schema [PATH]``: regenerate the committed schema (or PATH)."""
    parser = argparse.ArgumentParser(
        prog="python -m plait.engine.spec.schema",
        description="Write the JSON Schema of plait/v1 specs (plait schema --write does the same).",
    )
    parser.add_argument(
        "path", nargs="?", type=Path, default=SCHEMA_PATH, help=f"default: {SCHEMA_PATH}"
    )
    target = write_schema(parser.parse_args(argv).path)
    print(f"wrote {target}", file=sys.stderr)


if __name__ == "__main__":
    main()
