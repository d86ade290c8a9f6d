"""The editor's run view in headless Chromium: how fast a run shows, and a long run's timeline.

Goals: from pressing Run to the first node state on the canvas <= 100 ms; the
timeline of a run with 2,000 events renders in <= 500 ms and scrolls at >= 50
frames/s.

- Run -> first node state: the graph (``timeline-loop``) is open with the run
  panel shown; the clock starts at the browser's ``pointerdown`` on the Run
  button (captured on the window) and stops when a canvas node first shows a
  run status (``data-status``: every node reads ``pending`` at once, before the
  server answers). Also timed: until the first node reads ``running`` or
  ``done`` (the server created the thread and the run, a worker claimed it
  and its first step's events streamed back).
- Timeline render: a run of ``timeline-loop`` (one python node looping
  ``--loops`` times) made through the API with the editor's stream modes,
  about 2,000 journal events. In the editor, the clock starts at the click on
  that run in Past runs and stops when the timeline lists every step and has
  drawn its rows: fetching the journal, folding it and the first render.
- Scroll: the timeline's list scrolled by 60 px per animation frame for 2 s
  (top to bottom and back); frames/s = frames drawn / elapsed, and the worst
  frame.

Starts ``plait serve`` on a free port (``PLAIT_DATABASE_URL``, else the
embedded server) and the built editor (``npm run build`` first if
``editor/dist`` is missing).

    .venv/bin/python bench/editor_runs.py [--loops 400] [--runs 10]

Writes its figures (and the machine's load, from ``uptime``) into bench/README.md.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from _report import machine, median, percentile, write_section
from _serve import plait_serve
from playwright.sync_api import Page, sync_playwright

from editor import CHROMIUM, CHROMIUM_ARGS, ensure_built

BENCH = Path(__file__).resolve().parent
GRAPH = "timeline-loop"
FIRST_STATE_GOAL_MS = 100.0
RENDER_GOAL_MS = 500.0
FPS_GOAL = 50.0
#: The stream modes the editor asks for (editor/src/runs/runController.ts).
EDITOR_MODES = ["updates", "messages-tuple", "custom", "values", "debug"]

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: timeline-loop, version: "1.0.0"}
spec:
  max_steps: 5000
  state:
    count: {type: integer, default: 0}
    goal: {type: integer, default: 3}
  input: [goal]
  output: [count]
  nodes:
    tick:
      kind: python
      function: bench_steps:step
      args: {n: state.count}
      writes: {count: result}
      max_visits: 5000
  edges:
    - {from: START, to: tick}
    - from: tick
      switch:
        - {when: "state.count < state.goal", to: tick}
      default: END
  examples:
    - name: three
      input: {goal: 3}
"""

#: Arms the clocks: the pointerdown on Run, the first node status, the first running/done.
ARM_RUN_JS = """
() => {
  window.__run = {};
  const button = document.querySelector('[data-testid="run-start"]');
  window.addEventListener("pointerdown", (e) => {
    if (button.contains(e.target)) window.__run.start = performance.now();
  }, { capture: true, once: true });
  const observer = new MutationObserver(() => {
    const node = document.querySelector('[data-testid="node-tick"]');
    const status = node && node.dataset.status;
    if (status && window.__run.start !== undefined && window.__run.first === undefined)
      window.__run.first = performance.now() - window.__run.start;
    if ((status === "running" || status === "done") && window.__run.started === undefined) {
      window.__run.started = performance.now() - window.__run.start;
      observer.disconnect();
    }
  });
  observer.observe(
    document.body, { attributes: true, attributeFilter: ["data-status"], subtree: true },
  );
}
"""

#: Resolves with the ms from `start` until the timeline lists `expected` entries and draws rows.
TIMELINE_JS = """
([expected, start]) => new Promise((resolve, reject) => {
  const check = () => {
    const timeline = document.querySelector('[data-testid="timeline"]');
    const rows = document.querySelectorAll('[data-testid="timeline-step"]').length;
    if (timeline && Number(timeline.dataset.count) >= expected && rows > 0)
      resolve(performance.now() - start);
    else if (performance.now() - start > 30000) reject(new Error("timeline not drawn after 30 s"));
    else requestAnimationFrame(check);
  };
  check();
})
"""

#: Scrolls the timeline for `ms` at 60 px per frame (down, then up); frame count and worst frame.
SCROLL_JS = """
(ms) => new Promise((resolve) => {
  const box = document.querySelector('[data-testid="timeline-scroll"]');
  const start = performance.now();
  let last = start, frames = 0, worst = 0, direction = 1;
  const frame = (now) => {
    frames += 1;
    worst = Math.max(worst, now - last);
    last = now;
    if (box.scrollTop + box.clientHeight >= box.scrollHeight - 1) direction = -1;
    else if (box.scrollTop <= 0) direction = 1;
    box.scrollTop += 60 * direction;
    if (now - start < ms) requestAnimationFrame(frame);
    else resolve({ frames, elapsed: now - start, worst, height: box.scrollHeight });
  };
  requestAnimationFrame(frame);
})
"""


@contextmanager
def serve_loop() -> Iterator[str]:
    """``plait serve`` (with workers) with the ``timeline-loop`` spec; yields its URL."""
    with tempfile.TemporaryDirectory(prefix="plait-bench-runs-") as tmp:
        specs = Path(tmp) / "specs"
        specs.mkdir()
        (specs / f"{GRAPH}.yaml").write_text(SPEC, encoding="utf-8")
        shutil.copy2(BENCH / "bench_steps.py", specs / "bench_steps.py")
        with plait_serve(specs) as (base, _process):
            yield base


def long_run(base: str, loops: int) -> tuple[str, int, int]:
    """A finished run of ``loops`` steps with the editor's modes: (thread id, events, steps)."""
    with httpx.Client(base_url=base, timeout=120) as http:
        thread = http.post("/threads", json={"metadata": {"graph_id": GRAPH}}).json()["thread_id"]
        answer = http.post(
            f"/threads/{thread}/runs/wait",
            json={"assistant_id": GRAPH, "input": {"goal": loops}, "stream_mode": EDITOR_MODES},
        )
        answer.raise_for_status()
        run_id = http.get(f"/threads/{thread}/runs").json()[0]["run_id"]
        events = http.get(f"/runs/{run_id}/events", params={"limit": 10_000}).json()
    return thread, len(events), loops


def open_graph(page: Page, base: str) -> None:
    # A fresh page each time: the previous run (and its thread in the URL) is not shown.
    page.goto("about:blank")
    page.goto(f"{base}/#/graphs/{GRAPH}/1.0.0")
    page.get_by_test_id("node-tick").wait_for()
    if not page.get_by_test_id("run-panel").is_visible():
        page.get_by_test_id("toolbar-run").click()
    page.get_by_test_id("run-panel").wait_for()


def show_run_form(page: Page) -> None:
    """The input form: open from the start, folded under "Run again" once a run is shown.

    Decided on the fold itself once it is drawn: asking whether the button is
    visible could answer before the panel has drawn it, and a click on an open
    fold closes it.
    """
    fold = page.locator("details.run-input")
    fold.wait_for(state="attached")
    if fold.get_attribute("open") is None:
        page.locator(".run-input > summary").click()
    page.get_by_test_id("run-start").wait_for()


def run_to_first_state(page: Page, base: str) -> tuple[float, float]:
    """(ms to the first node status, ms to the first running/done) of one run from the editor."""
    open_graph(page, base)
    show_run_form(page)
    page.evaluate(ARM_RUN_JS)
    page.get_by_test_id("run-start").click()
    page.wait_for_function("() => window.__run.started !== undefined", timeout=30_000)
    page.locator('[data-testid="run-phase"][data-phase="success"]').wait_for(timeout=30_000)
    timing = page.evaluate("() => window.__run")
    return float(timing["first"]), float(timing["started"])


def timeline_render(page: Page, base: str, thread: str, steps: int) -> float:
    """Ms from clicking the long run in Past runs to its timeline drawn."""
    open_graph(page, base)
    page.get_by_test_id("run-tab-past").click()
    row = page.locator(f'[data-testid="past-run"][data-thread="{thread}"]')
    row.wait_for()
    start = page.evaluate(
        """(thread) => {
          const row = document.querySelector(`[data-thread="${thread}"]`);
          const t = performance.now();
          row.querySelector('[data-testid="open-past-run"]').click();
          return t;
        }""",
        thread,
    )
    return float(page.evaluate(TIMELINE_JS, [steps, start]))


def uptime() -> str:
    """``uptime``'s line: the machine's load while measuring."""
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--loops", type=int, default=400, help="steps of the long run")
    parser.add_argument("--runs", type=int, default=10, help="runs timed from the Run button")
    parser.add_argument("--opens", type=int, default=5, help="times the long run is opened")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()

    ensure_built()
    load_before = uptime()
    with serve_loop() as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        firsts, starts = [], []
        for _ in range(args.runs):
            first, started = run_to_first_state(page, base)
            firsts.append(first)
            starts.append(started)
        thread, events, steps = long_run(base, args.loops)
        renders = [timeline_render(page, base, thread, steps) for _ in range(args.opens)]
        scroll = page.evaluate(SCROLL_JS, 2000)
        version = browser.version
        browser.close()
    load_after = uptime()

    fps = scroll["frames"] / (scroll["elapsed"] / 1000)
    first_p95, render_worst = percentile(firsts, 0.95), max(renders)
    body = "\n".join(
        [
            f"Machine: {machine()}; headless Chromium {version}, viewport 1440x900.",
            f"Load: before `{load_before}`; after `{load_after}`.",
            "",
            "| measure | median | p95 | worst | goal | result |",
            "|---|---|---|---|---|---|",
            f"| Run pressed -> first node state on the canvas ({len(firsts)} runs) "
            f"| {median(firsts):.1f} ms | {first_p95:.1f} ms | {max(firsts):.1f} ms "
            f"| <= {FIRST_STATE_GOAL_MS:.0f} ms "
            f"| {'met' if first_p95 <= FIRST_STATE_GOAL_MS else 'MISSED'} |",
            f"| Run pressed -> first node running (server round trips included) "
            f"| {median(starts):.0f} ms | {percentile(starts, 0.95):.0f} ms "
            f"| {max(starts):.0f} ms | — | — |",
            f"| open a past run of {events} events ({steps} steps): timeline drawn "
            f"({len(renders)} opens) | {median(renders):.0f} ms | — | {render_worst:.0f} ms "
            f"| <= {RENDER_GOAL_MS:.0f} ms "
            f"| {'met' if render_worst <= RENDER_GOAL_MS else 'MISSED'} |",
            f"| scroll that timeline, 60 px per frame for 2 s "
            f"| {fps:.0f} frames/s | — | worst frame {scroll['worst']:.0f} ms "
            f"| >= {FPS_GOAL:.0f} frames/s | {'met' if fps >= FPS_GOAL else 'MISSED'} |",
            "",
            "The timeline draws only the rows in view (fixed-height rows), so its cost does",
            "not grow with the run; opening includes fetching and folding the whole journal.",
            "Run: `.venv/bin/python bench/editor_runs.py` (its docstring says what is timed).",
        ]
    )
    print(body)
    if not args.no_readme:
        write_section("editor-runs", body)


if __name__ == "__main__":
    main()
