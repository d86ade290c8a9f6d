/** A generated spec for layout tests: a chain of `size` nodes with switches and a loop back near the start. */
export function loopSpec(size: number): string {
  const lines = [
    "apiVersion: plait/v1",
    "kind: Graph",
    "metadata: {name: loop-30, version: '1.0.0'}",
    "spec:",
    "  state:",
    "    count: {type: integer, default: 0}",
    "  nodes:",
  ];
  for (let i = 0; i < size; i++) {
    lines.push(`    n${i}:`, "      kind: python", "      function: bench_steps:step", "      args: {n: state.count}", "      writes: {count: result}");
    if (i === 2) lines.push("      max_visits: 3");
  }
  lines.push("  edges:", "    - {from: START, to: n0}");
  for (let i = 0; i < size - 1; i++) {
    if (i % 7 === 6)
      lines.push(`    - from: n${i}`, `      switch: [{when: 'state.count > ${i}', to: n${Math.min(i + 3, size - 1)}}]`, `      default: n${i + 1}`);
    else lines.push(`    - {from: n${i}, to: n${i + 1}}`);
  }
  lines.push(`    - from: n${size - 1}`, "      route: \"state.count > 100 ? 'done' : 'again'\"", `      to: {done: END, again: n2}`);
  return lines.join("\n") + "\n";
}
