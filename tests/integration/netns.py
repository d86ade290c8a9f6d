"""Hosts on one machine for partition tests: network namespaces on a bridge, their own Postgres.

:func:`hosts` makes one namespace per name, each with a veth pair whose other
end is a port of a bridge in the root namespace; the test process (root
namespace) has the bridge's address, so it reaches every host, and every host
reaches the others, over real TCP. :meth:`Hosts.cut` sets a host's bridge
port down: its packets go nowhere (its own interface stays up, so nothing
tells its sockets), exactly as a switch port or a cable failing; :meth:`Hosts.heal`
brings it back and TCP delivers what it retransmits. Everything is removed on
exit, also when the test fails.

:func:`postgres_on` starts a PostgreSQL server (the machine's Debian binaries,
``/usr/lib/postgresql/*/bin``) inside a host, as the ``postgres`` user, on a
fresh data folder. Without namespaces (not root, no ``ip``) or without those
binaries the test fails with a message that says so: it never skips.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

#: How long a server may take to accept connections.
START_SECONDS = 60.0
_POLL_SECONDS = 0.1


class HostsUnavailable(AssertionError):
    """This machine cannot make the test's hosts (a failure, never a skip)."""


def _ip(*args: str) -> None:
    completed = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise HostsUnavailable(
            f"`ip {' '.join(args)}` failed ({completed.stderr.strip() or completed.returncode}): "
            "the partition test needs network namespaces (run it as root, with iproute2)"
        )


@dataclass
class Hosts:
    """The hosts of one test: their namespaces and addresses (see the module docstring)."""

    tag: str
    subnet: ipaddress.IPv4Network
    #: The test process's own address (the bridge's).
    here: str
    addresses: dict[str, str] = field(default_factory=dict)

    @property
    def bridge(self) -> str:
        """The bridge's interface name (root namespace)."""
        return f"pl{self.tag}br"

    def namespace(self, host: str) -> str:
        """The network namespace of ``host``."""
        return f"pl{self.tag}-{host}"

    def port(self, host: str) -> str:
        """The bridge port (root namespace end of the veth pair) of ``host``."""
        return f"pl{self.tag}{host}"

    def command(self, host: str, args: Iterable[str]) -> list[str]:
        """``args`` run inside ``host`` (``ip netns exec`` execs it: the pid is the program's)."""
        return ["ip", "netns", "exec", self.namespace(host), *args]

    def cut(self, host: str) -> None:
        """Cut ``host`` off: every packet to or from it is lost until :meth:`heal`."""
        _ip("link", "set", self.port(host), "down")

    def heal(self, host: str) -> None:
        """Connect ``host`` again."""
        _ip("link", "set", self.port(host), "up")

    def _add(self, host: str, address: str) -> None:
        namespace = self.namespace(host)
        _ip("netns", "add", namespace)
        _ip(
            "link",
            "add",
            self.port(host),
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            namespace,
        )
        _ip("link", "set", self.port(host), "master", self.bridge, "up")
        _ip("-n", namespace, "addr", "add", f"{address}/{self.subnet.prefixlen}", "dev", "eth0")
        _ip("-n", namespace, "link", "set", "eth0", "up")
        _ip("-n", namespace, "link", "set", "lo", "up")
        self.addresses[host] = address

    def _remove(self) -> None:
        for host in list(self.addresses):
            subprocess.run(["ip", "link", "del", self.port(host)], capture_output=True, check=False)
            subprocess.run(
                ["ip", "netns", "del", self.namespace(host)], capture_output=True, check=False
            )
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True, check=False)


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 of 10.213.0.0/16 that no interface of this machine uses."""
    used = subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True, check=False).stdout
    for _ in range(50):
        subnet = ipaddress.IPv4Network(f"10.213.{secrets.randbelow(254) + 1}.0/24")
        if f" {str(subnet.network_address)[:-1]}" not in used:
            return subnet
    raise HostsUnavailable("no free /24 in 10.213.0.0/16 for the test's hosts")


@contextmanager
def hosts(names: Iterable[str]) -> Iterator[Hosts]:
    """Namespaces ``names`` on a new bridge (see the module docstring); removed on exit."""
    if shutil.which("ip") is None:
        raise HostsUnavailable("the `ip` tool (iproute2) is missing: the partition test needs it")
    if os.geteuid() != 0:
        raise HostsUnavailable("the partition test makes network namespaces: run it as root")
    subnet = _free_subnet()
    addresses = [str(address) for address in subnet.hosts()]
    made = Hosts(tag=secrets.token_hex(2), subnet=subnet, here=addresses[0])
    try:
        _ip("link", "add", made.bridge, "type", "bridge")
        _ip("addr", "add", f"{made.here}/{subnet.prefixlen}", "dev", made.bridge)
        _ip("link", "set", made.bridge, "up")
        for index, name in enumerate(names, start=10):
            made._add(name, addresses[index])
        yield made
    finally:
        made._remove()


def wait_for_port(address: str, port: int, what: str, process: subprocess.Popen[bytes]) -> None:
    """Poll until ``address:port`` accepts TCP connections; fail if ``process`` exits first."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} before it listened")
        try:
            with socket.create_connection((address, port), timeout=1.0):
                return
        except OSError:
            time.sleep(_POLL_SECONDS)  # another process is starting: nothing to await
    raise TimeoutError(f"{what} did not listen on {address}:{port} within {START_SECONDS:g}s")


def _wait_for_queries(url: str, process: subprocess.Popen[bytes]) -> None:
    """Poll until the server at ``url`` answers a query (it listens before it has started up)."""
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            with psycopg.connect(url, connect_timeout=5) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(_POLL_SECONDS)  # "the database system is starting up": nothing to await


def _postgres_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"))
    if not found:
        raise HostsUnavailable(
            "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (Debian package "
            "postgresql): the partition test runs a PostgreSQL host of its own"
        )
    return found[-1].parent


@contextmanager
def postgres_on(network: Hosts, host: str, log: Path) -> Iterator[str]:
    """A fresh PostgreSQL server inside ``host``; yields its URL (trust auth, user postgres)."""
    binaries = _postgres_bin()
    data = Path(tempfile.mkdtemp(prefix="plait-partition-pg-"))
    shutil.chown(data, "postgres", "postgres")
    as_postgres = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
    address = network.addresses[host]
    process: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run(
            [
                *as_postgres,
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "--no-sync",
                "-E",
                "UTF8",
            ],
            check=True,
            capture_output=True,
        )
        with (data / "pg_hba.conf").open("a", encoding="utf-8") as hba:
            hba.write(f"host all all {network.subnet} trust\n")
        with log.open("wb") as out:
            process = subprocess.Popen(
                network.command(
                    host,
                    [
                        *as_postgres,
                        str(binaries / "postgres"),
                        "-D",
                        str(data),
                        "-c",
                        f"listen_addresses={address}",
                        "-c",
                        f"unix_socket_directories={data}",
                        "-c",
                        "max_connections=100",
                        # Its own throwaway server: no crash to survive, so no flushes to wait for.
                        "-c",
                        "fsync=off",
                    ],
                ),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_for_port(address, 5432, "PostgreSQL", process)
        url = f"postgresql://postgres@{address}:5432/postgres"
        _wait_for_queries(url, process)
        yield url
    finally:
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(data, ignore_errors=True)
