"""What the integrations share to record usage and to summarise: a ledger per conversation, the
default summary prompt and the transcript a summarizer sends."""

import inspect
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextvars import ContextVar, Token
from typing import Any

from contextwise._checks import require_string, whole_number
from contextwise._effects import Effects, call_blocking, run_async, run_sync
from contextwise._translation import short_repr
from contextwise.accounting import (
    ModelPrices,
    UsageKind,
    UsageRecord,
    UsageSummary,
    price_usage,
    summarize_usage,
)
from contextwise.errors import InvalidValueError
from contextwise.policy import ContextResult
from contextwise.session import UsageStore

SUMMARY_PROMPT = (
    "You are summarising the older part of a conversation between a user, an AI assistant and "
    "its tools, so that the assistant can carry on without it. Write a concise summary that "
    "keeps, in this order: the user's task and its constraints, in their own words where they "
    "matter; the decisions taken and why; the questions still open; the facts the tools "
    "returned that are still needed (names, numbers, ids, paths, errors), exactly. Leave out "
    "greetings, repetition and anything that was superseded. Write in the conversation's "
    "language. Answer with the summary only."
)
"""The default instructions of the framework summarizers: keep the task, the decisions, the open
questions and the tools' facts."""

DEFAULT_SUMMARY_TOKENS = 1024
"""The default output limit of a summary, in tokens."""

DEFAULT_LEDGER_BYTES = 64 * 1024 * 1024
"""How many bytes the in-memory usage ledgers of one integration object may hold by default."""

_RECORD_OVERHEAD = 200
"""The bytes a kept record costs besides its JSON (the objects that hold it)."""

_KEY: ContextVar[str | None] = ContextVar("contextwise_usage_key", default=None)
"""The conversation whose model call is being prepared (so its summaries go to its ledger)."""


def summary_prompt(prompt: object) -> str:
    """The summarizer's instructions: ``prompt``, checked, or the default one."""
    if prompt is None:
        return SUMMARY_PROMPT
    require_string(prompt, "prompt")
    assert isinstance(prompt, str)
    if not prompt.strip():
        raise InvalidValueError("blank_value", field="prompt", value=short_repr(prompt))
    return prompt


def summary_tokens(max_tokens: object) -> int:
    """The summarizer's output limit, checked."""
    return whole_number(max_tokens, "max_tokens", minimum=1)


def transcript(lines: Iterable[tuple[str, str]]) -> str:
    """The text a summarizer sends: one ``role: text`` paragraph per message."""
    return "\n\n".join(f"{role}: {text}" for role, text in lines if text)


def shrunk(text: str) -> str:
    """A transcript too long for the summarizer's model, cut to half: its start and its end,
    with a marker where the middle was."""
    keep = max(len(text) // 4, 1)
    return f"{text[:keep]}\n\n[…]\n\n{text[-keep:]}"


class UsageBook:
    """The usage ledgers of an integration's conversations: in the store when it keeps usage,
    else in memory. In async code, :meth:`arecord` writes to the store in a worker thread, so
    that the event loop never waits for it."""

    def __init__(self, store: object, prefix: str, max_bytes: int = DEFAULT_LEDGER_BYTES) -> None:
        self._store = store if isinstance(store, UsageStore) else None
        self._prefix = prefix
        self._max_bytes = max_bytes
        self._memory: OrderedDict[str, list[tuple[UsageRecord, int]]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def memory_bytes(self) -> int:
        """An estimate of the bytes the in-memory ledgers hold."""
        return self._bytes

    def _keep(self, ledger: str, record: UsageRecord) -> None:
        """Keep a record in memory, within the bound: the least recently used ledgers are
        forgotten first, then the oldest records of the last one."""
        size = _RECORD_OVERHEAD + len(json.dumps(record.to_json(), default=str))
        with self._lock:
            self._memory.setdefault(ledger, []).append((record, size))
            self._memory.move_to_end(ledger)
            self._bytes += size
            while self._bytes > self._max_bytes and len(self._memory) > 1:
                _, dropped = self._memory.popitem(last=False)
                self._bytes -= sum(each for _, each in dropped)
            records = self._memory[ledger]
            while self._bytes > self._max_bytes and len(records) > 1:
                self._bytes -= records.pop(0)[1]

    def _id(self, key: str | None) -> str:
        return f"{self._prefix}:{'' if key is None else key}"

    def record(
        self,
        key: str | None,
        usage: Any,
        *,
        model: Any = None,
        kind: UsageKind = "model",
        prices: ModelPrices | None = None,
    ) -> UsageRecord:
        """Record one call's usage in the conversation's ledger."""
        record = price_usage(usage, model=model, kind=kind, prices=prices)
        return run_sync(self._record(key, record))

    async def arecord(
        self,
        key: str | None,
        usage: Any,
        *,
        model: Any = None,
        kind: UsageKind = "model",
        prices: ModelPrices | None = None,
    ) -> UsageRecord:
        """Record one call's usage, the store's write in a worker thread."""
        record = price_usage(usage, model=model, kind=kind, prices=prices)
        return await run_async(self._record(key, record))

    def _record(self, key: str | None, record: UsageRecord) -> Effects[UsageRecord]:
        """Keep a record: the store's write is a blocking effect."""
        if self._store is not None:
            yield from call_blocking(self._store.add_usage, self._id(key), record.to_json())
        else:
            self._keep(self._id(key), record)
        return record

    def summary(self, key: str | None) -> UsageSummary:
        """The totals of a conversation's ledger."""
        if self._store is not None:
            rows = self._store.usage(self._id(key))
            return summarize_usage(UsageRecord.from_json(row) for row in rows)
        with self._lock:
            kept = [record for record, _ in self._memory.get(self._id(key), [])]
        return summarize_usage(kept)

    def summaries(self, result: ContextResult) -> None:
        """Record the summaries a reduction paid for, in the ledger of the current conversation."""
        key = _KEY.get()
        for change in result.report.changes:
            if change.usage is not None:
                self.record(key, change.usage, model=change.usage_model, kind="summarizer")

    def recording(
        self, on_result: Callable[[ContextResult], object] | None
    ) -> Callable[[ContextResult], object]:
        """``on_result``, recording first the summaries that each result paid for (its reply,
        awaitable or not, is returned as it is)."""

        def record(result: ContextResult) -> object:
            paid = any(change.usage is not None for change in result.report.changes)
            if self._store is None or not paid:
                self.summaries(result)
                return None if on_result is None else on_result(result)
            # The store's writes are awaited: in a worker thread under the async drivers.
            return self._stored(_KEY.get(), result, on_result)

        return record

    async def _stored(
        self,
        key: str | None,
        result: ContextResult,
        on_result: Callable[[ContextResult], object] | None,
    ) -> object:
        """Record a result's summaries in the store, then call ``on_result``."""
        for change in result.report.changes:
            if change.usage is not None:
                await self.arecord(key, change.usage, model=change.usage_model, kind="summarizer")
        reply = None if on_result is None else on_result(result)
        return await reply if inspect.isawaitable(reply) else reply


def current(key: str | None) -> Token[str | None]:
    """Set the conversation whose call is prepared; returns the token to reset it."""
    return _KEY.set(key)


def reset(token: Token[str | None]) -> None:
    """Forget the conversation set by :func:`current`."""
    _KEY.reset(token)
