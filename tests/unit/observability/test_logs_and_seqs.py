"""JSON log lines with the run's context, and how step spans get their journal seq."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from plait.engine.observability import observe, tracing
from plait.engine.observability.roles import acting_as
from plait.server.operations.logs import configure_logging, log_context, log_format, make_handler
from tests.unit.observability.capture import captured_spans


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    logger = logging.getLogger("plait.test.logs")
    handler = make_handler("json", stream)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield logger, stream
    finally:
        logger.removeHandler(handler)


def test_json_lines_carry_the_context_and_the_engine_extras(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = captured
    with log_context(run_id="r1", thread_id="t1", tenant="acme", graph="g"):
        logger.warning(
            "tool %s failed",
            "lookup",
            extra={"plait_tool": "lookup", "plait_status": "error", "plait_error_code": "KeyError"},
        )
    logger.info("outside")
    inside, outside = (json.loads(line) for line in stream.getvalue().splitlines())
    assert inside["message"] == "tool lookup failed"
    assert inside["level"] == "WARNING"
    assert inside["logger"] == "plait.test.logs"
    assert "time" in inside
    assert {
        k: inside[k]
        for k in ("run_id", "thread_id", "tenant", "graph", "tool", "status", "error_code")
    } == {
        "run_id": "r1",
        "thread_id": "t1",
        "tenant": "acme",
        "graph": "g",
        "tool": "lookup",
        "status": "error",
        "error_code": "KeyError",
    }
    assert "plait_fields" not in inside and "plait_tool" not in inside
    assert "run_id" not in outside


def test_lines_logged_for_an_agent_carry_its_role(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    """An agent node acts as its agent (``acting_as``): its tools' lines say which one."""
    logger, stream = captured
    with log_context(run_id="r1"), acting_as("researcher"):
        logger.info("searching")
    logger.info("after")
    inside, after = (json.loads(line) for line in stream.getvalue().splitlines())
    assert (inside["agent_role"], inside["run_id"]) == ("researcher", "r1")
    assert "agent_role" not in after


def test_text_lines_end_with_the_context_as_name_value_pairs() -> None:
    stream = io.StringIO()
    logger = logging.getLogger("plait.test.text")
    handler = make_handler("text", stream)
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with log_context(run_id="r1", graph="g"):
            logger.warning("tool failed", extra={"plait_tool": "lookup", "plait_status": None})
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
    inside, outside = stream.getvalue().splitlines()
    assert inside.endswith("WARNING plait.test.text: tool failed run_id=r1 graph=g tool=lookup")
    assert outside.endswith("WARNING plait.test.text: outside ")


def test_the_format_is_json_unless_stderr_is_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert log_format({}, io.StringIO()) == "json"
    assert log_format({}, Tty()) == "text"
    assert log_format({"PLAIT_LOG_FORMAT": "json"}, Tty()) == "json"
    assert log_format({"PLAIT_LOG_FORMAT": "text"}, io.StringIO()) == "text"


def test_an_unknown_log_level_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown log level 'VERBOSE'.*PLAIT_LOG_LEVEL"):
        configure_logging(env={"PLAIT_LOG_LEVEL": "verbose"})


def test_step_spans_take_the_seq_of_the_event_carrying_their_update() -> None:
    with captured_spans() as exporter:
        spans = observe.StepSpans(first_seq=2)
        found = tracing.tracer()
        assert found is not None
        a, b, c = (found.start_span(f"step {n}") for n in "abc")
        spans.park("a", a, 1)
        spans.park("b", b, 2)
        spans.journaled("updates", (), {"a": {}}, 1)  # seq 2 carries a's update
        spans.journaled("custom", (), {"b": 1}, 1)  # seq 3: not an update
        spans.journaled("updates", (), {"b": {}}, 0)  # b's update not streamed...
        spans.journaled("values", (), {}, 1)  # ...so b takes seq 4, the next event
        spans.park("c", c, 3)
        spans.close()  # the run ended first: c has no seq
        seqs = {
            s.name: (s.attributes or {}).get("plait.journal.seq")
            for s in exporter.get_finished_spans()
        }
        assert seqs == {"step a": 2, "step b": 4, "step c": None}
