// What test_run_layout.py checks of a waiting node's approval card, measured in the page
// (screen pixels) once the card and the view have stopped moving (the card's pan, or its
// zoom, ends): the edges' labels and the graph's other nodes the card lies on, and where
// it leaves the canvas, its node's sides or clear space to the minimap and controls.
async () => {
  const anchor = () => document.querySelector('[data-testid="approval-anchor"]');
  const viewport = () => document.querySelector(".react-flow__viewport");
  const sample = () => {
    const a = anchor();
    const r = a && a.getBoundingClientRect();
    return r ? `${r.left},${r.top},${r.width},${r.height} ${viewport()?.style.transform}` : "";
  };
  // Still for half a second (at most 8 s of waiting).
  const started = performance.now();
  let last = sample();
  let since = performance.now();
  while (performance.now() - started < 8000) {
    await new Promise((done) => requestAnimationFrame(done));
    const now = sample();
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (now && performance.now() - since >= 500) break;
  }
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return { l: r.left, t: r.top, r: r.right, b: r.bottom };
  };
  const hit = (a, b) => a.l < b.r - 1 && b.l < a.r - 1 && a.t < b.b - 1 && b.t < a.b - 1;
  const a = anchor();
  if (!a) return null;
  const canvas = document.querySelector('[data-testid="canvas"]');
  const card = box(a);
  const own = a.querySelector('[data-testid="approval-card"]').dataset.node;
  const node = box(canvas.querySelector(`.react-flow__node[data-id="${CSS.escape(own)}"]`));
  const labels = [...canvas.querySelectorAll(".react-flow__edge-textwrapper")].filter((el) => hit(card, box(el))).map((el) => el.textContent);
  const nodes = [...canvas.querySelectorAll(".react-flow__node")].filter((el) => el.dataset.id !== own && hit(card, box(el))).map((el) => el.dataset.id);
  const panels = [...canvas.querySelectorAll(".react-flow__panel")].filter((el) => hit(card, box(el))).map((el) => el.className);
  const frame = box(canvas);
  const inside = card.l >= frame.l - 0.5 && card.r <= frame.r + 0.5 && card.t >= frame.t - 0.5 && card.b <= frame.b + 0.5;
  // Beside its node: the card's near edge within a few pixels of one of the node's sides.
  const gaps = [card.t - node.b, node.t - card.b, card.l - node.r, node.l - card.r];
  const beside = gaps.some((gap) => gap >= 0 && gap <= 16);
  return { side: a.dataset.side, labels, nodes, panels, inside, beside, card, node, canvas: frame };
};
