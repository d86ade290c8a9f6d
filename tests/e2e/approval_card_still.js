// Resolves once a waiting node's approval card and the canvas view have not moved for half a
// second (the card's placement may pan or zoom the view, and re-place it after a fit), at most
// 8 s: true when they settled. A person reaches for the card's buttons once it stands still.
async () => {
  const anchor = () => document.querySelector('[data-testid="approval-anchor"]');
  const viewport = () => document.querySelector(".react-flow__viewport");
  const sample = () => {
    const a = anchor();
    const r = a && a.getBoundingClientRect();
    return r ? `${r.left},${r.top},${r.width},${r.height} ${viewport()?.style.transform}` : "";
  };
  const started = performance.now();
  let last = sample();
  let since = performance.now();
  while (performance.now() - started < 8000) {
    await new Promise((done) => requestAnimationFrame(done));
    const now = sample();
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (now && performance.now() - since >= 500) return true;
  }
  return false;
};
