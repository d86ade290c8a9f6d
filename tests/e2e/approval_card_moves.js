// Records, every animation frame, where the waiting node's approval card is (its own box, which
// may overflow its anchor), its side and alignment, and the canvas view: window.__cardMoves
// holds each change as [ms, view transform, "left,top", "side/align"]. Its size is left out:
// the card grows as its form opens and as the person types, and that is no move.
() => {
  const moves = (window.__cardMoves = []);
  const sample = () => {
    const anchor = document.querySelector('[data-testid="approval-anchor"]');
    const card = anchor?.querySelector('[data-testid="approval-card"]');
    if (card) {
      const box = card.getBoundingClientRect();
      const view = document.querySelector(".react-flow__viewport").style.transform;
      const entry = [performance.now(), view, `${box.left},${box.top}`, `${anchor.dataset.side}/${anchor.dataset.align}`];
      const last = moves[moves.length - 1];
      if (!last || entry.slice(1).some((value, i) => value !== last[i + 1])) moves.push(entry);
    }
    requestAnimationFrame(sample);
  };
  sample();
};
