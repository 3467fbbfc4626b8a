"""The one sync/async mechanism: every sync face works inside a running event loop.

A harness that runs in Jupyter, or inside an async web handler, calls the sync faces while an event
loop is running on its thread. Each test below calls a sync face from inside ``asyncio.run(...)``
with async application code (a provider, a compressor), which needs an event loop of its own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from contextwise import (
    ChoiceQuestion,
    ContextPolicy,
    ContextSession,
    Decision,
    DecisionRequest,
    MemoryStore,
    MessagesFragment,
    ModelRouter,
    ModelRouting,
    ModelSpec,
    PreparedStep,
    QuotaExceededError,
    RoutingContext,
    aprepare_step,
    aprocess_context,
    decide_choice,
    prepare_step,
    process_context,
    use_locale,
)

QUESTION = ChoiceQuestion(
    instructions="Pick the model.", criteria={"fast": "Routine.", "deep": "Hard."}
)

HISTORY = [
    {"role": "system", "content": "Be brief."},
    *[
        message
        for turn in range(6)
        for message in (
            {"role": "user", "content": f"Question number {turn}?"},
            {"role": "assistant", "content": f"Answer number {turn}."},
        )
    ],
]

POLICY = ContextPolicy(
    mode="reduce",
    trigger_chars=120,
    steps=[{"id": "sum", "kind": "compress", "fragment_id": "history", "compressor": "short"}],
)


class AsyncProvider:
    """An async provider that needs the event loop it runs on (it sleeps on it)."""

    name = "async"

    def __init__(self, choice: str = "deep", key: str = "model") -> None:
        self.choice = choice
        self.key = key
        self.loops: list[asyncio.AbstractEventLoop] = []

    async def request(self, request: DecisionRequest) -> dict[str, Any]:
        self.loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        answer = {"choice": self.choice, "confidence": 0.95}
        return {"model": request.model, "answers": {self.key: answer}}


async def short(messages: list[dict[str, Any]]) -> str:
    await asyncio.sleep(0)
    return f"{len(messages)} older messages, summarized."


def routing(provider: Any) -> ModelRouting:
    return ModelRouting(
        provider=provider,
        model="router-mini",
        decision=Decision(questions={"model": QUESTION}),
        question="model",
        models={
            "fast": ModelSpec(name="small", window=8_000),
            "deep": ModelSpec(name="large", window=64_000),
        },
        fallback="fast",
    )


def inside_a_running_loop(face: Callable[[], Any]) -> Any:
    """Call a sync face from a coroutine, as a Jupyter cell or an async web handler does."""

    async def handler() -> Any:
        loop = asyncio.get_running_loop()
        result = face()
        # The caller's loop was neither re-entered nor closed.
        assert asyncio.get_running_loop() is loop and not loop.is_closed()
        return result

    return asyncio.run(handler())


def test_process_context_works_inside_a_running_loop() -> None:
    result = inside_a_running_loop(
        lambda: process_context(
            POLICY, [MessagesFragment("history", messages=HISTORY)], compressors={"short": short}
        )
    )
    messages = result.fragment("history").messages
    assert messages[1]["content"] == "10 older messages, summarized."
    assert result.report.changes[0].status == "applied"


def test_decide_choice_works_inside_a_running_loop() -> None:
    provider = AsyncProvider(choice="fast", key="choice")
    outcome = inside_a_running_loop(
        lambda: decide_choice(
            provider, model="mini", question=QUESTION, state={"step": 1}, min_confidence=0.5
        )
    )
    assert (outcome.choice, outcome.reason) == ("fast", "selected")
    assert provider.loops, "the provider was awaited"


def test_route_works_inside_a_running_loop() -> None:
    provider = AsyncProvider()
    router = ModelRouter(routing(provider))
    outcome = inside_a_running_loop(lambda: router.route(RoutingContext(step=2, model="small")))
    assert (outcome.choice, outcome.model.name, outcome.reason) == ("deep", "large", "selected")


def test_prepare_step_works_inside_a_running_loop() -> None:
    provider = AsyncProvider()
    prepared: PreparedStep = inside_a_running_loop(
        lambda: prepare_step(
            POLICY,
            [MessagesFragment("history", messages=HISTORY)],
            router=ModelRouter(routing(provider)),
            step=3,
            compressors={"short": short},
        )
    )
    assert prepared.model.name == "large"
    assert prepared.messages[1]["content"] == "10 older messages, summarized."


def test_the_sync_face_and_the_async_twin_give_the_same_step() -> None:
    def run_sync() -> PreparedStep:
        return prepare_step(
            POLICY,
            [MessagesFragment("history", messages=HISTORY)],
            router=ModelRouter(routing(AsyncProvider())),
            step=3,
            compressors={"short": short},
        )

    async def run_async() -> PreparedStep:
        return await aprepare_step(
            POLICY,
            [MessagesFragment("history", messages=HISTORY)],
            router=ModelRouter(routing(AsyncProvider())),
            step=3,
            compressors={"short": short},
        )

    from_sync, from_async = run_sync(), asyncio.run(run_async())
    assert from_sync.fragments == from_async.fragments
    assert from_sync.route == from_async.route
    assert from_sync.plan == from_async.plan


class FaceRouter:
    """A router that records which of its faces each step called."""

    def __init__(self) -> None:
        self.router = ModelRouter(routing(AsyncProvider()))
        self.models, self.default = self.router.models, self.router.default
        self.faces: list[str] = []

    def route(self, context: RoutingContext) -> Any:
        self.faces.append("route")
        return self.router.route(context)

    async def aroute(self, context: RoutingContext) -> Any:
        self.faces.append("aroute")
        return await self.router.aroute(context)


def test_a_step_core_asks_no_driver_which_face_of_the_router_to_call() -> None:
    from dataclasses import fields

    from contextwise._effects import call_faces, run_async, run_sync
    from contextwise.step import _core, _step_arguments, _StepSetup

    assert "asynchronous" not in {field.name for field in fields(_StepSetup)}
    router = FaceRouter()
    fragments = [MessagesFragment("history", HISTORY)]
    options = {"router": router, "compressors": {"short": short}}
    # The same arguments, driven by either driver: each driver calls its own face, through
    # the effects core alone.
    arguments = _step_arguments(POLICY, fragments, 3, options)
    from_sync = run_sync(_core(*arguments))
    from_async = asyncio.run(run_async(_core(*arguments)))
    assert router.faces == ["route", "aroute"]
    assert from_sync.route == from_async.route and from_sync.model.name == "large"
    asyncio.run(aprepare_step(POLICY, fragments, step=3, **options))
    prepare_step(POLICY, fragments, step=3, **options)
    assert router.faces == ["route", "aroute", "aroute", "route"]

    def either(value: int) -> str:
        return f"sync {value}"

    async def either_async(value: int) -> str:
        return f"async {value}"

    assert run_sync(call_faces(either, either_async, 1)) == "sync 1"
    assert asyncio.run(run_async(call_faces(either, either_async, 2))) == "async 2"


def test_an_error_raised_on_the_worker_loop_keeps_the_callers_locale() -> None:
    class OutOfQuota:
        name = "quota"

        async def request(self, request: DecisionRequest) -> Any:
            raise QuotaExceededError("429")

    router = ModelRouter(routing(OutOfQuota()))
    with use_locale("fr"), pytest.raises(QuotaExceededError) as caught:
        inside_a_running_loop(lambda: router.route(RoutingContext(step=1, model="small")))
    assert caught.value.locale == "fr"
    assert str(caught.value) == caught.value.render("fr") != caught.value.render("en")


def test_the_async_call_runs_on_another_thread_only_when_a_loop_is_running() -> None:
    threads: list[int] = []

    class Recorder:
        name = "recorder"

        async def request(self, request: DecisionRequest) -> Any:
            threads.append(threading.get_ident())
            answer = {"choice": "fast", "confidence": 1.0}
            return {"model": request.model, "answers": {"choice": answer}}

    def ask() -> Any:
        return decide_choice(Recorder(), model="m", question=QUESTION, state={}, min_confidence=0)

    ask()
    inside_a_running_loop(ask)
    here = threading.get_ident()
    assert threads[0] == here
    assert threads[1] != here


class ThreadRecordingStore(MemoryStore):
    """A memory store that records the thread each of its calls runs on."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def append(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.add(threading.get_ident())
        return super().append(*args, **kwargs)

    def read(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.add(threading.get_ident())
        return super().read(*args, **kwargs)


def test_the_async_faces_run_store_calls_in_a_worker_thread() -> None:
    store = ThreadRecordingStore()
    session = ContextSession(POLICY.bind(compressors={"short": short}), store, "s1")

    async def handler() -> tuple[int, list[Any]]:
        await session.aadd([{"role": "user", "content": "Hi"}])
        return threading.get_ident(), await session.amessages()

    loop_thread, messages = asyncio.run(handler())
    assert messages == [{"role": "user", "content": "Hi"}]
    assert store.threads and loop_thread not in store.threads
    store.threads.clear()
    session.add([{"role": "assistant", "content": "Hello"}])  # the sync face: the caller's thread
    assert store.threads == {threading.get_ident()}


def test_a_hung_sync_compressor_times_out_from_either_face() -> None:
    release = threading.Event()

    def hung(messages: list[dict[str, Any]]) -> str:
        release.wait(30)
        return "never used"

    policy = ContextPolicy(
        mode="reduce",
        trigger_chars=120,
        steps=[
            {
                "id": "sum",
                "kind": "compress",
                "fragment_id": "history",
                "compressor": "hung",
                "timeout": 0.05,
            }
        ],
    )
    fragments = [MessagesFragment("history", messages=HISTORY)]

    async def from_the_async_face() -> Any:
        try:
            return await aprocess_context(policy, fragments, compressors={"hung": hung})
        finally:
            release.set()  # the loop's executor waits for its threads when the loop closes

    try:
        from_sync = inside_a_running_loop(
            lambda: process_context(policy, fragments, compressors={"hung": hung})
        )
        from_async = asyncio.run(from_the_async_face())
    finally:
        release.set()
    for result in (from_sync, from_async):
        change = result.report.changes[0]
        assert (change.status, change.error.code) == ("failed", "compressor_timeout")
        assert result.fragment("history").messages == tuple(HISTORY)


# --- the integrations' memory runs on the same core ------------------------------------------


def test_no_to_thread_or_hand_driven_loop_outside_the_effects_module() -> None:
    from pathlib import Path

    import contextwise

    package = Path(contextwise.__file__).parent
    offenders = [
        f"{path.relative_to(package)}: {word}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "_effects.py"
        for word in ("to_thread", "await_blocking")
        if word in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


class ConversationThreadStore(MemoryStore):
    """A memory store that records the threads of its conversation calls."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def load_conversation(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.add(threading.get_ident())
        return super().load_conversation(*args, **kwargs)

    def save_conversation(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.add(threading.get_ident())
        return super().save_conversation(*args, **kwargs)


def test_the_integrations_memory_runs_on_the_effects_core_from_either_face() -> None:
    from contextwise.integrations._conversation import Conversation

    store = ConversationThreadStore()
    results: list[tuple[str, int]] = []

    async def on_result(result: Any) -> None:
        await asyncio.sleep(0)
        results.append((result.report.conversation.status, threading.get_ident()))

    conversation = Conversation(
        POLICY, "history", on_result, {"compressors": {"short": short}}, store=store
    )
    for private in ("_recall", "_read_store", "_remember", "_prepared", "_stored"):
        assert not hasattr(conversation, private), private
    first = [{"role": "user", "content": "Hi"}]

    async def handler() -> tuple[int, list[Any]]:
        return threading.get_ident(), (await conversation.afit(first, "k")).messages

    loop_thread, messages = asyncio.run(handler())
    assert messages == first
    # The async face: the store's calls in a worker thread, the callback awaited on the loop.
    assert store.threads and loop_thread not in store.threads
    assert results == [("resynced", loop_thread)]
    store.threads.clear()
    second = [*first, {"role": "assistant", "content": "Hello"}]
    # The sync face: the store on the caller's thread, the async callback on a private loop.
    assert conversation.fit(second, "k").messages == second
    assert store.threads == {threading.get_ident()}
    assert [status for status, _ in results] == ["resynced", "extended"]
