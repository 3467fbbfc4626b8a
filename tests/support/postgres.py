"""A throwaway PostgreSQL server for the tests, from Debian's ``postgresql`` package.

``initdb`` runs in a temporary folder (as the ``postgres`` user when the suite runs as root, since
PostgreSQL refuses to run as root), the server listens on a free port of 127.0.0.1 only, and it is
stopped and its folder removed at the end. Without PostgreSQL the tests that need it skip, unless
``CONTEXTWISE_REQUIRE_POSTGRES=1`` (set by ``.ci/run``) makes its absence a failure.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REQUIRED = os.environ.get("CONTEXTWISE_REQUIRE_POSTGRES") == "1"


def find_bindir() -> Path | None:
    """The newest PostgreSQL ``bin`` folder with ``initdb`` and ``pg_ctl``, if any."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda path: int(path.split("/")[4])
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@dataclass(frozen=True)
class Server:
    """A running server: its port, and a way to make a fresh database on it."""

    port: int

    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL of a database on the server."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """Create an empty database and return its SQLAlchemy URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True
        ) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        return self.url(name)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_owner(command: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


@contextmanager
def throwaway_postgres() -> Iterator[Server]:
    """Start a server for the duration of the block; skip (or fail, when required) without one."""
    bindir = find_bindir()
    if bindir is None:
        message = "PostgreSQL is not installed (Debian package 'postgresql')"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    # Not under pytest's own temporary folder: its parents are private to root, and the server
    # runs as the postgres user.
    folder = Path(tempfile.mkdtemp(prefix="contextwise-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data, log = folder / "data", folder / "server.log"
    port = _free_port()
    run = {"check": True, "capture_output": True, "text": True}
    try:
        subprocess.run(
            _as_owner([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
            **run,  # type: ignore[call-overload]
        )
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
        subprocess.run(
            _as_owner(
                [
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-o",
                    options,
                    "-l",
                    str(log),
                    "-w",
                    "start",
                ]
            ),
            **run,  # type: ignore[call-overload]
        )
        try:
            yield Server(port)
        finally:
            subprocess.run(
                _as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                check=False,
                capture_output=True,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
