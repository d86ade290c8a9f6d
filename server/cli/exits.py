"""Exit codes of ``plait`` and the error that carries one to the top of the CLI."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a ``plait`` exit status means (listed in ``plait --help``)."""

    OK = 0
    #: The spec (or one of the paths given to ``validate``) has errors.
    INVALID_SPEC = 1
    #: Bad command line: options, JSON input, unknown example or input field, thread conflicts.
    USAGE = 2
    #: The run started and failed: a node raised, the run timed out or hit ``max_steps``.
    RUN_FAILED = 3
    #: The run waits for an approval and there was no terminal and no ``--decision``.
    WAITING = 4
    #: Plait's environment is broken: the database cannot be reached or migrated.
    ENVIRONMENT = 5
    #: ``plait test``: a test's assertion did not hold.
    TESTS_FAILED = 6
    #: ``plait agentspec --strict``: something has no equivalent in the other format.
    NOT_PORTABLE = 7
    #: A bug in Plait: an unexpected exception (set PLAIT_DEBUG=1 for the traceback).
    INTERNAL = 70
    #: Stopped with Ctrl-C.
    INTERRUPTED = 130


# "\b" keeps click from re-wrapping the table.
EXIT_CODES_HELP = """\
\b
Exit codes:
  0    success (spec valid, run completed)
  1    the spec has errors
  2    usage error: options, JSON input, example, input fields, thread conflicts
  3    the run failed (a node failed, timeout, max_steps)
  4    the run waits for an approval; no terminal and no --decision (resume command printed)
  5    environment: the database cannot be reached or migrated
  6    plait test: a test failed
  7    plait agentspec --strict: something has no equivalent in the other format
  70   internal error (a bug; PLAIT_DEBUG=1 shows the traceback)
  130  interrupted (Ctrl-C)"""


class CliError(Exception):
    """A user-facing failure: one clear message and the exit code to leave with."""

    def __init__(self, message: str, code: ExitCode = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
