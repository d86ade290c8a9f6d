// Records, every animation frame, where the waiting node's approval card is (its own box, which
// may overflow its anchor), its side and alignment, the canvas view, and whether the card is in
// sight: window.__cardMoves holds each change as [ms, view transform, "left,top", "side/align",
// in sight]. In sight: wholly inside the canvas (and the window), and under none of what covers
// the canvas (its panels, the panes beside it, panes marked as over it). Its size is left out:
// the card grows as its form opens and as the person types, and that is no move.
() => {
  const moves = (window.__cardMoves = []);
  const slack = 0.5;
  const inSight = (box) => {
    const canvas = document.querySelector(".react-flow");
    const view = canvas.getBoundingClientRect();
    const inside =
      box.left >= view.left - slack &&
      box.top >= view.top - slack &&
      box.right <= Math.min(view.right, window.innerWidth) + slack &&
      box.bottom <= Math.min(view.bottom, window.innerHeight) + slack;
    const covers = [
      ...document.querySelectorAll(".react-flow__panel, [data-overlays-canvas]"),
      ...[...document.querySelectorAll(".plait-workspace > *")].filter((el) => !el.contains(canvas)),
    ].map((el) => el.getBoundingClientRect());
    const under = (o) => box.left < o.right - slack && o.left < box.right - slack && box.top < o.bottom - slack && o.top < box.bottom - slack;
    return inside && !covers.some(under);
  };
  const sample = () => {
    const anchor = document.querySelector('[data-testid="approval-anchor"]');
    const card = anchor?.querySelector('[data-testid="approval-card"]');
    if (card) {
      const box = card.getBoundingClientRect();
      const view = document.querySelector(".react-flow__viewport").style.transform;
      const entry = [performance.now(), view, `${box.left},${box.top}`, `${anchor.dataset.side}/${anchor.dataset.align}`, inSight(box)];
      const last = moves[moves.length - 1];
      if (!last || entry.slice(1).some((value, i) => value !== last[i + 1])) moves.push(entry);
    }
    requestAnimationFrame(sample);
  };
  sample();
};
