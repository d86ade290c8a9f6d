// True once every node is measured and inside the canvas (the view re-fits after a pane opens).
() => {
  const canvas = document.querySelector('[data-testid="canvas"]');
  const nodes = [...canvas.querySelectorAll(".react-flow__node")];
  if (nodes.length === 0 || nodes.some((n) => getComputedStyle(n).visibility === "hidden")) return false;
  const f = canvas.getBoundingClientRect();
  return nodes.every((n) => {
    const r = n.getBoundingClientRect();
    return r.left >= f.left - 1 && r.right <= f.right + 1 && r.top >= f.top - 1 && r.bottom <= f.bottom + 1;
  });
};
