// What test_run_layout.py checks of a waiting node's approval card, measured in the page
// (screen pixels; once approval_card_still.js says it stands still): the edges' labels and
// the graph's other nodes the card lies on, and where it leaves the canvas, its node's
// sides or clear space to the minimap and controls.
() => {
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return { l: r.left, t: r.top, r: r.right, b: r.bottom };
  };
  const hit = (a, b) => a.l < b.r - 1 && b.l < a.r - 1 && a.t < b.b - 1 && b.t < a.b - 1;
  const a = document.querySelector('[data-testid="approval-anchor"]');
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
