"""The one sync/async mechanism: a generator core, driven by a sync driver or an async driver.

A core is a generator that does all the work except calling application code (a compressor, an
app, a decision provider, a state function, a session store). When it needs such a call, it
yields an :class:`Invoke` and receives a :class:`Reply`: the call's value, or the error it raised
(an expired timeout is the error :class:`CallTimedOut`; a cancellation is an error too, which
the core raises again). :func:`run_sync` and :func:`run_async` are the two drivers. So every
public function exists once, as a core, and its sync and async faces are two lines each.

A request says whether its call blocks (a session store's transaction, a sync compressor): the
async driver runs a blocking call in a worker thread with :func:`asyncio.to_thread`, and the
sync driver runs it on the caller's thread, or in a worker thread when a timeout must bound it.
Any other call runs on the driver's thread; an awaitable it returns is awaited on the running
loop by the async driver, and by the sync driver on a private event loop (in a worker thread
when an event loop is already running on the caller's thread: Jupyter, an async web handler).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from collections.abc import Awaitable, Callable, Generator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeAlias, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Invoke:
    """A request to call application code: a function, its arguments and a timeout.

    ``blocking`` says that the call may block its thread (I/O, a sync model call): the async
    driver runs it in a worker thread, and the sync driver too when a timeout must bound it.
    ``async_func`` is the same call's own async face (a router's ``aroute`` beside its
    ``route``): the async driver calls it instead of ``func``, so a core never asks which driver
    runs it.
    """

    func: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    blocking: bool = False
    async_func: Callable[..., Any] | None = None


class CallTimedOut(Exception):
    """The error of a call whose timeout expired; the core turns it into its own error."""

    def __init__(self, timeout: float | None) -> None:
        super().__init__(timeout)
        self.timeout = timeout


@dataclass(frozen=True, slots=True)
class Reply:
    """The outcome of an :class:`Invoke`: its value, or the error it raised."""

    value: Any = None
    error: BaseException | None = None

    @property
    def timed_out(self) -> bool:
        """Whether the call's timeout expired."""
        return isinstance(self.error, CallTimedOut)

    def failure(self) -> Exception | None:
        """The error of a failed call, for the core to judge; ``None`` when it succeeded.

        An error that is not an :class:`Exception` (a cancellation, an interrupt) is raised
        again here: no core turns it into an outcome of its own.
        """
        if self.error is not None and not isinstance(self.error, Exception):
            raise self.error
        return self.error

    def get(self) -> Any:
        """The value of the call, raising the error it raised."""
        if self.error is not None:
            raise self.error
        return self.value


Effects: TypeAlias = Generator[Invoke, Reply, T]
"""A computation that may ask its driver to call application code."""


def call(func: Callable[..., Any], *args: Any) -> Effects[Any]:
    """Call application code without a timeout, and return its value or raise its error."""
    reply = yield Invoke(func, args)
    return reply.get()


def call_faces(
    func: Callable[..., Any], async_func: Callable[..., Any], *args: Any
) -> Effects[Any]:
    """Like :func:`call`, for application code with a sync and an async face: the sync driver
    calls ``func`` and the async driver ``async_func``."""
    reply = yield Invoke(func, args, async_func=async_func)
    return reply.get()


def call_blocking(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Effects[Any]:
    """Like :func:`call`, for a call that blocks its thread (a session store's)."""
    reply = yield Invoke(func, args, kwargs, blocking=True)
    return reply.get()


# --- drivers ---------------------------------------------------------------------------------


def run_sync(core: Effects[T]) -> T:
    """Drive a core from sync code; it works whether or not an event loop is running here."""
    try:
        request = next(core)
        while True:
            request = core.send(invoke_sync(request))
    except StopIteration as stop:
        result: T = stop.value
        return result


async def run_async(core: Effects[T]) -> T:
    """Drive a core from async code: calls are awaited on the running loop."""
    try:
        request = next(core)
        while True:
            request = core.send(await invoke_async(request))
    except StopIteration as stop:
        result: T = stop.value
        return result


# --- calls from sync code --------------------------------------------------------------------


def invoke_sync(request: Invoke) -> Reply:
    """Call application code from sync code, honouring the timeout."""
    try:
        if request.blocking and request.timeout is not None:
            return _in_thread_sync(request, request.timeout)
        value = request.func(*request.args, **request.kwargs)
        if inspect.isawaitable(value):
            return Reply(await_blocking(bounded(value, request.timeout)))
        return Reply(value)
    except BaseException as exc:  # noqa: BLE001 - the core decides what an error means
        return Reply(error=exc)


def _in_thread_sync(request: Invoke, timeout: float) -> Reply:
    """Run a call in a worker thread and wait at most ``timeout`` seconds for it.

    When the timeout expires the result is discarded; the thread cannot be stopped and finishes
    in the background.
    """
    replies: list[Reply] = []
    done = threading.Event()

    def run() -> None:
        try:
            replies.append(Reply(_call_to_completion(request)))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            replies.append(Reply(error=exc))
        finally:
            done.set()

    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(run,), name="contextwise-call", daemon=True).start()
    if not done.wait(timeout):
        return Reply(error=CallTimedOut(timeout))
    return replies[0]


def _call_to_completion(request: Invoke) -> Any:
    value = request.func(*request.args, **request.kwargs)
    if inspect.isawaitable(value):
        return asyncio.run(resolve(value))
    return value


async def resolve(awaitable: Awaitable[T]) -> T:
    """Await an awaitable; turns any awaitable into a coroutine for ``asyncio.run``."""
    return await awaitable


async def bounded(awaitable: Awaitable[T], timeout: float | None) -> T:
    """Await an awaitable for at most ``timeout`` seconds; it is cancelled when the time is up.

    Raises:
        CallTimedOut: When the time is up. A ``TimeoutError`` that the awaitable raises by
            itself is its own error, not an expired timeout.
    """
    if timeout is None:
        return await awaitable
    scope = asyncio.timeout(timeout)
    try:
        async with scope:
            return await awaitable
    except TimeoutError:
        if scope.expired():
            raise CallTimedOut(timeout) from None
        raise


def await_blocking(awaitable: Awaitable[T]) -> T:
    """Run an awaitable to completion from sync code, even when an event loop is running here.

    Inside a running loop, the awaitable runs on a private loop in a worker thread, with the
    caller's context variables (the locale among them); the caller's loop is never re-entered.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(resolve(awaitable))
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="contextwise-loop") as executor:
        return executor.submit(context.run, asyncio.run, resolve(awaitable)).result()


# --- calls from async code -------------------------------------------------------------------


def is_async_callable(func: Callable[..., Any]) -> bool:
    """Whether calling ``func`` returns a coroutine: a coroutine function or async ``__call__``."""
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__call__", None)  # noqa: B004 - callable objects with an async __call__
    )


async def invoke_async(request: Invoke) -> Reply:
    """Call application code from async code: blocking calls in a worker thread, awaitables on
    the running loop, each within the timeout."""
    try:
        if request.blocking:
            return Reply(await _in_thread(request))
        func = request.func if request.async_func is None else request.async_func
        value = func(*request.args, **request.kwargs)
        if inspect.isawaitable(value):
            value = await bounded(value, request.timeout)
        return Reply(value)
    except BaseException as exc:  # noqa: BLE001 - the core decides what an error means
        return Reply(error=exc)


async def _in_thread(request: Invoke) -> Any:
    """Run a blocking call in a worker thread, for at most the request's timeout.

    A cancellation from outside waits for the call to end (a transaction cannot be stopped
    midway), so that nothing is running any more once it propagates. When the timeout expires
    the result is discarded, and the call finishes in the background.
    """
    running = asyncio.ensure_future(
        asyncio.to_thread(partial(request.func, *request.args, **request.kwargs))
    )
    try:
        done, _ = await asyncio.wait({running}, timeout=request.timeout)
    except asyncio.CancelledError:
        await asyncio.wait({running})
        raise
    if not done:
        raise CallTimedOut(request.timeout)
    value = running.result()
    if inspect.isawaitable(value):
        value = await bounded(value, request.timeout)
    return value
