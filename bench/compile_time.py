"""Time to parse, lint and compile a 500-node spec (goal: <= 200 ms in total).

The generated spec is a chain of nodes: mostly ``python`` nodes with CEL
arguments and writes, every 10th an ``llm`` node with a Jinja2 prompt on a
scripted model, and every 25th node leaves through a ``switch`` edge. Every
repetition generates the spec with fresh constants, so no CEL, template or
compile cache is warm; the first repetition (cold imports aside) is reported
separately from the median of the others.

    .venv/bin/python bench/compile_time.py [--nodes 500] [--repeats 7]

Writes its figures into bench/README.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _report import machine, median, write_section

from plait.engine.compiler import compile_spec
from plait.engine.spec.lint import lint
from plait.engine.spec.loader import parse_spec

PHASES = ("parse", "lint", "compile")


def spec_text(nodes: int, salt: int) -> str:
    """A valid spec of ``nodes`` nodes; ``salt`` makes every expression new."""
    lines = [
        "apiVersion: plait/v1",
        "kind: Graph",
        f"metadata: {{name: big-{salt}, version: '1.0.0'}}",
        "spec:",
        "  state:",
        "    count: {type: integer, default: 0}",
        "    notes: {type: list, reducer: append}",
        "    text: {type: string, default: ''}",
        "  models:",
        "    writer:",
        "      provider: scripted",
        "      script: [{content: ok}]",
        "  nodes:",
    ]
    for i in range(nodes):
        lines.append(f"    n{i}:")
        if i % 10 == 9:
            lines += [
                "      kind: llm",
                "      model: writer",
                f'      prompt: "Step {i}.{salt}: {{{{ state.text }}}} ({{{{ state.count }}}})"',
                "      output: text",
            ]
        else:
            lines += [
                "      kind: python",
                "      function: bench_steps:step",
                f"      args: {{n: state.count + {salt}}}",
                "      writes:",
                f"        count: result - {salt}",
                f"        notes: \"'n{i}-' + string(result)\"",
            ]
    lines.append("  edges:")
    lines.append("    - {from: START, to: n0}")
    for i in range(nodes):
        following = f"n{i + 1}" if i + 1 < nodes else "END"
        if i % 25 == 24 and following != "END":
            lines += [
                f"    - from: n{i}",
                f"      switch: [{{when: 'state.count > {10_000 + salt}', to: END}}]",
                f"      default: {following}",
            ]
        else:
            lines.append(f"    - {{from: n{i}, to: {following}}}")
    return "\n".join(lines) + "\n"


def measure(nodes: int, salt: int) -> dict[str, float]:
    """Milliseconds of each phase for one freshly generated spec."""
    text = spec_text(nodes, salt)
    path = Path(__file__).with_name("big.yaml")
    times: dict[str, float] = {}

    start = time.perf_counter()
    loaded = parse_spec(text, "big.yaml", path)
    times["parse"] = (time.perf_counter() - start) * 1000

    start = time.perf_counter()
    issues = lint(loaded)
    times["lint"] = (time.perf_counter() - start) * 1000
    errors = [issue for issue in issues if issue.severity == "error"]
    if errors:
        raise SystemExit("the generated spec is invalid:\n" + errors[0].format())

    start = time.perf_counter()
    compile_spec(loaded)
    times["compile"] = (time.perf_counter() - start) * 1000
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()

    runs = [measure(args.nodes, salt) for salt in range(1, args.repeats + 1)]
    first, rest = runs[0], runs[1:] or runs
    size = len(spec_text(args.nodes, 1).encode())

    rows = [
        "| phase | first run (ms) | median of the rest (ms) |",
        "|---|---:|---:|",
    ]
    for phase in PHASES:
        rows.append(f"| {phase} | {first[phase]:.1f} | {median([r[phase] for r in rest]):.1f} |")
    total_first = sum(first.values())
    total = median([sum(r.values()) for r in rest])
    rows.append(f"| **total** | **{total_first:.1f}** | **{total:.1f}** |")
    verdict = "meets" if total <= 200 else "misses"
    body = f"""
Measured {machine()}.

Method: `bench/compile_time.py --nodes {args.nodes} --repeats {args.repeats}`: a generated
{args.nodes}-node spec ({size // 1024} KiB of YAML: python nodes with CEL args and writes,
an llm node with a Jinja2 prompt every 10th, a switch edge every 25th), timed per phase:
`parse_spec` (YAML with positions + schema), `lint`, `compile_spec`. Each repetition uses
new constants in every expression, so no cache is warm.

{chr(10).join(rows)}

Median total {total:.1f} ms: {verdict} the goal (<= 200 ms).
"""
    print(body)
    if not args.no_readme:
        write_section("compile", body)


if __name__ == "__main__":
    main()
