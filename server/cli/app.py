"""The ``plait`` command: validate, run, test, record, replay, graph, eject, schema, serve,
worker, tenants, keys, queue, rollout, upgrade, export, agentspec.

``main()`` is the console script. User errors end with one clear message and
an exit code from :class:`plait.server.cli.exits.ExitCode`, never a traceback; an
unexpected exception is reported as an internal error (exit 70), with the
traceback only when ``PLAIT_DEBUG`` is set.
"""

from __future__ import annotations

import os
import sys
import traceback

import typer

from plait.server.cli.agentspec import agentspec_app
from plait.server.cli.eject import eject_command
from plait.server.cli.exits import EXIT_CODES_HELP, CliError, ExitCode
from plait.server.cli.export import export_app
from plait.server.cli.graph import graph_command
from plait.server.cli.queue import queue_app
from plait.server.cli.record import record_command, replay_command
from plait.server.cli.rollout import rollout_app
from plait.server.cli.run import run_command
from plait.server.cli.schema import schema_command
from plait.server.cli.serve import serve_command
from plait.server.cli.specs import InvalidSpec
from plait.server.cli.tenants import keys_app, tenants_app
from plait.server.cli.test import test_command
from plait.server.cli.upgrade import upgrade_command
from plait.server.cli.validate import validate_command
from plait.server.cli.worker import worker_command

app = typer.Typer(
    name="plait",
    help=(
        "Plait: agent teams as versioned YAML graphs, run durably on Postgres.\n\n"
        "Postgres: PLAIT_DATABASE_URL, or an embedded server under .plait/ when unset."
    ),
    epilog=EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command("validate", epilog=EXIT_CODES_HELP)(validate_command)
app.command("run", epilog=EXIT_CODES_HELP)(run_command)
app.command("test", epilog=EXIT_CODES_HELP)(test_command)
app.command("record", epilog=EXIT_CODES_HELP)(record_command)
app.command("replay", epilog=EXIT_CODES_HELP)(replay_command)
app.command("graph", epilog=EXIT_CODES_HELP)(graph_command)
app.command("eject", epilog=EXIT_CODES_HELP)(eject_command)
app.command("schema", epilog=EXIT_CODES_HELP)(schema_command)
app.command("serve", epilog=EXIT_CODES_HELP)(serve_command)
app.command("worker", epilog=EXIT_CODES_HELP)(worker_command)
app.command("upgrade", epilog=EXIT_CODES_HELP)(upgrade_command)
app.add_typer(tenants_app, name="tenants")
app.add_typer(keys_app, name="keys")
app.add_typer(queue_app, name="queue")
app.add_typer(rollout_app, name="rollout")
app.add_typer(export_app, name="export")
app.add_typer(agentspec_app, name="agentspec")


def main() -> None:
    """Entry point of the ``plait`` console script."""
    try:
        app(standalone_mode=True)
    except InvalidSpec as exc:
        from plait.server.cli.output import print_issues, styled_output

        print_issues(styled_output(stderr=True), exc.issues)
        _fail(exc.message, exc.code)
    except CliError as exc:
        _fail(exc.message, exc.code)
    except KeyboardInterrupt:
        _fail("interrupted", ExitCode.INTERRUPTED)
    except Exception as exc:
        if os.environ.get("PLAIT_DEBUG"):
            traceback.print_exc()
        _fail(
            f"internal error (a bug in Plait): {type(exc).__name__}: {exc}; "
            "set PLAIT_DEBUG=1 to see the traceback",
            ExitCode.INTERNAL,
        )


def _fail(message: str, code: ExitCode) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(int(code))


if __name__ == "__main__":
    main()
