"""Run states in the editor: a map that lost items says so, in the outcome and in past runs.
Real Chromium, real ``plait serve``, real Postgres."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from plait.engine.run.states import STATES, state_label
from tests.e2e.conftest import screenshot
from tests.e2e.helpers import (
    Relay,
    api,
    assert_badge_matches_server,
    newest_thread,
    open_graph,
    park_refund,
    run_words_seen,
    watch_run_words,
)
from tests.e2e.test_run_story import run_from_editor, show_run_panel
from tests.integration.mcp.conftest import DemoServer, free_port, serve_demo_http
from tests.integration.server.harness import Cluster

SPECS = Path(__file__).resolve().parents[2] / "specs"
RESEARCH = "research-team"
#: Its example: 5 topics, one source hangs and one topic is unknown (min_success 3).
PARTIAL = "partial: 2 of 5 items lost"
#: The run view's line between the stream's end and the run's row (no state claimed).
ENDING = "ended, reading the result…"
#: The run view's line while a run that exists is being read (a past run opened).
READING = "reading the run…"
#: The run view's line while its stream is broken and being rejoined.
LOST = "lost the stream, reconnecting…"
#: What the run view's line may say: the server's words for each state (with their details:
#: a timer's time of day, the tools an MCP task waits on, a map's losses), and the editor's
#: own for no run, for a run not created yet, one being read and an end not read yet.
LINE_WORDS = {
    "No run",
    "starting",
    READING,
    ENDING,
    LOST,
    *(state_label(state) for state in STATES),
}
#: The outcome's border for a bad end (runs.css `.tone-bad`), and a success's (`.tone-ok`).
BAD_BORDER, OK_BORDER = "rgb(180, 35, 24)", "rgb(29, 138, 91)"
TIMER_WORDS = re.compile(r"^waiting until \d\d:\d\d:\d\d$")
DETAIL_WORDS = [
    TIMER_WORDS,
    re.compile(r"^waiting for [\w.-]+/[\w.-]+(, [\w.-]+/[\w.-]+)*$"),
    re.compile(r"^partial: \d+ of \d+ items lost$"),
]


def waiting_since(heading: str) -> re.Pattern[str]:
    """A waiting run's heading: one step so far, and since when it waits (a time of day today)."""
    return re.compile(rf"^{heading} · 1 step · since \d\d:\d\d:\d\d$")


def assert_only_state_words(page: Page) -> None:
    """Every text the run view's line showed since ``watch_run_words`` is one of its words."""
    seen = run_words_seen(page, "line")
    assert seen, "the run line was never seen"
    strays = [
        text
        for text in seen
        if text not in LINE_WORDS and not any(words.match(text) for words in DETAIL_WORDS)
    ]
    assert strays == [], f"the run line showed {strays} (all it showed: {seen})"


def upload_research(base: str) -> None:
    """research-team 1.0.0 (uploaded once per server)."""
    with api(base) as http:
        answer = http.post("/graphs", json={"yaml": (SPECS / f"{RESEARCH}.yaml").read_text()})
        assert answer.status_code in (200, 201, 409), answer.text


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_a_partial_success_says_how_many_items_were_lost(
    editor: Page, plait_server: Cluster, size: tuple[int, int]
) -> None:
    page = editor
    page.set_viewport_size({"width": size[0], "height": size[1]})
    base = plait_server.url
    upload_research(base)
    open_graph(page, base, RESEARCH, "1.0.0")
    watch_run_words(page)
    run_from_editor(page)

    # The run is `success` for the SDK; the outcome says what Plait's state says.
    outcome = page.get_by_test_id("run-outcome")
    expect(outcome).to_have_attribute("data-phase", "success", timeout=20_000)
    expect(outcome).to_have_attribute("data-state", "partially_succeeded")
    expect(outcome.locator("h3")).to_contain_text("Partially succeeded")
    expect(outcome.get_by_test_id("run-state-label")).to_have_text(PARTIAL)
    # The map's card says it too, not just "done".
    research = page.get_by_test_id("node-research")
    expect(research).to_have_attribute("data-status", "done")
    expect(research.get_by_test_id("node-lost")).to_have_text("2 of 5 items lost")
    expect(page.get_by_test_id("node-summarize").get_by_test_id("node-lost")).to_have_count(0)
    screenshot(page, f"run-partial-{size[0]}x{size[1]}")
    # The stream's end came before the run's row: meanwhile nothing claimed it succeeded.
    assert_only_state_words(page)
    assert "succeeded" not in run_words_seen(page, "line")
    assert run_words_seen(page, "heading") == ["Partially succeeded"]

    # The past runs list says it too.
    thread = newest_thread(base, RESEARCH)
    show_run_panel(page)
    page.get_by_test_id("run-tab-past").click()
    row = page.locator(f'[data-testid="past-run"][data-thread="{thread["thread_id"]}"]')
    badge = row.get_by_test_id("past-status")
    expect(badge).to_have_text(PARTIAL)
    expect(badge).to_have_attribute("data-state", "partially_succeeded")
    screenshot(page, f"past-runs-partial-{size[0]}x{size[1]}")


#: A run that waits 2 s on a durable timer, then answers.
HOLD = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: e2e-hold
  version: "1.0.0"
spec:
  state:
    question: {type: string}
    answer: {type: string}
  input: [question]
  output: [answer]
  models:
    echo:
      provider: scripted
      script:
        - content: answered after the wait
  nodes:
    hold:
      kind: wait
      for: 2s
    reply:
      kind: llm
      model: echo
      prompt: "{{ state.question }}"
      output: answer
  edges:
    - {from: START, to: hold}
    - {from: hold, to: reply}
    - {from: reply, to: END}
  examples:
    - name: ready
      input: {question: Is it ready?}
"""


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_a_wait_reads_as_a_time_of_day_and_counts_in_the_run(
    editor: Page, plait_server: Cluster, size: tuple[int, int]
) -> None:
    page = editor
    page.set_viewport_size({"width": size[0], "height": size[1]})
    base = plait_server.url
    with api(base) as http:
        answer = http.post("/graphs", json={"yaml": HOLD})
        assert answer.status_code in (200, 201), answer.text
    open_graph(page, base, "e2e-hold", "1.0.0")
    watch_run_words(page)
    run_from_editor(page)

    # Waiting: the timer's time as a clock reads it, not the server's ISO string.
    outcome = page.get_by_test_id("run-outcome")
    expect(outcome).to_have_attribute("data-state", "waiting_for_timer", timeout=20_000)
    expect(outcome.get_by_test_id("run-state-label")).to_have_text(
        re.compile(r"^waiting until \d\d:\d\d:\d\d$")
    )
    # How long it has waited, not a time for the run: it has not ended (it read "· 1 ms").
    expect(outcome.locator("h3")).to_have_text(waiting_since("Waiting for a timer"))
    screenshot(page, f"run-waiting-{size[0]}x{size[1]}")

    # Ended: the run's time and the reply's place on the timeline count the wait.
    expect(outcome).to_have_attribute("data-phase", "success", timeout=20_000)
    expect(outcome.locator("h3")).to_contain_text(re.compile(r"· [2-9]\.\d s"))
    reply = page.locator('[data-testid="timeline-step"][data-node="reply"] .timeline-at')
    expect(reply).to_have_text(re.compile(r"^\+[2-9]\.\d s$"))
    # The wait step is placed where it began (the run's first step), not where the timer's
    # resume run re-entered it; it lasted the wait.
    hold = page.locator('[data-testid="timeline-step"][data-node="hold"]')
    expect(hold.locator(".timeline-at")).to_have_text(re.compile(r"^\+\d{1,3} ms$"))
    expect(hold.get_by_test_id("timeline-duration")).to_have_text(re.compile(r"^[2-9]\.\d s$"))
    # Its detail says nobody was asked anything.
    hold.click()
    expect(page.get_by_test_id("step-detail")).to_have_attribute("data-node", "hold")
    expect(page.get_by_test_id("step-detail").get_by_test_id("step-approval")).to_have_count(0)
    # The timer's resume run is read back from the server: the run still says what it ran.
    expect(page.get_by_test_id("run-ran")).to_have_text("This run ran version 1.0.0.")
    expect(page.get_by_test_id("run-phase")).to_contain_text("succeeded")
    screenshot(page, f"run-waited-{size[0]}x{size[1]}")

    # From the click to the end, only the run view's own words, and the outcome's heading
    # went from the timer to the end without a word for something the run never did.
    assert_only_state_words(page)
    assert run_words_seen(page, "heading") == ["Waiting for a timer", "Succeeded"]
    # Re-reading the thread once the timer's run came did not start anything: from the wait
    # the line went to the end (through the resume run, if it was still going), never back
    # to "starting", nor to "reading the run…" while the wait was on screen.
    line = run_words_seen(page, "line")
    waited = next(i for i, text in enumerate(line) if TIMER_WORDS.match(text))
    assert set(line[waited + 1 :]) <= {"running", ENDING, "succeeded"}, line
    # The timeline's note says the time as the line said it (it printed "Dec 4, 01:51:41").
    time_of_day = line[waited].removeprefix("waiting until ")
    note = page.locator('[data-testid="timeline-note"][data-type="timer"] .note-text')
    expect(note).to_have_text(f"hold waits until {time_of_day}")


def test_a_past_run_is_read_not_started(editor: Page, plait_server: Cluster) -> None:
    """Opening a run that exists says it is being read, then how it ended: never "starting"."""
    page = editor
    page.set_viewport_size({"width": 1440, "height": 900})
    base = plait_server.url
    with api(base) as http:
        thread = http.post("/threads", json={"metadata": {"graph_id": "summarize"}}).json()
        ran = http.post(
            f"/threads/{thread['thread_id']}/runs/wait",
            json={
                "assistant_id": "summarize@1.0.0",
                "input": {"text": "Charged twice; refund one."},
            },
        )
        assert ran.status_code == 200, ran.text
    open_graph(page, base, "summarize", "1.0.0")
    show_run_panel(page)
    page.get_by_test_id("run-tab-past").click()
    watch_run_words(page)
    row = page.locator(f'[data-testid="past-run"][data-thread="{thread["thread_id"]}"]')
    row.get_by_test_id("open-past-run").click()
    expect(page.get_by_test_id("run-outcome")).to_have_attribute("data-state", "succeeded")
    expect(page.get_by_test_id("run-phase")).to_contain_text(thread["thread_id"][:8])
    screenshot(page, "past-run-opened")
    assert_only_state_words(page)
    assert run_words_seen(page, "line") == ["No run", READING, "succeeded"]
    assert run_words_seen(page, "heading") == ["Succeeded"]
    # What it ran, as for a run started here (it read "Run starts version 1.0.0." only).
    expect(page.get_by_test_id("run-ran")).to_have_text("This run ran version 1.0.0.")


def test_a_run_that_ends_never_shows_a_raw_status(editor: Page, plait_server: Cluster) -> None:
    """The stream's end comes before the run's state is read: the line must not show `success`."""
    page = editor
    page.set_viewport_size({"width": 1440, "height": 900})
    open_graph(page, plait_server.url, "summarize", "1.0.0")
    watch_run_words(page)
    run_from_editor(page)
    phase = page.get_by_test_id("run-phase")
    expect(phase).to_have_attribute("data-phase", "success", timeout=20_000)
    outcome = page.get_by_test_id("run-outcome")
    expect(outcome).to_have_attribute("data-state", "succeeded")
    expect(outcome).to_have_css("border-left-color", OK_BORDER)
    expect(phase).to_contain_text("succeeded")
    expect(page.get_by_test_id("run-ran")).to_have_text("This run ran version 1.0.0.")
    assert_only_state_words(page)
    assert run_words_seen(page, "line")[-1] == "succeeded"
    assert run_words_seen(page, "heading") == ["Succeeded"]


#: A call of the demo server's task tool: the run parks on the MCP task (a minute long).
MCP_TASK = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: e2e-mcp-task
  version: "1.0.0"
spec:
  state:
    topic: {type: string}
    seconds: {type: number}
    report: {type: object}
  input: [topic, seconds]
  output: [report]
  mcp_servers:
    demo: {transport: http, url: "URL"}
  tools:
    slow_report: {kind: mcp, server: demo, task: true}
  nodes:
    report:
      kind: tool
      tool: slow_report
      args: {topic: state.topic, seconds: state.seconds}
      output: report
  edges:
    - {from: START, to: report}
    - {from: report, to: END}
  examples:
    - name: slow
      input: {topic: quarterly, seconds: 60}
"""


@pytest.fixture(scope="module")
def demo_mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    """The repository's demo MCP server over streamable HTTP (its ``slow_report`` is a task)."""
    with serve_demo_http(tmp_path_factory.mktemp("mcp-demo"), free_port()) as server:
        yield server


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_a_run_parked_on_an_mcp_task_waits_for_the_tool_not_a_person(
    editor: Page, plait_server: Cluster, demo_mcp: DemoServer, size: tuple[int, int]
) -> None:
    page = editor
    page.set_viewport_size({"width": size[0], "height": size[1]})
    base = plait_server.url
    with api(base) as http:
        answer = http.post("/graphs", json={"yaml": MCP_TASK.replace("URL", demo_mcp.url)})
        assert answer.status_code in (200, 201, 409), answer.text
    open_graph(page, base, "e2e-mcp-task", "1.0.0")
    watch_run_words(page)
    run_from_editor(page)

    outcome = page.get_by_test_id("run-outcome")
    expect(outcome).to_have_attribute("data-state", "waiting_for_tool", timeout=20_000)
    expect(page.get_by_test_id("run-phase")).to_contain_text("waiting for demo/slow_report")
    expect(outcome.locator("h3")).to_have_text(waiting_since("Waiting for a tool"))
    # From the stream's end to the run's row, the kind of wait the stream told: never a person.
    assert_only_state_words(page)
    assert "waiting for a person" not in run_words_seen(page, "line")
    assert run_words_seen(page, "heading") == ["Waiting for a tool"]

    # Nobody is asked: no approval card, and the card and the timeline say which tool.
    expect(page.get_by_test_id("approval-card")).to_have_count(0)
    expect(page.get_by_test_id("node-status-report")).to_have_text("waiting")
    expect(page.get_by_test_id("node-tokens")).to_have_text("for demo/slow_report")
    expect(page.locator('[data-testid="timeline-note"][data-type="tool"]')).to_have_text(
        re.compile("report waits for demo/slow_report")
    )
    page.locator('[data-testid="timeline-step"][data-node="report"]').click()
    detail = page.get_by_test_id("step-detail")
    expect(detail.get_by_test_id("step-duration")).to_have_text("waiting for demo/slow_report")
    expect(detail.get_by_test_id("step-approval")).to_have_count(0)
    # Its call goes on (on the server, as a task): not cut off.
    expect(detail.get_by_test_id("tool-call").locator("summary")).to_have_text(
        "slow_report · started"
    )
    screenshot(page, f"run-waiting-tool-{size[0]}x{size[1]}")

    # Deleting the thread cancels the task: nothing resumes later on the shared server.
    thread = newest_thread(base, "e2e-mcp-task")
    with api(base) as http:
        assert http.delete(f"/threads/{thread['thread_id']}").status_code in (200, 204)


def upload(base: str, yaml: str) -> None:
    """Register a spec on the shared server (once: the same text again is fine)."""
    with api(base) as http:
        answer = http.post("/graphs", json={"yaml": yaml})
        assert answer.status_code in (200, 201, 409), answer.text


def words_after(line: list[str], first: str | re.Pattern[str]) -> list[str]:
    """What the run line said after it first said ``first``."""
    said = next(
        i
        for i, text in enumerate(line)
        if (text == first if isinstance(first, str) else first.match(text))
    )
    return line[said + 1 :]


#: The MCP task graph whose task ends in a few seconds: the server's poller resumes the thread.
MCP_QUICK = MCP_TASK.replace("e2e-mcp-task", "e2e-mcp-quick").replace("seconds: 60", "seconds: 3")


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_a_run_the_mcp_task_poller_resumes_is_followed_as_it_happens(
    editor: Page, plait_server: Cluster, demo_mcp: DemoServer, size: tuple[int, int]
) -> None:
    """The server resumes the thread in a new run when the task ends: the panel shows it then,
    without being opened again (it read "waiting for demo/slow_report" until reopened)."""
    page = editor
    page.set_viewport_size({"width": size[0], "height": size[1]})
    base = plait_server.url
    upload(base, MCP_QUICK.replace("URL", demo_mcp.url))
    open_graph(page, base, "e2e-mcp-quick", "1.0.0")
    watch_run_words(page)
    run_from_editor(page)

    outcome = page.get_by_test_id("run-outcome")
    expect(outcome).to_have_attribute("data-state", "waiting_for_tool", timeout=20_000)
    screenshot(page, f"run-task-waiting-{size[0]}x{size[1]}")
    # The task ends on the demo server, the poller resumes the thread, and the panel follows.
    expect(outcome).to_have_attribute("data-state", "succeeded", timeout=30_000)
    expect(page.get_by_test_id("run-phase")).to_contain_text("succeeded")
    expect(page.get_by_test_id("node-report")).to_have_attribute("data-status", "done")
    expect(page.get_by_test_id("node-tokens")).to_have_count(0)
    expect(outcome.get_by_test_id("outcome-field")).to_contain_text("quarterly")
    screenshot(page, f"run-task-resumed-{size[0]}x{size[1]}")

    assert_only_state_words(page)
    assert run_words_seen(page, "heading") == ["Waiting for a tool", "Succeeded"]
    # From the wait to the end: the resume run as it went, never a start or a re-read.
    after = words_after(run_words_seen(page, "line"), "waiting for demo/slow_report")
    assert after and set(after) <= {"running", ENDING, "succeeded"}, after


def test_an_approval_decided_elsewhere_is_followed(editor: Page, plait_server: Cluster) -> None:
    """A person decides in the inbox (or another editor): the panel showing the approval
    follows the run the decision started, and its card goes."""
    page = editor
    page.set_viewport_size({"width": 1440, "height": 900})
    base = plait_server.url
    thread_id, approval_id = park_refund(base, "Item arrived broken")
    page.goto(f"{base}/#/graphs/refund-approval/1.0.0?thread={thread_id}")
    expect(page.get_by_test_id("approval-card")).to_be_visible()
    expect(page.get_by_test_id("run-phase")).to_contain_text("waiting for a person")
    expect(page.get_by_test_id("approvals-badge")).to_be_visible()
    watch_run_words(page)

    with api(base) as http:
        decided = http.post(
            f"/approvals/{approval_id}/decision",
            json={"decision": "approve", "actor": "bo", "comment": "photos checked"},
        )
        assert decided.status_code == 200, decided.text

    expect(page.get_by_test_id("run-phase")).to_contain_text("succeeded", timeout=20_000)
    expect(page.get_by_test_id("approval-card")).to_have_count(0)
    # The top bar's count follows too, sooner than its own refresh (every 5 s) would. Other
    # tests' runs may park on approvals meanwhile: the count must match the server's.
    assert_badge_matches_server(page, base, within_s=2.0)
    expect(page.get_by_test_id("run-outcome")).to_have_attribute("data-state", "succeeded")
    note = page.locator('[data-testid="timeline-note"][data-type="decision"]')
    expect(note).to_contain_text("approve by bo")
    # What the run wrote, from the thread's state: its runs (started through the API) streamed
    # values only, and the outcome read the input's as the run's ("outcome null").
    outcome = page.locator('[data-testid="outcome-field"][data-field="outcome"]')
    expect(outcome).to_have_text(re.compile(r"^outcome\s*refunded 180(\.0)? to grace@example.com$"))
    screenshot(page, "run-decided-elsewhere")
    assert_only_state_words(page)
    assert set(run_words_seen(page, "line")[1:]) <= {"running", ENDING, "succeeded"}


#: A call of the demo server's slow tool in place (no task): the run's stream stays open 3 s.
SLOW_CALL = (
    MCP_TASK.replace("e2e-mcp-task", "e2e-mcp-slow-call")
    .replace("task: true", "task: false")
    .replace("seconds: 60", "seconds: 3")
)


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_a_broken_stream_is_rejoined_and_never_called_failed(
    editor: Page, plait_server: Cluster, demo_mcp: DemoServer, size: tuple[int, int]
) -> None:
    """The connection drops mid-run and the server cannot be reached for a while: the run goes
    on on the server, so the line says the stream was lost, then rejoins and reads its end."""
    page = editor
    page.set_viewport_size({"width": size[0], "height": size[1]})
    base = plait_server.url
    upload(base, SLOW_CALL.replace("URL", demo_mcp.url))
    with Relay(base) as relay:
        open_graph(page, relay.url, "e2e-mcp-slow-call", "1.0.0")
        watch_run_words(page)
        run_from_editor(page)
        expect(page.get_by_test_id("node-report")).to_have_attribute("data-status", "running")

        relay.cut()
        phase = page.get_by_test_id("run-phase")
        expect(phase).to_contain_text(LOST)
        screenshot(page, f"run-stream-lost-{size[0]}x{size[1]}")
        # The run ends on the server meanwhile; the page cannot know yet.
        thread = newest_thread(base, "e2e-mcp-slow-call")
        with api(base) as http:
            [run] = http.get(f"/threads/{thread['thread_id']}/runs").json()
            ended = http.get(f"/threads/{thread['thread_id']}/runs/{run['run_id']}/join")
            assert ended.status_code == 200, ended.text
        expect(phase).to_contain_text(LOST)
        expect(page.get_by_test_id("run-outcome")).to_have_count(0)

        relay.restore()
        outcome = page.get_by_test_id("run-outcome")
        expect(outcome).to_have_attribute("data-state", "succeeded", timeout=20_000)
        expect(phase).to_contain_text("succeeded")
        # The rest of the run came with the rejoined stream: its step ended, with the report.
        expect(page.get_by_test_id("node-report")).to_have_attribute("data-status", "done")
        step = page.locator('[data-testid="timeline-step"][data-node="report"]')
        expect(step).to_have_attribute("data-status", "done")
        expect(outcome.get_by_test_id("outcome-field")).to_contain_text("quarterly")
        screenshot(page, f"run-stream-rejoined-{size[0]}x{size[1]}")

    assert_only_state_words(page)
    line = run_words_seen(page, "line")
    assert "failed" not in line, line
    assert words_after(line, "running")[0] == LOST, line
    assert run_words_seen(page, "heading") == ["Succeeded"]


#: The slow call again, long enough to be cancelled while it runs.
CANCELLED_CALL = SLOW_CALL.replace("e2e-mcp-slow-call", "e2e-mcp-cancelled").replace(
    "seconds: 3", "seconds: 30"
)


def assert_shown_cancelled(page: Page) -> None:
    """A cancelled run, as the run view must show it: nothing in it says success."""
    outcome = page.get_by_test_id("run-outcome")
    expect(outcome).to_have_attribute("data-state", "cancelled", timeout=20_000)
    expect(page.get_by_test_id("run-phase")).to_contain_text("cancelled")
    expect(outcome).to_have_css("border-left-color", BAD_BORDER)
    # The node the cancel cut off neither finished nor failed, and the run never got to END.
    expect(page.get_by_test_id("node-report")).to_have_attribute("data-status", "stopped")
    expect(page.locator('.react-flow__edge[data-id="e0"]')).to_have_class(re.compile(r"\btaken\b"))
    expect(page.locator('.react-flow__edge[data-id="e1"]')).to_have_class(re.compile("not-taken"))


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_a_cancelled_run_is_not_shown_as_a_success(
    editor: Page, plait_server: Cluster, demo_mcp: DemoServer, size: tuple[int, int]
) -> None:
    """Cancelled while it ran (by another client): the outcome had a success's green border and
    the edge into END was drawn as taken."""
    page = editor
    page.set_viewport_size({"width": size[0], "height": size[1]})
    base = plait_server.url
    upload(base, CANCELLED_CALL.replace("URL", demo_mcp.url))
    open_graph(page, base, "e2e-mcp-cancelled", "1.0.0")
    run_from_editor(page)
    expect(page.get_by_test_id("node-report")).to_have_attribute("data-status", "running")
    thread = newest_thread(base, "e2e-mcp-cancelled")
    with api(base) as http:
        [run] = http.get(f"/threads/{thread['thread_id']}/runs").json()
        cancelled = http.post(f"/threads/{thread['thread_id']}/runs/{run['run_id']}/cancel?wait=1")
        assert cancelled.status_code == 200, cancelled.text

    assert_shown_cancelled(page)
    step = page.locator('[data-testid="timeline-step"][data-node="report"]')
    expect(step).to_have_attribute("data-status", "stopped")
    screenshot(page, f"run-cancelled-{size[0]}x{size[1]}")

    # Opened again as a past run: the same.
    page.reload()
    assert_shown_cancelled(page)
    expect(step).to_have_attribute("data-status", "stopped")
    step.click()
    expect(page.get_by_test_id("step-duration")).to_contain_text("stopped after")
    screenshot(page, f"past-run-cancelled-{size[0]}x{size[1]}")


#: The task graph on a server with a long name: its card's line was cut ("waiting for reporting…").
MCP_LONG = MCP_TASK.replace("e2e-mcp-task", "e2e-mcp-long-name").replace(
    "demo", "reporting_service_europe"
)

#: Whether every box that clips the element (up to its card) holds all of it: text cut off
#: by an ellipsis or a clamp sticks out of the box that clips it.
SHOWN_WHOLE_JS = """
(el) => {
  const inside = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5
    && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
  const box = el.getBoundingClientRect();
  const card = el.closest(".react-flow__node");
  for (let up = el.parentElement; up && up !== card; up = up.parentElement) {
    const style = getComputedStyle(up);
    if (style.overflowX !== "visible" || style.overflowY !== "visible") {
      if (!inside(box, up.getBoundingClientRect())) return false;
    }
  }
  return true;
}
"""


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_a_long_tool_name_is_shown_whole_on_its_card(
    editor: Page, plait_server: Cluster, demo_mcp: DemoServer, size: tuple[int, int]
) -> None:
    page = editor
    page.set_viewport_size({"width": size[0], "height": size[1]})
    base = plait_server.url
    upload(base, MCP_LONG.replace("URL", demo_mcp.url))
    open_graph(page, base, "e2e-mcp-long-name", "1.0.0")
    show_run_panel(page)
    card = page.get_by_test_id("node-report")
    before = card.bounding_box()
    page.get_by_test_id("run-start").click()

    expect(card).to_have_attribute("data-status", "waiting", timeout=20_000)
    line = card.get_by_test_id("node-tokens")
    expect(line).to_have_text("for reporting_service_europe/slow_report")
    # Read whole on the card (it wraps under the status word), and in the tooltip.
    assert line.evaluate(SHOWN_WHOLE_JS), "the card cuts the tool's name"
    expect(line).to_have_attribute(
        "title", re.compile("^waiting for reporting_service_europe/slow_report: ")
    )
    # The card keeps its size: it grows onto no other node.
    assert card.bounding_box() == before
    expect(card.locator(".plait-node-field")).to_have_text("tool: slow_report")
    screenshot(page, f"run-long-tool-name-{size[0]}x{size[1]}")

    # Deleting the thread cancels the task: nothing resumes later on the shared server.
    thread = newest_thread(base, "e2e-mcp-long-name")
    with api(base) as http:
        assert http.delete(f"/threads/{thread['thread_id']}").status_code in (200, 204)
