"""Sessions: one suite, run on every store (memory, SQLite, PostgreSQL), crash tests included."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from contextwise import (
    SESSION_SCHEMA_VERSION,
    AddResult,
    ContextSession,
    Fragment,
    InvalidTypeError,
    InvalidValueError,
    MemoryStore,
    MessagesFragment,
    MissingDependencyError,
    PolicyConfigurationError,
    SessionConflictError,
    SessionStore,
    SessionStoreError,
    SQLAlchemyStore,
    SQLiteStore,
    is_pinned,
    message_chars,
    process_context,
)
from support.errors import assert_translated

WRITER = Path(__file__).parent / "support" / "session_writer.py"

TRIM = {
    "mode": "reduce",
    "trigger_chars": 60,
    "target_input_chars": 40,
    "steps": [
        {
            "id": "trim",
            "kind": "trim",
            "fragment_id": "history",
            "grouping": {"kind": "message"},
            "target_chars": 40,
        }
    ],
}

StoreFactory = Callable[[], SessionStore]


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Open a store on one database; each call opens it again, as another process would (the
    memory store can only be shared, so it is the same object)."""
    opened: list[Any] = []
    if request.param == "memory":
        memory = MemoryStore()

        def factory() -> SessionStore:
            return memory

    elif request.param == "sqlite":

        def factory() -> SessionStore:
            opened.append(SQLiteStore(tmp_path / "sessions.db"))
            return opened[-1]  # type: ignore[no-any-return]

    else:
        url = request.getfixturevalue("postgres_server").create_database()

        def factory() -> SessionStore:
            opened.append(SQLAlchemyStore(url))
            return opened[-1]  # type: ignore[no-any-return]

    yield factory
    for store in opened:
        store.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def durable(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """A durable store's kind and location, for the tests that reopen or kill."""
    if request.param == "sqlite":
        return "sqlite", str(tmp_path / "sessions.db")
    return "postgresql", request.getfixturevalue("postgres_server").create_database()


def turn(n: int, size: int = 10) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"q{n}".ljust(size, ".")},
        {"role": "assistant", "content": f"a{n}".ljust(size, ".")},
    ]


def contents(messages: list[Any]) -> list[str]:
    return [m["content"] for m in messages]


def everything(session: ContextSession) -> list[str]:
    """Context and archive together, in the order the messages were added."""
    items = contents(session.messages()) + contents([a.message for a in session.archive()])
    return sorted(items, key=lambda text: (int(text[1:].split(".")[0]), text[0] == "a"))


def test_context_trims_stores_the_reduction_and_archives_what_left(
    open_store: StoreFactory,
) -> None:
    session = ContextSession(TRIM, open_store(), "chat")
    for n in range(4):
        session.add(turn(n))
    result = session.context()
    kept = contents(list(result.fragment("history").messages))
    assert kept == ["q2........", "a2........", "q3........", "a3........"]
    assert contents(session.messages()) == kept
    archived = session.archive()
    assert contents([a.message for a in archived]) == [
        "q0........",
        "a0........",
        "q1........",
        "a1........",
    ]
    assert {a.step for a in archived} == {"trim"} and len({a.change_id for a in archived}) == 1
    assert all(a.at.tzinfo is not None for a in archived)
    again = ContextSession(TRIM, open_store(), "chat")
    assert contents(again.messages()) == kept
    assert again.context().report.changes == ()


def test_each_step_starts_from_the_stored_reduction_and_nothing_is_lost(
    open_store: StoreFactory,
) -> None:
    session = ContextSession(TRIM, open_store(), "chat")
    added: list[str] = []
    for n in range(25):
        session.add(turn(n, size=5 + n % 7))
        added += [m["content"] for m in turn(n, size=5 + n % 7)]
        session.context()
        assert session.messages() == ContextSession(TRIM, open_store(), "chat").messages()
    assert everything(session) == added
    assert len(set(everything(session))) == len(added)
    archive = session.archive()
    assert [a.change_id for a in archive] == sorted(a.change_id for a in archive)


def test_two_sessions_in_one_store_are_separate(open_store: StoreFactory) -> None:
    store = open_store()
    first, second = ContextSession(TRIM, store, "a"), ContextSession(TRIM, store, "b")
    first.add(turn(1))
    second.add(turn(2))
    assert contents(first.messages()) == ["q1........", "a1........"]
    assert contents(second.messages()) == ["q2........", "a2........"]


def test_restore_puts_a_change_back_in_place(open_store: StoreFactory) -> None:
    session = ContextSession(TRIM, open_store(), "chat")
    for n in range(4):
        session.add(turn(n))
    session.context()
    change_id = session.archive()[0].change_id
    restored = session.restore(change_id)
    assert contents(restored) == ["q0........", "a0........", "q1........", "a1........"]
    assert contents(session.messages()) == [m["content"] for n in range(4) for m in turn(n)]
    assert session.archive() == []
    with pytest.raises(InvalidValueError) as caught:
        session.restore(change_id)
    assert caught.value.code == "unknown_change"
    assert_translated(caught.value)


def test_restoring_a_compression_archives_its_summary(open_store: StoreFactory) -> None:
    policy = {
        "mode": "reduce",
        "trigger_chars": 60,
        "steps": [
            {
                "id": "sum",
                "kind": "compress",
                "fragment_id": "history",
                "compressor": "short",
                "grouping": {"kind": "message"},
                "keep_groups": 2,
            }
        ],
    }
    session = ContextSession(policy, open_store(), "chat", compressors={"short": lambda m: "S"})
    for n in range(4):
        session.add(turn(n))
    session.context()
    assert [m["content"] for m in session.messages()] == ["S", "q3........", "a3........"]
    change_id = session.archive()[0].change_id
    session.restore(change_id)
    assert contents(session.messages()) == [m["content"] for n in range(4) for m in turn(n)]
    [summary] = session.archive()
    assert (summary.message["content"], summary.step) == ("S", "restore")


def test_a_failing_compressor_leaves_the_session_unchanged(open_store: StoreFactory) -> None:
    def broken(messages: object) -> str:
        raise OSError("model down")

    policy = {
        "mode": "reduce",
        "trigger_chars": 30,
        "steps": [
            {"id": "sum", "kind": "compress", "fragment_id": "history", "compressor": "broken"}
        ],
    }
    store = open_store()
    session = ContextSession(policy, store, "chat", compressors={"broken": broken})
    for n in range(3):
        session.add(turn(n))
    before = store.read("chat")
    result = session.context()
    assert [change.status for change in result.report.changes] == ["failed"]
    assert store.read("chat") == before
    assert session.archive() == []
    assert contents(session.messages()) == [m["content"] for n in range(3) for m in turn(n)]


def test_two_writers_conflict_through_the_version(open_store: StoreFactory) -> None:
    """The loser's reduction is refused with a coded error; nothing is lost or duplicated."""
    other = ContextSession(TRIM, open_store(), "chat")

    def summarize_while_the_other_writer_reduces(messages: object) -> str:
        other.context()
        return "S"

    policy = {
        "mode": "reduce",
        "trigger_chars": 60,
        "steps": [
            {
                "id": "sum",
                "kind": "compress",
                "fragment_id": "history",
                "compressor": "sum",
                "grouping": {"kind": "message"},
            }
        ],
    }
    session = ContextSession(
        policy, open_store(), "chat", compressors={"sum": summarize_while_the_other_writer_reduces}
    )
    added: list[str] = []
    for n in range(4):
        session.add(turn(n))
        added += contents(turn(n))
    with pytest.raises(SessionConflictError) as caught:
        session.context()
    assert caught.value.code == "session_conflict"
    assert caught.value.params["expected"] == 0 and caught.value.params["found"] == 1
    assert_translated(caught.value)
    assert everything(other) == added
    assert everything(session) == added
    session.add(turn(4))
    assert contents(session.messages())[-2:] == contents(turn(4))


def test_each_message_is_measured_once(open_store: StoreFactory) -> None:
    calls: list[str] = []

    def count(text: str) -> int:
        calls.append(text)
        return len(text)

    policy = {**TRIM, "trigger_tokens": 60, "target_input_tokens": 40}
    session = ContextSession(policy, open_store(), "chat", counter=count)
    for n in range(30):
        session.add(turn(n))
        session.context()
    assert len(calls) == 60
    assert sorted(calls) == sorted(m["content"] for n in range(30) for m in turn(n))
    assert session.context().report.tokens is not None


async def test_the_async_faces(open_store: StoreFactory) -> None:
    session = ContextSession(TRIM, open_store(), "chat")
    for n in range(4):
        await session.aadd(turn(n))
    result = await session.acontext()
    assert contents(await session.amessages()) == contents(
        list(result.fragment("history").messages)
    )
    archived = await session.aarchive()
    assert len(archived) == 4
    restored = await session.arestore(archived[0].change_id)
    assert len(restored) == 4 and await session.aarchive() == []


def test_the_sync_faces_work_inside_a_running_event_loop(open_store: StoreFactory) -> None:
    async def handler() -> list[Any]:
        session = ContextSession(TRIM, open_store(), "chat")
        session.add(turn(1))
        session.context()
        return session.messages()

    assert contents(asyncio.run(handler())) == contents(turn(1))


def test_framework_objects_are_stored_through_their_own_json(open_store: StoreFactory) -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    session = ContextSession({"mode": "audit"}, open_store(), "chat")
    try:
        session.add([HumanMessage("Hello"), AIMessage("Hi")])
    except InvalidTypeError as err:  # the engine reads these shapes once issue 11 is in
        pytest.skip(f"this engine does not read LangChain messages yet: {err.code}")
    again = ContextSession({"mode": "audit"}, open_store(), "chat").messages()
    assert again == [HumanMessage("Hello"), AIMessage("Hi")]
    trimmed = ContextSession(TRIM, open_store(), "chat")
    trimmed.add([HumanMessage("q" * 30), AIMessage("a" * 30)])
    kept = trimmed.context().fragment("history").messages
    assert list(kept or ()) == [AIMessage("a" * 30)] == trimmed.messages()
    assert [item.message for item in trimmed.archive()] == [
        HumanMessage("Hello"),
        AIMessage("Hi"),
        HumanMessage("q" * 30),
    ]


def test_pydantic_ai_messages_are_stored_through_their_own_json(
    open_store: StoreFactory,
) -> None:
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    messages = [
        ModelRequest(parts=[UserPromptPart(content="Hello")]),
        ModelResponse(parts=[TextPart(content="Hi")]),
    ]
    session = ContextSession({"mode": "audit"}, open_store(), "chat")
    try:
        session.add(messages)
    except InvalidTypeError as err:  # the engine reads these shapes once issue 11 is in
        pytest.skip(f"this engine does not read pydantic-ai messages yet: {err.code}")
    again = ContextSession({"mode": "audit"}, open_store(), "chat").messages()
    assert again == messages


def test_a_missing_store_library_is_a_coded_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)
    with pytest.raises(MissingDependencyError) as caught:  # as the integrations raise it
        SQLAlchemyStore("postgresql+psycopg://localhost/db")
    assert (caught.value.code, caught.value.params["extra"]) == ("missing_extra", "postgresql")
    assert isinstance(caught.value, ImportError)
    assert_translated(caught.value)


def test_a_bad_database_url_is_a_coded_error() -> None:
    with pytest.raises(SessionStoreError) as caught:
        SQLAlchemyStore("not a url at all://")
    assert caught.value.code == "invalid_store_url"
    assert_translated(caught.value)


def test_postgresql_is_required_in_ci_and_skipped_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    import support.postgres as postgres

    monkeypatch.setattr(postgres, "find_bindir", lambda: None)
    monkeypatch.setattr(postgres, "REQUIRED", True)
    with pytest.raises(pytest.fail.Exception), postgres.throwaway_postgres():
        pass
    monkeypatch.setattr(postgres, "REQUIRED", False)
    with pytest.raises(pytest.skip.Exception), postgres.throwaway_postgres():
        pass


def test_what_a_store_cannot_hold_is_refused_with_a_code(open_store: StoreFactory) -> None:
    session = ContextSession(TRIM, open_store(), "chat")
    with pytest.raises(InvalidTypeError) as caught:
        session.add([object()])
    assert caught.value.code == "unsupported_message_object"
    assert_translated(caught.value)
    with pytest.raises(InvalidValueError) as caught_value:
        session.add([{"role": "user", "content": "x", "when": {1, 2}}])
    assert caught_value.value.code == "message_not_json"
    assert caught_value.value.params["index"] == 0
    assert_translated(caught_value.value)
    assert session.messages() == []


def test_bad_arguments_are_coded_errors(open_store: StoreFactory) -> None:
    with pytest.raises(InvalidTypeError) as store_error:
        ContextSession(TRIM, object(), "chat")  # type: ignore[arg-type]
    assert store_error.value.code == "invalid_session_store"
    assert_translated(store_error.value)
    with pytest.raises(InvalidValueError) as blank:
        ContextSession(TRIM, open_store(), " ")
    assert blank.value.code == "blank_session_id"
    assert_translated(blank.value)
    other_fragment = {**TRIM, "steps": [{**TRIM["steps"][0], "fragment_id": "notes"}]}  # type: ignore[index, dict-item]
    with pytest.raises(PolicyConfigurationError) as policy_error:
        ContextSession(other_fragment, open_store(), "chat")
    assert policy_error.value.code == "unknown_fragment"


def test_the_schema_version_is_recorded_and_checked(durable: tuple[str, str]) -> None:
    kind, location = durable
    store = SQLiteStore(location) if kind == "sqlite" else SQLAlchemyStore(location)
    ContextSession(TRIM, store, "chat").add(turn(1))
    with store.transaction(True) as tx:
        assert tx.rows("SELECT version FROM contextwise_schema", {}) == [(SESSION_SCHEMA_VERSION,)]
        tx.rows("UPDATE contextwise_schema SET version = 99", {})
    store.close()
    reopened = SQLiteStore(location) if kind == "sqlite" else SQLAlchemyStore(location)
    with pytest.raises(SessionStoreError) as caught:
        reopened.read("chat")
    assert caught.value.code == "session_schema_mismatch"
    assert caught.value.params == {"found": 99, "expected": SESSION_SCHEMA_VERSION}
    assert_translated(caught.value)
    reopened.close()


def _run_writer_until(
    writer: subprocess.Popen[str], word: str, count: int
) -> list[str]:
    """Read the writer's lines until its ``count``-th line starting with ``word``, then kill it
    (at once: the kill lands inside the next add or reduction, whatever the machine's speed), and
    return every line it printed."""
    assert writer.stdout is not None
    lines: list[str] = []
    seen = 0
    while seen < count:
        line = writer.stdout.readline()
        if not line:  # the writer stopped by itself: a failure, shown by its output
            break
        lines.append(line)
        seen += line.startswith(f"{word} ")
    writer.send_signal(signal.SIGKILL)
    rest, _ = writer.communicate()
    assert seen == count, f"the writer stopped before its {count}th {word!r}: {lines}"
    return [*lines, *rest.splitlines()]


@pytest.mark.slow
def test_a_writer_killed_at_random_instants_and_retried_loses_and_duplicates_nothing(
    durable: tuple[str, str],
) -> None:
    kind, location = durable
    session_id = f"crash-{uuid.uuid4().hex[:8]}"
    rng = random.Random(1405)
    acknowledged: list[int] = []
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    begun: list[int] = []
    required = 0
    for round_ in range(6):
        # Each writer starts again from the turn the last one began: the same key, a retry.
        start = [str(begun[-1])] if begun else []
        writer = subprocess.Popen(
            [sys.executable, str(WRITER), kind, location, session_id, *start],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        # Killed after a known number of writes, told by the writer through its pipe: right after
        # an acknowledged add (inside the reduction that follows), or right after an add began.
        writes = rng.randint(1, 4)
        word = "ack" if round_ % 2 == 0 else "begin"
        required += writes if word == "ack" else writes - 1
        for line in _run_writer_until(writer, word, writes):
            found, _, number = line.strip().partition(" ")
            if found in ("ack", "begin") and number.isdigit():
                (acknowledged if found == "ack" else begun).append(int(number))
        store = SQLiteStore(location) if kind == "sqlite" else SQLAlchemyStore(location)
        session = ContextSession(TRIM, store, session_id)
        context = [int(m["content"].split()[1]) for m in session.messages()]
        archive = [int(a.message["content"].split()[1]) for a in session.archive()]
        stored = sorted(context + archive)
        # Every turn is two messages; nothing twice, nothing missing, in the order added.
        assert stored == sorted([n for n in range(max(stored) + 1) for _ in range(2)])
        assert set(acknowledged) <= set(stored)
        assert context == sorted(context)
        store.close()
    # Each writer acknowledged at least the adds it was let run for; a writer's first turn may be
    # a retry of one its predecessor acknowledged, counted once.
    assert len(set(acknowledged)) >= required - 5


def test_framework_messages_round_trip_through_their_own_json() -> None:
    """The codec alone (the engine's reading of these shapes is tested above once it exists)."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    from contextwise.session._codec import decode_message, encode_messages

    messages = [
        HumanMessage("Hello"),
        AIMessage("Hi", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c1"}]),
        ToolMessage("42", tool_call_id="c1"),
        ModelRequest(parts=[UserPromptPart(content="Hello")]),
        ModelResponse(parts=[TextPart(content="Hi")]),
        {"role": "user", "content": [{"type": "text", "text": "parts"}]},
    ]
    data, decoded = encode_messages(messages)
    assert decoded == messages
    assert [decode_message(json.loads(json.dumps(value))) for value in data] == messages
    assert data[0]["__contextwise__"] == "langchain"
    assert data[3]["__contextwise__"] == "pydantic-ai"
    assert data[5] == messages[5] and data[5] is not messages[5]


def oldest_out(messages: list[Any], target: int, keep: int) -> list[Any]:
    """A message-grouping trim written the slow way: the oldest unpinned messages leave, one by
    one, until the context fits; the newest ``keep`` unpinned ones and the pinned ones stay."""
    sizes = [message_chars(message) for message in messages]
    excess = sum(sizes) - target
    unpinned = [index for index, message in enumerate(messages) if not is_pinned(message)]
    gone: set[int] = set()
    for index in unpinned[: max(0, len(unpinned) - keep)]:
        if excess <= 0:
            break
        gone.add(index)
        excess -= sizes[index]
    return [message for index, message in enumerate(messages) if index not in gone]


@pytest.mark.parametrize("seed", range(6))
def test_each_step_keeps_what_the_engine_keeps_on_the_same_messages(seed: int) -> None:
    """The session's shortcuts (sizes and roles measured when added, the plain message span, the
    sum that stops at the removed messages, the memory store's trims) change no outcome: each
    step keeps exactly what process_context keeps from the same messages, pinned messages in
    the middle, messages that are not plain and random sizes included."""
    rng = random.Random(seed)
    target = rng.choice([40, 120, 400])
    policy = {**TRIM, "trigger_chars": None, "target_input_chars": target}
    policy["steps"] = [{**TRIM["steps"][0], "target_chars": target, "keep_groups": seed % 3}]
    session = ContextSession(policy, MemoryStore(), "chat")
    context: list[Any] = []
    added: list[Any] = []
    for step in range(25):
        batch: list[Any] = []
        for _ in range(rng.randint(1, 12)):
            role = rng.choice(["user", "assistant", "user", "assistant", "system", "developer"])
            text = f"{len(added) + len(batch)}:" + "x" * rng.randint(0, 60)
            message: dict[str, Any] = {"role": role, "content": text}
            if rng.random() < 0.1:
                message["name"] = "n"  # not plain: the checked path
            batch.append(message)
        session.add(batch)
        added += batch
        expected = process_context(policy, [MessagesFragment("history", messages=context + batch)])
        result = session.context()
        kept = list(result.fragment("history").messages)
        assert kept == list(expected.fragment("history").messages), step
        assert kept == oldest_out(context + batch, target, seed % 3), step
        assert result.report == expected.report, step
        context = kept
        archived = [item.message for item in session.archive()]
        assert sorted(map(json.dumps, context + archived)) == sorted(map(json.dumps, added))
        assert session.messages() == context


# --- idempotent adds ---------------------------------------------------------------------------


def test_a_retry_with_the_same_key_stores_nothing_and_returns_the_first_result(
    open_store: StoreFactory,
) -> None:
    session = ContextSession(TRIM, open_store(), "chat")
    first = session.add(turn(1), idempotency_key="turn-1")
    assert first == AddResult(positions=(1, 2), version=0, duplicate=False)
    again = ContextSession(TRIM, open_store(), "chat").add(turn(1), idempotency_key="turn-1")
    assert again == AddResult(positions=(1, 2), version=0, duplicate=True)
    assert contents(session.messages()) == contents(turn(1))
    assert session.add(turn(2)).positions == (3, 4)


def test_a_retry_after_a_reduction_archived_the_messages_is_a_no_op(
    open_store: StoreFactory,
) -> None:
    session = ContextSession(TRIM, open_store(), "chat")
    added: list[str] = []
    for n in range(4):
        session.add(turn(n), idempotency_key=f"turn-{n}")
        added += contents(turn(n))
    session.context()
    assert [a.message["content"] for a in session.archive()][:2] == contents(turn(0))
    retry = ContextSession(TRIM, open_store(), "chat").add(turn(0), idempotency_key="turn-0")
    assert retry.duplicate and retry.positions == (1, 2)
    assert everything(session) == added


def test_a_retry_after_another_writer_committed_never_conflicts(open_store: StoreFactory) -> None:
    writer = ContextSession(TRIM, open_store(), "chat")
    other = ContextSession(TRIM, open_store(), "chat")
    for n in range(4):
        writer.add(turn(n), idempotency_key=f"turn-{n}")
    writer.messages()  # the writer has read the session before the other one reduces it
    other.context()
    retry = writer.add(turn(3), idempotency_key="turn-3")
    assert retry.duplicate and retry.positions == (7, 8) and retry.version == 0
    assert everything(writer) == [m["content"] for n in range(4) for m in turn(n)]


def test_the_same_key_with_other_messages_is_a_coded_error(open_store: StoreFactory) -> None:
    session = ContextSession(TRIM, open_store(), "chat")
    session.add(turn(1), idempotency_key="turn-1")
    with pytest.raises(InvalidValueError) as caught:
        session.add(turn(2), idempotency_key="turn-1")
    assert caught.value.code == "idempotency_key_reused"
    assert caught.value.params == {"session_id": "chat", "key": "turn-1"}
    assert_translated(caught.value)
    assert contents(session.messages()) == contents(turn(1))


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgresql"])
def test_a_key_is_kept_for_the_stores_window(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def store(window: float) -> Any:
        if kind == "memory":
            return MemoryStore(idempotency_window=window)
        if kind == "sqlite":
            return SQLiteStore(tmp_path / f"w{window}.db", idempotency_window=window)
        url = request.getfixturevalue("postgres_server").create_database()
        return SQLAlchemyStore(url, idempotency_window=window)

    kept, expired = store(3600.0), store(0.0)
    for opened, copies in ((kept, 1), (expired, 2)):
        session = ContextSession(TRIM, opened, "chat")
        session.add(turn(1), idempotency_key="turn-1")
        session.add(turn(1), idempotency_key="turn-1")
        assert contents(session.messages()) == contents(turn(1)) * copies
        opened.close()


@pytest.mark.parametrize("value", [-1, math.nan, math.inf, "30"])
def test_store_settings_are_checked(value: object, tmp_path: Path) -> None:
    for build in (
        lambda: SQLiteStore(tmp_path / "s.db", timeout=value),  # type: ignore[arg-type]
        lambda: SQLAlchemyStore("sqlite://", timeout=value),  # type: ignore[arg-type]
        lambda: MemoryStore(idempotency_window=value),  # type: ignore[arg-type]
        lambda: SQLiteStore(tmp_path / "s.db", idempotency_window=value),  # type: ignore[arg-type]
    ):
        with pytest.raises((InvalidValueError, InvalidTypeError)) as caught:
            build()
        assert caught.value.code in {"out_of_range", "not_finite", "not_a_number"}
        assert_translated(caught.value)


class BlockingStore:
    """A store whose ``append`` waits in its worker thread until the test lets it go on."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.entered = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()

    def read(self, *args: Any) -> Any:
        return self.store.read(*args)

    def append(self, *args: Any) -> Any:
        self.entered.set()
        self.release.wait(30)
        try:
            return self.store.append(*args)
        finally:
            self.finished.set()

    def commit(self, *args: Any) -> Any:
        return self.store.commit(*args)

    def archive(self, *args: Any) -> Any:
        return self.store.archive(*args)

    def change_items(self, *args: Any) -> Any:
        return self.store.change_items(*args)

    def add_usage(self, *args: Any) -> Any:
        return self.store.add_usage(*args)

    def usage(self, *args: Any) -> Any:
        return self.store.usage(*args)


async def test_a_cancelled_aadd_finishes_its_write_and_the_retry_stores_nothing(
    open_store: StoreFactory,
) -> None:
    blocking = BlockingStore(open_store())
    session = ContextSession(TRIM, blocking, "chat")
    task = asyncio.ensure_future(session.aadd(turn(1), idempotency_key="turn-1"))
    await asyncio.to_thread(blocking.entered.wait, 30)
    task.cancel()
    await asyncio.sleep(0)  # the cancellation reaches the task while the write waits
    blocking.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The cancellation waited for the write: it is over, and it stored the messages.
    assert blocking.finished.is_set()
    retry = await ContextSession(TRIM, open_store(), "chat").aadd(
        turn(1), idempotency_key="turn-1"
    )
    assert retry.duplicate and retry.positions == (1, 2)
    assert contents(await session.amessages()) == contents(turn(1))


# --- every store treats the same input the same way ---------------------------------------------


@pytest.mark.parametrize(
    ("session_id", "code"),
    [("a\x00b", "invalid_session_id"), ("x" * 256, "invalid_session_id"),
     ("lone \ud800", "invalid_session_id"), ("   ", "blank_session_id")],
)
def test_every_store_refuses_the_same_session_ids(
    open_store: StoreFactory, session_id: str, code: str
) -> None:
    store = open_store()
    with pytest.raises(InvalidValueError) as caught:
        ContextSession(TRIM, store, session_id)
    assert caught.value.code == code
    assert_translated(caught.value)
    for call in (
        lambda: store.read(session_id),
        lambda: store.append(session_id, []),
        lambda: store.archive(session_id),
        lambda: store.change_items(session_id, 1),
    ):
        with pytest.raises(InvalidValueError) as direct:
            call()
        assert direct.value.code == code


def test_every_store_answers_the_same_to_strange_values(open_store: StoreFactory) -> None:
    session = ContextSession(TRIM, open_store(), "chat")
    session.add(turn(1))
    for change_id in (2**63, -(2**63) - 1, 0):
        with pytest.raises(InvalidValueError) as unknown:
            session.restore(change_id)
        assert unknown.value.code == "unknown_change"
    for key in ("\x00", "k" * 256, "\udfff", " "):
        with pytest.raises(InvalidValueError) as bad_key:
            session.add(turn(2), idempotency_key=key)
        assert bad_key.value.code == "invalid_idempotency_key"
        assert_translated(bad_key.value)
    for message in (
        {"role": "user", "content": "lone \ud800"},
        {"role": "user", "content": [{"type": "text", "text": "\udc00"}]},
        {"role": "user", "content": "x", "id": 10**5000},
    ):
        with pytest.raises(InvalidValueError) as not_json:
            session.add([message])
        assert not_json.value.code == "message_not_json"
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    with pytest.raises(InvalidValueError) as too_deep:
        session.add([{"role": "user", "content": "x", "meta": deep}])
    assert too_deep.value.code == "message_too_deep"
    assert_translated(too_deep.value)
    assert contents(ContextSession(TRIM, open_store(), "chat").messages()) == contents(turn(1))
    nul_step = {**TRIM, "steps": [{**TRIM["steps"][0], "id": "trim\x00"}]}  # type: ignore[index, dict-item]
    with pytest.raises(InvalidValueError) as unstorable:
        ContextSession(nul_step, open_store(), "chat")
    assert unstorable.value.code == "unstorable_text"
    assert unstorable.value.params["field"] == "steps[0].id"
    assert_translated(unstorable.value)


# --- integer positions -------------------------------------------------------------------------


def test_a_thousand_messages_inserted_at_one_spot_keep_their_order(
    open_store: StoreFactory,
) -> None:
    """Each change inserts ten messages right after the system message, before those of the
    changes before it: the room between two neighbours runs out again and again."""
    inserted = [0]

    def insert(fragment: Fragment) -> Fragment:
        messages = list(fragment.messages)
        batch = [
            {"role": "user", "content": f"i{inserted[0] + offset}"} for offset in range(10)
        ]
        inserted[0] += 10
        return fragment.with_messages(messages[:1] + batch[::-1] + messages[1:])

    policy = {
        "mode": "reduce",
        "trigger_chars": 0,
        "steps": [{"id": "insert", "kind": "app", "fragment_id": "history", "app": "insert"}],
    }
    session = ContextSession(policy, open_store(), "chat", apps={"insert": insert})
    session.add([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    for _ in range(100):
        session.context()
    expected = ["S", *[f"i{n}" for n in reversed(range(1_000))], "U"]
    assert contents(session.messages()) == expected
    store = open_store()
    assert contents(ContextSession(policy, store, "chat", apps={"insert": insert}).messages()) == (
        expected
    )
    positions = [item.position for item in store.read("chat").items]
    assert all(isinstance(position, int) for position in positions)
    assert positions == sorted(set(positions))


# --- every store failure is a coded SessionStoreError ------------------------------------------


def assert_store_error(caught: pytest.ExceptionInfo[SessionStoreError], code: str) -> None:
    assert caught.value.code == code, caught.value
    assert caught.value.__cause__ is not None
    assert_translated(caught.value)


def test_a_path_that_is_no_database_is_a_coded_error(tmp_path: Path) -> None:
    garbage = tmp_path / "notes.txt"
    garbage.write_bytes(b"these are notes, not a database\n" * 200)
    with pytest.raises(SessionStoreError) as not_a_database:
        SQLiteStore(garbage)
    assert_store_error(not_a_database, "store_not_a_database")
    for path in (tmp_path, tmp_path / "missing" / "sessions.db"):
        with pytest.raises(SessionStoreError) as cannot_open:
            SQLiteStore(path)
        assert_store_error(cannot_open, "store_cannot_open")
        assert cannot_open.value.params["location"] == str(path)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make a file read-only, for root too (``chattr +i``) when the tests run as root."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o644)
        return
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode:
        pytest.skip("running as root on a filesystem without chattr: no read-only file")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=False)


def test_a_read_only_file_is_a_coded_error(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteStore(path)
    ContextSession(TRIM, store, "chat").add(turn(1))
    store.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with read_only(path), pytest.raises(SessionStoreError) as caught:
        reopened = SQLiteStore(path)
        try:
            ContextSession(TRIM, reopened, "chat").add(turn(2))
        finally:
            reopened.close()
    assert_store_error(caught, "store_read_only")


def test_a_full_disk_is_reported_as_such_and_nothing_is_written(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "sessions.db")
    session = ContextSession(TRIM, store, "chat")
    session.add(turn(1))
    with store.transaction(True) as tx:  # SQLite's own limit: the same SQLITE_FULL as a disk
        pages = tx.rows("PRAGMA page_count", {})[0][0]
        tx.rows(f"PRAGMA max_page_count = {pages + 2}", {})
    with pytest.raises(SessionStoreError) as caught:
        session.add([{"role": "user", "content": "x" * 100_000}])
    assert_store_error(caught, "store_full")
    assert "full" in str(caught.value.__cause__)  # the real cause, not a failed ROLLBACK
    assert contents(session.messages()) == contents(turn(1))
    store.close()


def test_a_lock_held_too_long_is_a_coded_error(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    ContextSession(TRIM, SQLiteStore(path), "chat").add(turn(1))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(SessionStoreError) as caught:
            ContextSession(TRIM, SQLiteStore(path, timeout=0), "chat").add(turn(2))
        assert_store_error(caught, "store_locked")
        assert caught.value.params["timeout"] == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_closed_store_is_a_coded_error(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "sessions.db")
    store.close()
    with pytest.raises(SessionStoreError) as caught:
        store.read("chat")
    assert_store_error(caught, "store_closed")


def test_an_older_layout_is_refused_rather_than_completed(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE contextwise_sessions (session_id TEXT PRIMARY KEY, version BIGINT);"
        "CREATE TABLE contextwise_messages (session_id TEXT, item_id BIGINT, position REAL,"
        " data TEXT);"
        "INSERT INTO contextwise_sessions VALUES ('chat', 3);"
    )
    old.close()
    with pytest.raises(SessionStoreError) as caught:
        SQLiteStore(path).read("chat")
    assert_store_error(caught, "session_layout_mismatch")


def test_a_version_1_store_is_refused(durable: tuple[str, str]) -> None:
    kind, location = durable
    store = SQLiteStore(location) if kind == "sqlite" else SQLAlchemyStore(location)
    store.read("chat")
    with store.transaction(True) as tx:
        tx.rows("UPDATE contextwise_schema SET version = 1", {})
    store.close()
    reopened = SQLiteStore(location) if kind == "sqlite" else SQLAlchemyStore(location)
    with pytest.raises(SessionStoreError) as caught:
        ContextSession(TRIM, reopened, "chat").add(turn(1))
    assert caught.value.params == {"found": 1, "expected": SESSION_SCHEMA_VERSION}
    reopened.close()


def test_a_row_that_does_not_decode_is_a_coded_error(durable: tuple[str, str]) -> None:
    kind, location = durable
    store = SQLiteStore(location) if kind == "sqlite" else SQLAlchemyStore(location)
    session = ContextSession(TRIM, store, "chat")
    for n in range(4):
        session.add(turn(n))
    session.context()
    with store.transaction(True) as tx:
        tx.rows("UPDATE contextwise_messages SET data = '{not json'", {})
    for read in (ContextSession(TRIM, store, "chat").messages, session.archive):
        with pytest.raises(SessionStoreError) as caught:
            read()
        assert_store_error(caught, "store_row_unreadable")
        assert caught.value.params == {"session_id": "chat"}
    store.close()


def test_postgresql_failures_are_coded_errors(postgres_server: Any) -> None:
    import psycopg

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for url in (
        f"postgresql+psycopg://postgres@127.0.0.1:{port}/db",
        postgres_server.url("no_such_database"),
    ):
        with pytest.raises(SessionStoreError) as unreachable:
            SQLAlchemyStore(url).read("chat")
        assert_store_error(unreachable, "store_cannot_open")
    url = postgres_server.create_database()
    store = SQLAlchemyStore(url, timeout=0.2)
    ContextSession(TRIM, store, "chat").add(turn(1))
    database = url.rsplit("/", 1)[1]
    with psycopg.connect(
        f"host=127.0.0.1 port={postgres_server.port} user=postgres dbname={database}"
    ) as holder:
        holder.execute("SELECT * FROM contextwise_sessions WHERE session_id = 'chat' FOR UPDATE")
        with pytest.raises(SessionStoreError) as locked:
            ContextSession(TRIM, store, "chat").add(turn(2))
        assert_store_error(locked, "store_locked")
    with psycopg.connect(
        f"host=127.0.0.1 port={postgres_server.port} user=postgres dbname=postgres",
        autocommit=True,
    ) as admin:
        admin.execute(f'ALTER DATABASE "{database}" SET default_transaction_read_only = on')
    store.close()
    with pytest.raises(SessionStoreError) as read_only_database:
        ContextSession(TRIM, SQLAlchemyStore(url), "chat").add(turn(3))
    assert_store_error(read_only_database, "store_read_only")


def test_a_restore_never_leaves_two_messages_at_one_position(open_store: StoreFactory) -> None:
    """A message placed after a change took its neighbour out may take the archived one's
    integer; restoring that change moves the restored message beside it, never onto it."""
    script: list[Callable[[list[Any]], list[Any]]] = [
        lambda messages: [m for m in messages if m["content"] != "B"],  # B leaves
        lambda messages: [*messages[:1], {"role": "user", "content": "X"}, *messages[1:]],
    ]

    def edit(fragment: Fragment) -> Fragment:
        return fragment.with_messages(script.pop(0)(list(fragment.messages)))

    policy = {
        "mode": "reduce",
        "trigger_chars": 0,
        "steps": [{"id": "edit", "kind": "app", "fragment_id": "history", "app": "edit"}],
    }
    store = open_store()
    session = ContextSession(policy, store, "chat", apps={"edit": edit})
    session.add([{"role": "user", "content": text} for text in "ABCD"])
    session.context()
    session.context()
    assert contents(session.messages()) == ["A", "X", "C", "D"]
    session.restore(session.archive()[0].change_id)
    assert contents(session.messages()) == ["A", "B", "X", "C", "D"]
    positions = [item.position for item in store.read("chat").items]
    assert positions == sorted(set(positions))
