"""A throwaway PostgreSQL cluster for tests: ``postgres_cluster`` and ``postgres_url``.

``postgres_cluster`` (session scope) runs ``initdb`` in a temporary directory
and starts a server listening only on a Unix socket in a short temporary
directory (no TCP), with ``trust`` authentication for the ``postgres`` role.
PostgreSQL refuses to run as root, so as root the directories are given to
the ``postgres`` user and the binaries run through ``runuser -u postgres``.
Teardown stops the server and removes both directories.
``postgres_url`` gives each test a fresh database in that cluster.

The binaries are found on ``PATH`` or under ``/usr/lib/postgresql/<n>/bin``
(``$SHEDPROTO_PG_BIN`` overrides). Where none exist, or psycopg (the
``postgres`` extra) is not installed, the fixtures skip with that reason.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["PostgresCluster", "find_postgres_bin", "postgres_cluster", "postgres_url"]


def find_postgres_bin() -> str | None:
    """Return the directory holding ``initdb`` and ``pg_ctl``, or ``None``."""
    override = os.environ.get("SHEDPROTO_PG_BIN")
    if override:
        return override if os.path.exists(os.path.join(override, "initdb")) else None
    initdb = shutil.which("initdb")
    if initdb is not None:
        return os.path.dirname(os.path.realpath(initdb))
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    return os.path.dirname(found[-1]) if found else None


def _reachable_base() -> str:
    """Return a short temporary directory other users can traverse (for the server user).

    ``/tmp`` first; where a machine's ``/tmp`` is not searchable by others, the
    next of ``/var/tmp`` and ``/dev/shm`` that is.
    """
    for base in ("/tmp", "/var/tmp", "/dev/shm"):
        path = Path(base)
        if path.is_dir() and all(p.stat().st_mode & 0o001 for p in (path, *path.parents)):
            return base
    raise RuntimeError("no temporary directory the postgres user can reach")


class PostgresCluster:
    """A running throwaway cluster; see the module docstring."""

    def __init__(self, bin_dir: str) -> None:
        self.bin_dir = bin_dir
        self._user: str | None = "postgres" if os.geteuid() == 0 else None
        base = _reachable_base() if self._user is not None else "/tmp"
        self.data_dir = Path(tempfile.mkdtemp(prefix="sp-pgdata-", dir=base))
        self.socket_dir = Path(tempfile.mkdtemp(prefix="sp-pg-", dir=base))
        self._counter = itertools.count(1)
        if self._user is not None:
            entry = pwd.getpwnam(self._user)
            for path in (self.data_dir, self.socket_dir):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        try:
            self._run(
                "initdb",
                "-D",
                str(self.data_dir / "db"),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
            )
            self.start()
        except BaseException:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            shutil.rmtree(self.socket_dir, ignore_errors=True)
            raise

    def _run(self, tool: str, *args: str) -> None:
        command = [os.path.join(self.bin_dir, tool), *args]
        if self._user is not None:
            command = ["runuser", "-u", self._user, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"{tool} failed ({result.returncode}): {result.stderr.strip()}")

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-c listen_addresses='' -c unix_socket_directories={self.socket_dir}"
            " -c fsync=off -c max_connections=100"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data_dir / "db"),
            "-o",
            options,
            "-w",
            "-l",
            str(self.data_dir / "server.log"),
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: abort sessions; ``immediate``: like a crash)."""
        self._run("pg_ctl", "-D", str(self.data_dir / "db"), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        """Stop (``fast``) and start again: every connection is cut."""
        self.stop()
        self.start()

    def url(self, dbname: str = "postgres") -> str:
        """Return the ``postgresql://`` URL of ``dbname`` over the Unix socket."""
        return f"postgresql://postgres@/{dbname}?host={self.socket_dir}"

    def create_database(self) -> str:
        """Create a fresh empty database; return its URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._counter)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop the database ``url`` names, ending its sessions; a stopped server is left so.

        Keeps the cluster small, so closing it stays quick however many tests ran.
        """
        import psycopg

        name = url.rpartition("/")[2].partition("?")[0]
        with contextlib.suppress(psycopg.Error), psycopg.connect(
            self.url(), autocommit=True, connect_timeout=10
        ) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def close(self) -> None:
        """Stop the server (if running) and remove its directories."""
        with contextlib.suppress(RuntimeError):
            self.stop("immediate")
        shutil.rmtree(self.data_dir, ignore_errors=True)
        shutil.rmtree(self.socket_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """Yield a running throwaway cluster (skips without PostgreSQL binaries or psycopg)."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")
    bin_dir = find_postgres_bin()
    if bin_dir is None:
        pytest.skip("no PostgreSQL binaries (initdb) on PATH or under /usr/lib/postgresql")
    cluster = PostgresCluster(bin_dir)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """Yield the URL of a fresh database in the session's cluster; dropped after the test."""
    url = postgres_cluster.create_database()
    try:
        yield url
    finally:
        postgres_cluster.drop_database(url)
