// What test_run_layout.py checks, measured in the page (screen pixels): node boxes that
// intersect, edges drawn through a card other than their own ends (points sampled along
// each path), nodes outside the canvas, and what the minimap covers when it is shown.
() => {
  const canvas = document.querySelector('[data-testid="canvas"]');
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return { l: r.left, t: r.top, r: r.right, b: r.bottom };
  };
  const hit = (a, b) => a.l < b.r - 1 && b.l < a.r - 1 && a.t < b.b - 1 && b.t < a.b - 1;
  const nodes = [...canvas.querySelectorAll(".react-flow__node")].map((el) => ({ id: el.dataset.id, ...box(el) }));
  const overlaps = [];
  for (let i = 0; i < nodes.length; i++)
    for (let j = i + 1; j < nodes.length; j++) if (hit(nodes[i], nodes[j])) overlaps.push(`${nodes[i].id} x ${nodes[j].id}`);
  const crossings = [];
  let edges = 0;
  for (const edge of canvas.querySelectorAll(".react-flow__edge")) {
    // React Flow labels each edge "Edge from <source> to <target>": its own two ends.
    const [, source, target] = /^Edge from (.+) to (.+)$/.exec(edge.getAttribute("aria-label") || "") || [];
    const path = edge.querySelector("path.react-flow__edge-path");
    if (!path) continue;
    edges += 1;
    const matrix = path.getScreenCTM();
    const length = path.getTotalLength();
    const crossed = new Set();
    for (let s = 0; s <= length; s += 3) {
      const at = path.getPointAtLength(s);
      const p = new DOMPoint(at.x, at.y).matrixTransform(matrix);
      for (const n of nodes) if (n.id !== source && n.id !== target && p.x > n.l + 1 && p.x < n.r - 1 && p.y > n.t + 1 && p.y < n.b - 1) crossed.add(n.id);
    }
    for (const id of crossed) crossings.push(`${source}->${target} through ${id}`);
  }
  const frame = box(canvas);
  const outside = nodes.filter((n) => n.l < frame.l - 1 || n.r > frame.r + 1 || n.t < frame.t - 1 || n.b > frame.b + 1).map((n) => n.id);
  const mini = canvas.querySelector(".react-flow__minimap");
  const miniShown = !!mini && getComputedStyle(mini).visibility !== "hidden";
  const guarded = [...canvas.querySelectorAll(".react-flow__node, .react-flow__node-toolbar, .react-flow__controls")];
  const covered = miniShown ? guarded.filter((el) => hit(box(mini), box(el))).map((el) => el.dataset.id || el.className) : [];
  const ids = Object.fromEntries(nodes.map((n) => [n.id, n]));
  return { count: nodes.length, edges, overlaps, crossings, outside, covered, miniShown, canvasWidth: frame.r - frame.l, ids };
};
