"""The one sync/async mechanism: a generator core, driven by a sync driver or an async driver.

A core is a generator that does all the work except calling application code (a compressor, an
app, a decision provider, a state function). When it needs such a call, it yields an
:class:`Invoke` and receives a :class:`Reply`. :func:`run_sync` and :func:`run_async` are the two
drivers: the async one awaits the calls on the running loop, the sync one runs them to completion
on the caller's thread, and awaits an async call on a private event loop in a worker thread when
an event loop is already running there (Jupyter, an async web handler). So every public function
exists once, as a core, and its sync and async faces are two lines each.

A driver throws the exceptions that escape a call, cancellation included, into the core, so a
core may observe them (the router logs a cancelled decision) before they propagate.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Awaitable, Callable, Generator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

T = TypeVar("T")

# The records of this module are created for every call and are not frozen: a frozen dataclass is
# about three times slower to create. Nothing changes them once made.


@dataclass(slots=True)
class Invoke:
    """A request to call application code: a function, its arguments and a timeout.

    With ``inline``, a sync function runs on the driver's thread even with a timeout, which then
    bounds only an awaitable result (decision providers: a sync one is a quick local decision).
    Without it, a sync function with a timeout runs in a worker thread, so that the timeout bounds
    it too (compressors and apps).
    """

    func: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    inline: bool = False


@dataclass(slots=True)
class Reply:
    """The outcome of an :class:`Invoke`: a value, an error, or an expired timeout."""

    value: Any = None
    error: Exception | None = None
    timed_out: bool = False


Effects: TypeAlias = Generator[Invoke, Reply, T]
"""A computation that may ask its driver to call application code."""


def value_of(reply: Reply) -> Any:
    """The value of a reply, raising the error the call raised.

    A core that has no use for a timeout of its own (it asked for none) calls this.
    """
    if reply.error is not None:
        raise reply.error
    return reply.value


def call(func: Callable[..., Any], *args: Any) -> Effects[Any]:
    """Call application code inline, without a timeout, and return its value or raise its error."""
    reply = yield Invoke(func, args, inline=True)
    return value_of(reply)


# --- drivers ---------------------------------------------------------------------------------


def run_sync(core: Effects[T]) -> T:
    """Drive a core from sync code; it works whether or not an event loop is running here."""
    try:
        request = next(core)
        while True:
            try:
                reply = invoke_sync(request)
            except BaseException as exc:  # noqa: BLE001 - the core sees it, then it propagates
                request = core.throw(exc)
            else:
                request = core.send(reply)
    except StopIteration as stop:
        result: T = stop.value
        return result


async def run_async(core: Effects[T]) -> T:
    """Drive a core from async code: calls are awaited on the running loop."""
    try:
        request = next(core)
        while True:
            try:
                reply = await invoke_async(request)
            except BaseException as exc:  # noqa: BLE001 - cancellation reaches the core, then us
                request = core.throw(exc)
            else:
                request = core.send(reply)
    except StopIteration as stop:
        result: T = stop.value
        return result


# --- calls from sync code --------------------------------------------------------------------


def invoke_sync(request: Invoke) -> Reply:
    """Call application code from sync code, honouring the timeout."""
    try:
        if request.timeout is None or request.inline:
            value = request.func(*request.args, **request.kwargs)
            if inspect.isawaitable(value):
                return await_blocking(bounded(value, request.timeout))
            return Reply(value=value)
        return _threaded(request, request.timeout)
    except Exception as exc:  # noqa: BLE001 - the core decides what an error means
        return Reply(error=exc)


def _threaded(request: Invoke, timeout: float) -> Reply:
    """Run a call in a worker thread and wait at most ``timeout`` seconds for it.

    When the timeout expires the result is discarded; the thread cannot be stopped and finishes
    in the background.
    """
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contextwise-step")
    try:
        context = contextvars.copy_context()
        future = executor.submit(context.run, _call_to_completion, request)
        try:
            return Reply(value=future.result(timeout=timeout))
        except TimeoutError:
            if future.done():
                raise
            future.cancel()
            return Reply(timed_out=True)
    finally:
        executor.shutdown(wait=False)


def _call_to_completion(request: Invoke) -> Any:
    value = request.func(*request.args, **request.kwargs)
    if inspect.isawaitable(value):
        return asyncio.run(resolve(value))
    return value


async def resolve(awaitable: Awaitable[T]) -> T:
    """Await an awaitable; turns any awaitable into a coroutine for ``asyncio.run``."""
    return await awaitable


async def bounded(awaitable: Awaitable[Any], timeout: float | None) -> Reply:
    """Await an awaitable for at most ``timeout`` seconds; it is cancelled when the time is up.

    A ``TimeoutError`` that the awaitable raises by itself is its own error, not an expired
    timeout.
    """
    if timeout is None:
        return Reply(value=await awaitable)
    scope = asyncio.timeout(timeout)
    try:
        async with scope:
            value = await awaitable
    except TimeoutError as exc:
        if scope.expired():
            return Reply(timed_out=True)
        return Reply(error=exc)
    return Reply(value=value)


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
    """Call application code from async code: await async functions, thread sync ones on timeout."""
    timeout = request.timeout
    try:
        if timeout is None or request.inline or is_async_callable(request.func):
            value = request.func(*request.args, **request.kwargs)
            if inspect.isawaitable(value):
                return await bounded(value, timeout)
            return Reply(value=value)
        return await bounded(_in_thread(request), timeout)
    except Exception as exc:  # noqa: BLE001 - the core decides what an error means
        return Reply(error=exc)


async def _in_thread(request: Invoke) -> Any:
    value = await asyncio.to_thread(request.func, *request.args, **request.kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value
