"""Damaged rows and read-only or busy databases, the same on SQLite and PostgreSQL (issue 30).

A row that was tampered with is ``store_row_unreadable`` on both stores; a reader never waits for
a writer (the layout is checked by reading it); a read-only file, folder or database role can be
read, and a write to it is ``store_read_only``.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from contextwise import ContextSession, SessionStoreError, SQLAlchemyStore, SQLiteStore
from contextwise.session import POSITION_GAP
from support.errors import assert_translated

AUDIT: dict[str, Any] = {"mode": "audit"}
TRIM = {
    "mode": "reduce",
    "trigger_chars": 30,
    "steps": [
        {"id": "trim", "kind": "trim", "fragment_id": "history", "grouping": {"kind": "message"}}
    ],
}
MAX = 2**63 - 1
REPORT = {"usage": {"prompt_tokens": 12, "completion_tokens": 3}}


def turn(n: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"question {n}"},
        {"role": "assistant", "content": f"answer {n}"},
    ]


def assert_coded(caught: pytest.ExceptionInfo[SessionStoreError], code: str) -> None:
    assert caught.value.code == code, caught.value
    assert_translated(caught.value)


class Database:
    """One store's database, with a way to tamper with it behind the store's back."""

    def __init__(self, kind: str, location: str) -> None:
        self.kind = kind
        self.location = location

    def store(self) -> SQLiteStore | SQLAlchemyStore:
        if self.kind == "sqlite":
            return SQLiteStore(self.location)
        return SQLAlchemyStore(self.location)

    def tamper(self, *statements: str) -> None:
        if self.kind == "sqlite":
            connection = sqlite3.connect(self.location)
            with connection:
                for statement in statements:
                    connection.execute(statement)
            connection.close()
            return
        import psycopg

        with psycopg.connect(_libpq(self.location), autocommit=True) as connection:
            for statement in statements:
                connection.execute(statement)  # type: ignore[arg-type]


def _libpq(url: str, user: str = "postgres") -> str:
    """The libpq connection string of a test server's SQLAlchemy URL."""
    address, database = url.split("@", 1)[1].split("/", 1)
    host, port = address.split(":")
    return f"host={host} port={port} user={user} dbname={database}"


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A database holding session ``chat``: one turn and one usage record."""
    if request.param == "sqlite":
        found = Database("sqlite", str(tmp_path / "sessions.db"))
    else:
        found = Database("postgresql", request.getfixturevalue("postgres_server").create_database())
    store = found.store()
    session = ContextSession(AUDIT, store, "chat")
    session.add(turn(1))
    session.record_usage(REPORT, model="gpt-4o")
    store.close()
    yield found


def _calls(session: ContextSession) -> dict[str, Callable[[], object]]:
    return {
        "messages": session.messages,
        "add": lambda: session.add(turn(2)),
        "context": session.context,
    }


def test_a_version_stored_as_text_is_a_damaged_row(database: Database) -> None:
    if database.kind == "postgresql":  # a BIGINT column holds no text: make it a text column
        database.tamper(
            "ALTER TABLE contextwise_sessions ALTER COLUMN version TYPE TEXT USING version::text"
        )
    database.tamper("UPDATE contextwise_sessions SET version = 'v'")
    store = database.store()
    for name, call in _calls(ContextSession(TRIM, store, "chat")).items():
        with pytest.raises(SessionStoreError) as caught:
            call()
        assert_coded(caught, "store_row_unreadable")
        assert "version" in str(caught.value), name
    store.close()


@pytest.mark.parametrize(
    "record",
    [
        "[1, 2]",
        '"text"',
        "null",
        "{}",
        '{"usage": 5}',
        '{"usage": {}, "kind": "model", "at": "2026-12-04T00:00:00+00:00", '
        '"cost": {"input": "x", "output": "1", "source": "s", "model": "m"}}',
    ],
)
def test_a_usage_row_that_is_not_a_record_is_a_damaged_row(database: Database, record: str) -> None:
    database.tamper(f"UPDATE contextwise_usage SET record = '{record}'")
    store = database.store()
    with pytest.raises(SessionStoreError) as caught:
        ContextSession(AUDIT, store, "chat").usage()
    assert_coded(caught, "store_row_unreadable")
    assert caught.value.params == {"session_id": "chat"}
    store.close()


def test_a_calibration_state_that_is_not_an_object_is_a_damaged_row(database: Database) -> None:
    store = database.store()
    store.save_state("calibration", {"ratio": 1})
    database.tamper("UPDATE contextwise_states SET state = '[1, 2]'")
    with pytest.raises(SessionStoreError) as caught:
        store.load_state("calibration")
    assert_coded(caught, "store_row_unreadable")
    store.close()


@pytest.mark.parametrize(
    ("column", "value"),
    [("position", MAX - 5), ("position", -(2**63)), ("item_id", MAX)],
)
def test_a_message_position_or_id_no_store_writes_is_a_damaged_row(
    database: Database, column: str, value: int
) -> None:
    database.tamper(f"UPDATE contextwise_messages SET {column} = {value} WHERE item_id = 2")
    store = database.store()
    with pytest.raises(SessionStoreError) as caught:
        ContextSession(TRIM, store, "chat").messages()
    assert_coded(caught, "store_row_unreadable")
    store.close()


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("last_item", MAX - 10),
        ("last_item", MAX // POSITION_GAP),  # its next positions would pass 2**63
        ("last_change", MAX),
        ("version", MAX),
    ],
)
def test_a_counter_near_2_63_is_a_damaged_row_and_nothing_is_written(
    database: Database, column: str, value: int
) -> None:
    database.tamper(f"UPDATE contextwise_sessions SET {column} = {value}")
    store = database.store()
    session = ContextSession(TRIM, store, "chat")
    assert len(session.messages()) == 2  # reading is fine
    if column == "last_item":
        with pytest.raises(SessionStoreError) as caught:
            session.add(turn(2))
    else:
        session.add(turn(2))
        with pytest.raises(SessionStoreError) as caught:
            session.context()  # the reduction's change moves the counters
    assert_coded(caught, "store_row_unreadable")
    assert len(session.messages()) == (2 if column == "last_item" else 4)
    store.close()


# --- readers never wait for a writer -----------------------------------------------------------

READER = textwrap.dedent(
    """
    import json, sys
    from contextwise import ContextSession, SessionStoreError, SQLiteStore

    store = SQLiteStore(sys.argv[1], timeout=0)
    session = ContextSession({"mode": "audit"}, store, "chat")
    found = {
        "messages": [m["content"] for m in session.messages()],
        "calls": session.usage().total.calls,
        "archive": len(session.archive()),
    }
    try:
        session.add([{"role": "user", "content": "one more"}])
    except SessionStoreError as error:
        found["add"] = error.code
    print(json.dumps(found))
    """
)


def _sqlite_with_a_turn(path: Path) -> None:
    store = SQLiteStore(path)
    session = ContextSession(AUDIT, store, "chat")
    session.add(turn(1))
    session.record_usage(REPORT, model="gpt-4o")
    store.close()


def _read(path: Path, prefix: tuple[str, ...] = ()) -> dict[str, Any]:
    """Open the file in a fresh process, read the session and try to add to it."""
    result = subprocess.run(
        [*prefix, sys.executable, "-c", READER, str(path)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


EXPECTED = {"messages": ["question 1", "answer 1"], "calls": 1, "archive": 0}


def test_a_fresh_store_reads_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    _sqlite_with_a_turn(path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE')\n"
            "c.execute(\"INSERT INTO contextwise_states VALUES ('held', '{}')\")\n"
            "print('holding', flush=True)\n"
            "sys.stdin.readline()\n"
            "c.execute('ROLLBACK')\n",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        assert _read(path) == {**EXPECTED, "add": "store_locked"}
    finally:
        holder.communicate("\n", timeout=60)
    assert _read(path) == EXPECTED  # the lock released, the add went through


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder other users may enter (pytest's own is private to its user)."""
    folder = Path(tempfile.mkdtemp(prefix="contextwise-ro-"))
    folder.chmod(0o755)
    yield folder
    folder.chmod(0o755)
    shutil.rmtree(folder, ignore_errors=True)


def _without_privileges() -> list[str]:
    """A prefix that runs a command without root's capabilities when the tests run as root (to
    whom every file is writable): the same user, held to the files' permissions."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without util-linux's setpriv: every file is writable")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"]


@pytest.mark.parametrize("medium", ["read-only file", "read-only folder"])
def test_a_read_only_file_or_medium_is_read_and_a_write_is_store_read_only(
    shared_folder: Path, medium: str
) -> None:
    path = shared_folder / "sessions.db"
    _sqlite_with_a_turn(path)
    assert not Path(f"{path}-wal").exists()  # closed cleanly: everything is in the file
    path.chmod(0o444)
    # A writable folder lets SQLite create the -shm file that WAL readers share; a read-only
    # one (a read-only medium) does not, and the file is read as immutable.
    shared_folder.chmod(0o777 if medium == "read-only file" else 0o555)
    assert _read(path, tuple(_without_privileges())) == {**EXPECTED, "add": "store_read_only"}
    shared_folder.chmod(0o755)
    path.chmod(0o644)
    assert _read(path) == EXPECTED  # writable again: the add went through
    assert _read(path)["messages"] == ["question 1", "answer 1", "one more"]


def test_a_new_file_in_a_read_only_folder_cannot_be_opened(shared_folder: Path) -> None:
    shared_folder.chmod(0o555)
    code = (
        "import sys\n"
        "from contextwise import SessionStoreError, SQLiteStore\n"
        "try:\n"
        "    SQLiteStore(sys.argv[1]).read('chat')\n"
        "except SessionStoreError as error:\n"
        "    print(error.code)\n"
    )
    result = subprocess.run(
        [*_without_privileges(), sys.executable, "-c", code, str(shared_folder / "new.db")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "store_cannot_open\n"), result.stderr


def test_postgresql_read_only_role_and_database_are_read_and_refuse_writes(
    postgres_server: Any,
) -> None:
    import psycopg

    url = postgres_server.create_database()
    store = SQLAlchemyStore(url)
    ContextSession(AUDIT, store, "chat").add(turn(1))
    ContextSession(AUDIT, store, "chat").record_usage(REPORT, model="gpt-4o")
    store.close()
    database = url.rsplit("/", 1)[1]
    role = f"reader_{database}"
    with psycopg.connect(_libpq(url), autocommit=True) as admin:
        for statement in (
            f'CREATE ROLE "{role}" LOGIN',
            f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"',
        ):
            admin.execute(statement)  # type: ignore[arg-type]
    reader_url = url.replace("postgres@", f"{role}@")

    def check(location: str) -> None:
        reader = SQLAlchemyStore(location, timeout=1)
        session = ContextSession(AUDIT, reader, "chat")
        assert [m["content"] for m in session.messages()] == EXPECTED["messages"]
        assert session.usage().total.calls == 1
        with pytest.raises(SessionStoreError) as caught:
            session.add(turn(2))
        assert_coded(caught, "store_read_only")
        reader.close()

    check(reader_url)
    with psycopg.connect(_libpq(url, user="postgres"), autocommit=True) as admin:
        admin.execute(
            f'ALTER DATABASE "{database}" SET default_transaction_read_only = on'  # type: ignore[arg-type]
        )
    check(url)


@pytest.mark.parametrize(
    "damage",
    [
        "item_count = 9223372036854775000",  # a retry would list that many ids
        "first_item = 9223372036854775000",
        "version = -1",
    ],
)
def test_a_damaged_idempotency_row_is_a_damaged_row_on_retry(
    database: Database, damage: str
) -> None:
    store = database.store()
    ContextSession(AUDIT, store, "chat").add(turn(2), idempotency_key="turn-2")
    database.tamper(f"UPDATE contextwise_idempotency SET {damage}")
    with pytest.raises(SessionStoreError) as caught:
        ContextSession(AUDIT, store, "chat").add(turn(2), idempotency_key="turn-2")
    assert_coded(caught, "store_row_unreadable")
    store.close()


def test_a_usage_sequence_near_2_63_is_a_damaged_row(database: Database) -> None:
    database.tamper(f"UPDATE contextwise_usage SET seq = {MAX}")
    store = database.store()
    with pytest.raises(SessionStoreError) as caught:
        ContextSession(AUDIT, store, "chat").record_usage(REPORT, model="gpt-4o")
    assert_coded(caught, "store_row_unreadable")
    assert ContextSession(AUDIT, store, "chat").usage().total.calls == 1  # nothing was added
    store.close()


@pytest.mark.parametrize("version", ["'v'", str(MAX), "-1"])
def test_a_damaged_conversation_version_is_a_damaged_row(database: Database, version: str) -> None:
    store = database.store()
    assert store.save_conversation("conversation", {"seen": 1}, 0) == 1
    if database.kind == "postgresql" and version == "'v'":
        database.tamper(
            "ALTER TABLE contextwise_conversations ALTER COLUMN version TYPE TEXT "
            "USING version::text"
        )
    database.tamper(f"UPDATE contextwise_conversations SET version = {version}")
    for call in (
        lambda: store.load_conversation("conversation"),
        lambda: store.save_conversation("conversation", {"seen": 2}, 1),
    ):
        with pytest.raises(SessionStoreError) as caught:
            call()
        assert_coded(caught, "store_row_unreadable")
    store.close()


def test_a_fresh_postgresql_store_reads_while_another_session_writes(postgres_server: Any) -> None:
    import psycopg

    url = postgres_server.create_database()
    store = SQLAlchemyStore(url)
    ContextSession(AUDIT, store, "chat").add(turn(1))
    ContextSession(AUDIT, store, "chat").record_usage(REPORT, model="gpt-4o")
    store.close()
    with psycopg.connect(_libpq(url)) as holder:  # a writer, mid-transaction: its row lock and
        holder.execute("SELECT * FROM contextwise_sessions FOR UPDATE")  # the layout's lock
        holder.execute("SELECT pg_advisory_xact_lock(7305671234)")
        reader = SQLAlchemyStore(url, timeout=0.5)
        session = ContextSession(AUDIT, reader, "chat")
        assert [m["content"] for m in session.messages()] == EXPECTED["messages"]
        assert session.usage().total.calls == 1
        with pytest.raises(SessionStoreError) as caught:
            session.add(turn(2))
        assert_coded(caught, "store_locked")
        reader.close()
