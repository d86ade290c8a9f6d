"""On a terminal, ``plait run`` asks for the approval decision and carries on."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess

from tests.integration.cli.conftest import PLAIT, REPO, SPECS, TIMEOUT_SECONDS, plait_env

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """A child process on a pseudo-terminal, read until expected text appears."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            args, cwd=REPO, env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True
        )
        os.close(slave)
        self.seen = ""

    def expect(self, text: str) -> str:
        """Read output until ``text`` shows up; return everything read so far."""
        while text not in self.seen:
            ready, _, _ = select.select([self.master], [], [], TIMEOUT_SECONDS)
            assert ready, f"timed out waiting for {text!r}; got:\n{self.seen}"
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            assert chunk, f"the process ended before {text!r}; got:\n{self.seen}"
            self.seen += ANSI.sub("", chunk.decode(errors="replace")).replace("\r", "")
        return self.seen

    def send(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def close(self) -> int:
        code = self.process.wait(timeout=TIMEOUT_SECONDS)
        os.close(self.master)
        return code


def test_terminal_prompt_answers_the_approval(database_url: str) -> None:
    env = plait_env(database_url)
    env.pop("NO_COLOR")
    request = json.dumps({"order_id": "A-1002", "amount": 150, "reason": "broken"})
    terminal = Terminal([*PLAIT, "run", str(SPECS / "refund-approval.yaml"), "-i", request], env)
    try:
        terminal.expect("Approval needed")
        terminal.expect("Decision")
        terminal.send("reject")
        terminal.expect("Comment")
        terminal.send("asked on the terminal")
        output = terminal.expect("✓ completed")
        terminal.expect("}\n")
    finally:
        code = terminal.close()
    assert code == 0
    assert "▶ decline" in output
    assert "declined: asked on the terminal." in terminal.seen


def test_end_of_input_at_the_prompt_leaves_the_run_waiting(database_url: str) -> None:
    env = plait_env(database_url)
    request = json.dumps({"order_id": "A-1002", "amount": 150, "reason": "broken"})
    terminal = Terminal([*PLAIT, "run", str(SPECS / "refund-approval.yaml"), "-i", request], env)
    try:
        terminal.expect("Decision")
        os.write(terminal.master, b"\x04")  # Ctrl-D: end of input
        output = terminal.expect("--decision approve")
    finally:
        code = terminal.close()
    assert code == 4
    assert "no decision was given" in output
    assert "--thread" in output
