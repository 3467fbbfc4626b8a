"""A session's usage ledger and calibration, on every store (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from contextwise import (
    ESTIMATE_VERSION,
    CalibratedCounter,
    ContextSession,
    ConversationStore,
    EstimateCounter,
    InvalidTypeError,
    InvalidValueError,
    MemoryStore,
    SessionStore,
    SQLAlchemyStore,
    SQLiteStore,
    StateStore,
    Usage,
    UsageStore,
    WithUsage,
)
from support.errors import assert_translated

StoreFactory = Callable[[], SessionStore]

COMPRESS = {
    "mode": "reduce",
    "trigger_chars": 100,
    "target_input_chars": 60,
    "steps": [{"id": "summarize", "kind": "compress", "compressor": "summary",
               "fragment_id": "history", "grouping": {"kind": "message"}}],
}


def _summary(messages: list[Any]) -> WithUsage:
    return WithUsage("They said hello.", Usage(input_tokens=300, output_tokens=12), "gpt-5-mini")


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Open a store; each call opens it again, as another process would (the memory store is
    shared)."""
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


def _chat(count: int) -> list[dict[str, str]]:
    return [{"role": "user" if index % 2 == 0 else "assistant",
             "content": f"Message {index}: hello, and welcome to the budget guide."}
            for index in range(count)]


async def test_the_ledger_totals_model_summarizer_and_router_calls(
    open_store: StoreFactory,
) -> None:
    session = ContextSession(COMPRESS, open_store(), "chat", compressors={"summary": _summary})
    session.add(_chat(6))
    result = session.context()
    assert [change.usage for change in result.report.changes] == [
        Usage(input_tokens=300, output_tokens=12)
    ]
    session.record_usage(Usage(input_tokens=2_000, cached_input_tokens=1_500, output_tokens=90),
                         model="gpt-5", step=1)
    await session.arecord_usage({"usage": {"prompt_tokens": 900, "completion_tokens": 7}},
                                model="gpt-5-nano", kind="router", step=1)
    summary = ContextSession(COMPRESS, open_store(), "chat",
                             compressors={"summary": _summary}).usage()
    assert [record.kind for record in summary.records] == ["summarizer", "model", "router"]
    assert summary.by_kind["summarizer"].usage.input_tokens == 300
    assert summary.by_model["gpt-5"].cache_hit_share == 0.75
    assert summary.total.calls == 3 and summary.total.cost > 0
    assert summary.records[1].step == 1
    assert (await session.ausage()) == session.usage()
    other = ContextSession(COMPRESS, open_store(), "other", compressors={"summary": _summary})
    assert other.usage().total.calls == 0


def test_a_bad_kind_is_a_coded_error() -> None:
    session = ContextSession({"mode": "audit"}, MemoryStore(), "chat")
    with pytest.raises(InvalidValueError) as caught:
        session.record_usage(Usage(), kind="tool")  # type: ignore[arg-type]
    assert caught.value.code == "invalid_choice"


def test_stored_counts_are_base_counts_with_the_counters_id_and_version(
    open_store: StoreFactory,
) -> None:
    calibrated = CalibratedCounter()
    model = calibrated.for_model("gpt-5")
    store = open_store()
    session = ContextSession({"mode": "audit"}, store, "chat", counter=model)
    messages = _chat(4)
    session.add(messages)
    stored = store.read("chat").items
    base = EstimateCounter()
    assert {item.counter_id for item in stored} == {"estimate@3"}
    assert [item.tokens for item in stored] == [base.count(m["content"]) for m in messages]
    before = session.context().report.tokens
    assert before is not None and before.before == sum(item.tokens or 0 for item in stored)
    # The provider bills half the estimate: the session's counts follow at the next read,
    # without measuring any message again.
    request = {"messages": messages}
    for _ in range(6):
        session.record_usage(Usage(input_tokens=before.before // 2), request=request)
    after = session.context().report.tokens
    assert after is not None and after.before < 0.7 * before.before
    assert [item.tokens for item in store.read("chat").items] == [item.tokens for item in stored]


def test_the_calibration_state_survives_the_process(open_store: StoreFactory) -> None:
    first = CalibratedCounter()
    session = ContextSession({"mode": "audit"}, open_store(), "chat", counter=first.for_model("m"))
    request = {"system": "Be brief.", "messages": _chat(3)}
    for _ in range(4):
        session.record_usage(Usage(input_tokens=77), request=request)
    fresh = CalibratedCounter()
    reopened = ContextSession({"mode": "audit"}, open_store(), "chat", counter=fresh.for_model("m"))
    assert fresh.observations("m") == 0
    reopened.messages()
    assert fresh.observations("m") == 4
    assert fresh.predict(request, model="m") == first.predict(request, model="m")


def test_a_count_of_an_older_estimate_is_measured_again(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "old.db")
    session = ContextSession({"mode": "audit"}, store, "chat", counter=EstimateCounter())
    session.add([{"role": "user", "content": "上下文预算"}])
    with store.transaction(True) as tx:  # a count stored by the quarter estimate (version 1)
        tx.rows("UPDATE contextwise_messages SET tokens = 2, counter_id = 'estimate'", {})
    again = ContextSession({"mode": "audit"}, store, "chat", counter=EstimateCounter())
    report = again.context().report.tokens
    assert report is not None and report.before == EstimateCounter().count("上下文预算") == 6
    store.close()


# --- a store of the user's own: checked once, when the session is built ---------------------------


class FiveMethods:
    """A user's store with exactly the five methods of :class:`SessionStore`, over a memory
    store."""

    def __init__(self) -> None:
        self.inner = MemoryStore()

    def read(self, session_id: str, since: tuple[int, int] | None = None) -> Any:
        return self.inner.read(session_id, since)

    def append(self, session_id: str, items: Any, idempotency: Any = None) -> Any:
        return self.inner.append(session_id, items, idempotency)

    def commit(self, session_id: str, change: Any) -> Any:
        return self.inner.commit(session_id, change)

    def archive(self, session_id: str) -> Any:
        return self.inner.archive(session_id)

    def change_items(self, session_id: str, change_id: int) -> Any:
        return self.inner.change_items(session_id, change_id)


class WithLedger(FiveMethods):
    """The same store, with the usage ledger a session keeps."""

    def add_usage(self, session_id: str, record: dict[str, Any]) -> None:
        self.inner.add_usage(session_id, record)

    def usage(self, session_id: str) -> list[dict[str, Any]]:
        return self.inner.usage(session_id)


class Complete(WithLedger):
    """The same store, with the named states a calibrated counter keeps."""

    def load_state(self, name: str) -> dict[str, Any] | None:
        return self.inner.load_state(name)

    def save_state(self, name: str, state: dict[str, Any]) -> None:
        self.inner.save_state(name, state)


def test_a_store_without_the_usage_ledger_is_refused_when_the_session_is_built() -> None:
    five = FiveMethods()
    assert isinstance(five, SessionStore) and not isinstance(five, UsageStore)
    with pytest.raises(InvalidTypeError) as caught:
        ContextSession(COMPRESS, five, "chat", compressors={"summary": _summary})
    assert caught.value.code == "incomplete_store"
    assert caught.value.params["names"] == ["add_usage", "usage"]
    assert caught.value.params["protocols"] == ["UsageStore"]
    assert "add_usage" in str(caught.value) and "UsageStore" in caught.value.render("zh")
    assert_translated(caught.value)


def test_a_store_without_states_is_refused_only_with_a_calibrated_counter() -> None:
    ContextSession({"mode": "audit"}, WithLedger(), "chat")
    with pytest.raises(InvalidTypeError) as caught:
        ContextSession(
            {"mode": "audit"}, WithLedger(), "chat", counter=CalibratedCounter().for_model("m")
        )
    assert caught.value.code == "incomplete_store"
    assert caught.value.params["names"] == ["load_state", "save_state"]
    assert caught.value.params["protocols"] == ["StateStore"]


def test_a_complete_store_of_the_users_own_keeps_the_ledger_and_the_calibration() -> None:
    store = Complete()
    assert isinstance(store, SessionStore | UsageStore | StateStore)
    session = ContextSession(
        COMPRESS,
        store,
        "chat",
        compressors={"summary": _summary},
        counter=CalibratedCounter().for_model("m"),
    )
    session.add(_chat(6))
    session.context()
    session.record_usage(Usage(input_tokens=77), request={"messages": _chat(2)})
    summary = session.usage()
    assert summary.by_kind["summarizer"].calls == 1 and summary.by_kind["model"].calls == 1
    assert store.inner.load_state(f"calibration:estimate@{ESTIMATE_VERSION}") is not None


def test_every_store_of_the_package_declares_the_protocols_it_implements() -> None:
    for store_type in (MemoryStore, SQLiteStore, SQLAlchemyStore):
        for protocol in (SessionStore, UsageStore, StateStore, ConversationStore):
            assert issubclass(store_type, protocol), (store_type, protocol)
