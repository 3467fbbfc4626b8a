"""Shared fixtures: the repository's paths and the built site."""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]

# Speed is measured by the benchmarks, never by the tests: on a loaded machine (CI shares two
# cores) Hypothesis' deadline and "too slow" health check would fail correct code.
settings.register_profile(
    "contextwise", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("contextwise")

FRAMEWORK_END_TO_END = (
    "test_conversation_memory.py",
    "test_integrations_langchain.py",
    "test_integrations_openai_agents.py",
    "test_integrations_overflow.py",
    "test_integrations_pydantic_ai.py",
    "test_integrations_recall.py",
    "test_newcomer_report.py",
)
"""The modules that run each framework's agent end to end (with its own offline test model)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` the framework end-to-end tests and every test that builds the site.

    The browser, wheel and crash tests carry the mark themselves. ``make test`` and CI run every
    test; ``pytest -m "not slow"`` leaves these out while working.
    """
    for item in items:
        if item.path.name in FRAMEWORK_END_TO_END or "built_site" in getattr(
            item, "fixturenames", ()
        ):
            item.add_marker(pytest.mark.slow)


@dataclass(frozen=True)
class BuiltSite:
    """The result of ``mkdocs build --strict`` into a temporary folder."""

    path: Path
    returncode: int
    output: str


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """Build the three-language site once per session, strictly, from the committed pages."""
    target = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(target)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return BuiltSite(target, result.returncode, result.stdout + result.stderr)


def site_prefix() -> str:
    """The path the site is published under (``/contextwise/`` for a GitHub project page)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    found = re.search(r"^site_url:\s*(\S+)", config, flags=re.M)
    return urlsplit(found.group(1) if found else "/").path.rstrip("/") + "/"


class _Handler(http.server.SimpleHTTPRequestHandler):
    prefix = "/"

    def translate_path(self, path: str) -> str:
        if path.startswith(self.prefix):
            path = "/" + path[len(self.prefix) :]
        return super().translate_path(path)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def site_url(built_site: BuiltSite) -> Iterator[str]:
    """Serve the built site on 127.0.0.1 (a free port) under its published path; yield its URL."""
    if built_site.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{built_site.output}")
    prefix = site_prefix()
    handler = type("Handler", (_Handler,), {"prefix": prefix})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(built_site.path))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{prefix}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """A throwaway PostgreSQL server for the whole run (see ``tests/support/postgres.py``)."""
    from support.postgres import throwaway_postgres

    with throwaway_postgres() as server:
        yield server
