"""Routing falls back on the ordinary faces of a timeout or an outage, one test per case."""

from __future__ import annotations

import asyncio
import errno
import socket

import httpx
import openai
import pytest

from contextwise import (
    ContextPolicy,
    MessagesFragment,
    ModelRouter,
    ModelRouting,
    QuotaExceededError,
    RouteOutcome,
    RoutingConfigurationError,
    process_context,
)
from support.routing import FakeProvider, chained, context, make_routing, raising

REQUEST = httpx.Request("POST", "https://decisions.example/v1/chat/completions")


def route_with(error: BaseException, **overrides: object) -> RouteOutcome:
    return ModelRouter(make_routing(FakeProvider(raising(error)), **overrides)).route(context())


def assert_falls_back(error: BaseException, **overrides: object) -> None:
    outcome = route_with(error, **overrides)
    assert (outcome.choice, outcome.reason) == ("fast", "unavailable")


def test_the_builtin_timeout_error_falls_back() -> None:
    assert_falls_back(TimeoutError("read timed out"))


def test_asyncio_timeout_error_falls_back() -> None:
    assert_falls_back(asyncio.TimeoutError())  # noqa: UP041 - the alias is the case under test


def test_a_connection_reset_falls_back() -> None:
    assert_falls_back(ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"))


def test_a_refused_connection_falls_back() -> None:
    assert_falls_back(ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"))


def test_any_connection_error_falls_back() -> None:
    assert_falls_back(BrokenPipeError(errno.EPIPE, "Broken pipe"))
    assert_falls_back(ConnectionError("connection lost"))


def test_a_network_os_error_falls_back() -> None:
    assert_falls_back(OSError(errno.ENETUNREACH, "Network is unreachable"))
    assert_falls_back(OSError(errno.EHOSTUNREACH, "No route to host"))


def test_a_host_name_that_does_not_resolve_falls_back() -> None:
    assert_falls_back(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))


def test_an_httpx_transport_error_falls_back() -> None:
    assert_falls_back(httpx.ConnectError("connect failed", request=REQUEST))
    assert_falls_back(httpx.ReadTimeout("read timed out", request=REQUEST))


def test_an_openai_connection_error_falls_back() -> None:
    assert_falls_back(openai.APIConnectionError(request=REQUEST))


def test_an_openai_timeout_falls_back() -> None:
    assert_falls_back(openai.APITimeoutError(request=REQUEST))


def test_an_ordinary_fault_is_found_in_the_cause_chain() -> None:
    assert_falls_back(chained(8, ConnectionResetError("reset")))
    with pytest.raises(RuntimeError):
        route_with(chained(9, ConnectionResetError("reset")))


def test_fallback_on_adds_user_defined_outages() -> None:
    class GatewayDown(Exception):
        pass

    with pytest.raises(GatewayDown):
        route_with(GatewayDown())
    assert_falls_back(GatewayDown(), fallback_on=lambda error: isinstance(error, GatewayDown))
    assert_falls_back(
        chained(3, GatewayDown()), fallback_on=lambda error: isinstance(error, GatewayDown)
    )


def test_fallback_on_must_be_callable() -> None:
    with pytest.raises(RoutingConfigurationError) as caught:
        make_routing(FakeProvider(raising(TimeoutError())), fallback_on="timeouts")
    assert (caught.value.code, caught.value.params["field"]) == (
        "fallback_on_not_callable",
        "fallback_on",
    )


def test_a_quota_error_still_propagates_behind_an_ordinary_fault() -> None:
    error = ConnectionResetError("reset")
    error.__cause__ = QuotaExceededError("429")
    with pytest.raises(ConnectionResetError):
        route_with(error)
    with pytest.raises(QuotaExceededError):
        route_with(QuotaExceededError("429"), fallback_on=lambda error: True)


@pytest.mark.parametrize(
    "error",
    [
        ValueError("foreign"),
        FileNotFoundError(errno.ENOENT, "No such file"),
        PermissionError(errno.EACCES, "Permission denied"),
        openai.BadRequestError(
            "bad", response=httpx.Response(400, request=REQUEST), body=None
        ),
    ],
)
def test_foreign_exceptions_still_propagate(error: Exception) -> None:
    with pytest.raises(type(error)):
        route_with(error)


def test_on_error_fail_lets_ordinary_faults_propagate() -> None:
    with pytest.raises(ConnectionResetError):
        route_with(ConnectionResetError("reset"), on_error="fail")


def test_a_policy_model_selection_falls_back_to_sequence_on_an_ordinary_fault() -> None:
    policy = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "triggerChars": 10,
            "selection": {"mode": "model", "model": "mini"},
            "steps": [{"id": "t", "kind": "trim", "fragmentId": "h", "keepGroups": 1}],
        }
    )
    history = [{"role": "user", "content": f"message {n}"} for n in range(4)]
    result = process_context(
        policy,
        [MessagesFragment("h", messages=history)],
        decision_provider=FakeProvider(raising(ConnectionRefusedError("refused"))),
    )
    assert result.report.decisions[-1].mode == "sequence"
    assert len(result.removed["h"]) == 3


def test_routing_keeps_its_declaration_immutable_with_fallback_on() -> None:
    routing: ModelRouting = make_routing(
        FakeProvider(raising(TimeoutError())), fallback_on=lambda error: False
    )
    with pytest.raises(AttributeError):
        routing.fallback_on = None  # type: ignore[misc]
