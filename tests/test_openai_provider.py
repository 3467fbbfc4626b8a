"""OpenAIDecisionProvider against a small OpenAI-compatible HTTP server on 127.0.0.1.

The tests use the official ``openai`` client with ``max_retries=0``; the server answers like a
chat completions endpoint with a ``json_schema`` response format, and with its error statuses.
"""

from __future__ import annotations

import gc
import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest

from contextwise import (
    DecisionRequest,
    DecisionResponseError,
    DecisionTimeoutError,
    ModelRouter,
    OpenAIDecisionProvider,
    ProviderUnavailableError,
    QuotaExceededError,
    RoutingConfigurationError,
    RoutingEvent,
    Usage,
)
from support.errors import assert_translated
from support.routing import DECISION, context, make_routing

QUESTIONS = {"model": DECISION.questions["model"]}


@dataclass
class Reply:
    """One scripted answer of the fake endpoint."""

    status: int = 200
    body: bytes = b""
    hang: bool = False


@dataclass
class FakeEndpoint:
    """The state shared with the HTTP handler: scripted replies and received requests."""

    url: str = ""
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def answer(self, content: str, *, prompt_tokens: int = 50, completion_tokens: int = 7) -> None:
        self.replies.append(Reply(body=_completion(content, prompt_tokens, completion_tokens)))

    def choose(self, choice: str, confidence: float, rationale: str = "") -> None:
        answer = {"choice": choice, "confidence": confidence, "rationale": rationale}
        self.answer(json.dumps({"answers": {"model": answer}}))

    def error(self, status: int, message: str = "upstream error") -> None:
        body = {"error": {"message": message, "type": "server_error", "code": None}}
        self.replies.append(Reply(status=status, body=json.dumps(body).encode()))


def _completion(content: str | None, prompt_tokens: int, completion_tokens: int) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "router-mini-2025",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    ).encode()


def _handler(endpoint: FakeEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            endpoint.paths.append(self.path)
            endpoint.requests.append(json.loads(self.rfile.read(length)))
            reply = endpoint.replies.popleft()
            if reply.hang:
                endpoint.release.wait(10)
                return
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    state = FakeEndpoint()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def _provider(endpoint: FakeEndpoint, **options: Any) -> OpenAIDecisionProvider:
    return OpenAIDecisionProvider(
        base_url=endpoint.url, api_key="test-key", max_retries=0, **options
    )


def _request() -> DecisionRequest:
    return DecisionRequest(model="router-mini", questions=QUESTIONS, state={"step": 1})


async def test_a_structured_answer_is_parsed(endpoint: FakeEndpoint) -> None:
    endpoint.choose("deep", 0.91, "The test fails with a stack trace.")
    provider = _provider(endpoint)
    response = await provider.request(_request())
    await provider.client.close()
    answer = response.answers["model"]
    assert (answer.choice, answer.confidence) == ("deep", 0.91)  # type: ignore[union-attr]
    assert answer.rationale == "The test fails with a stack trace."
    assert response.model == "router-mini-2025"
    assert response.usage == Usage(input_tokens=50, output_tokens=7)
    assert endpoint.paths == ["/v1/chat/completions"]
    [sent] = endpoint.requests
    assert sent["model"] == "router-mini"
    assert "temperature" not in sent
    assert sent["response_format"]["type"] == "json_schema"
    schema = sent["response_format"]["json_schema"]
    assert schema["strict"] is True
    answer_schema = schema["schema"]["properties"]["answers"]["properties"]["model"]
    assert answer_schema["properties"]["choice"]["enum"] == ["fast", "deep"]
    assert [message["role"] for message in sent["messages"]] == ["system", "user"]
    user = json.loads(sent["messages"][1]["content"])
    assert user["state"] == {"step": 1}
    assert user["questions"]["model"]["options"] == DECISION.questions["model"].criteria  # type: ignore[union-attr]


async def test_options_are_sent_and_an_empty_rationale_becomes_none(
    endpoint: FakeEndpoint,
) -> None:
    endpoint.choose("fast", 0.5, "")
    provider = _provider(
        endpoint, temperature=0.0, strict=False, extra_body={"seed": 7}, instructions="Decide."
    )
    response = await provider.request(_request())
    await provider.client.close()
    assert response.answers["model"].rationale is None
    [sent] = endpoint.requests
    assert (sent["temperature"], sent["seed"]) == (0.0, 7)
    assert sent["response_format"]["json_schema"]["strict"] is False
    assert sent["messages"][0]["content"] == "Decide."


async def test_the_router_routes_with_the_real_client(endpoint: FakeEndpoint) -> None:
    endpoint.choose("deep", 0.97)
    provider = _provider(endpoint, name="local-vllm")
    events: list[RoutingEvent] = []
    outcome = await ModelRouter(make_routing(provider), on_event=events.append).aroute(context())
    await provider.client.close()
    assert (outcome.choice, outcome.reason, outcome.confidence) == ("deep", "selected", 0.97)
    assert outcome.usage == Usage(input_tokens=50, output_tokens=7)
    assert [event.kind for event in events] == ["started", "finished", "route"]
    assert json.loads(endpoint.requests[0]["messages"][1]["content"])["state"]["step"] == 1


async def test_429_raises_quota_exceeded_and_propagates_through_the_router(
    endpoint: FakeEndpoint,
) -> None:
    endpoint.error(429, "You exceeded your current quota.")
    endpoint.error(429, "You exceeded your current quota.")
    provider = _provider(endpoint)
    with pytest.raises(QuotaExceededError) as excinfo:
        await provider.request(_request())
    assert isinstance(excinfo.value.__cause__, openai.RateLimitError)
    assert excinfo.value.detail is not None and "429" in excinfo.value.detail
    with pytest.raises(QuotaExceededError):
        await ModelRouter(make_routing(provider, on_error="fallback")).aroute(context())
    await provider.client.close()
    assert len(endpoint.requests) == 2


@pytest.mark.parametrize("status", [500, 502, 503, 529])
async def test_5xx_raises_unavailable_and_the_router_falls_back(
    endpoint: FakeEndpoint, status: int
) -> None:
    endpoint.error(status)
    endpoint.error(status)
    provider = _provider(endpoint)
    with pytest.raises(ProviderUnavailableError) as excinfo:
        await provider.request(_request())
    assert isinstance(excinfo.value.__cause__, openai.InternalServerError)
    assert excinfo.value.detail is not None and str(status) in excinfo.value.detail
    outcome = await ModelRouter(make_routing(provider)).aroute(context())
    await provider.client.close()
    assert (outcome.choice, outcome.reason) == ("fast", "unavailable")
    assert len(endpoint.requests) == 2


async def test_a_connection_failure_raises_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAIDecisionProvider(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="test-key", max_retries=0
    )
    with pytest.raises(ProviderUnavailableError) as excinfo:
        await provider.request(_request())
    await provider.client.close()
    assert isinstance(excinfo.value.__cause__, openai.APIConnectionError)


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (404, openai.NotFoundError),
        (422, openai.UnprocessableEntityError),
    ],
)
async def test_4xx_propagates_unchanged_even_through_the_router(
    endpoint: FakeEndpoint, status: int, error_type: type[Exception]
) -> None:
    endpoint.error(status, "bad request")
    provider = _provider(endpoint)
    with pytest.raises(error_type):
        await ModelRouter(make_routing(provider)).aroute(context())
    await provider.client.close()


async def test_a_slow_answer_raises_a_decision_timeout(endpoint: FakeEndpoint) -> None:
    endpoint.replies.append(Reply(hang=True))
    provider = _provider(endpoint, timeout=0.2)
    with pytest.raises(DecisionTimeoutError) as excinfo:
        await provider.request(_request())
    await provider.client.close()
    assert excinfo.value.code == "decision_timeout"
    assert isinstance(excinfo.value.__cause__, openai.APITimeoutError)


async def test_the_routers_timeout_cuts_a_slow_endpoint(endpoint: FakeEndpoint) -> None:
    endpoint.replies.append(Reply(hang=True))
    provider = _provider(endpoint)
    events: list[RoutingEvent] = []
    routing = make_routing(provider, timeout=0.2)
    outcome = await ModelRouter(routing, on_event=events.append).aroute(context())
    await provider.client.close()
    assert (outcome.choice, outcome.reason) == ("fast", "unavailable")
    failed = events[1]
    assert failed.kind == "failed"
    assert getattr(failed.error, "code", None) == "decision_timeout_after"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (_completion("this is not JSON", 1, 1), "not JSON"),
        (b"<html>gateway</html>", "body is not JSON"),
        (_completion(json.dumps({"answers": {}}), 1, 1), None),
    ],
)
async def test_bad_json_raises_a_decision_response_error(
    endpoint: FakeEndpoint, body: bytes, detail: str | None
) -> None:
    endpoint.replies.append(Reply(body=body))
    provider = _provider(endpoint)
    with pytest.raises(DecisionResponseError) as excinfo:
        await ModelRouter(make_routing(provider)).aroute(context())
    await provider.client.close()
    if detail is None:
        assert excinfo.value.code == "missing_answer"
    else:
        assert excinfo.value.code == "malformed_response"
        assert excinfo.value.detail is not None and detail in excinfo.value.detail


async def test_an_answer_outside_the_labels_is_rejected(endpoint: FakeEndpoint) -> None:
    endpoint.choose("medium", 0.9)
    provider = _provider(endpoint)
    with pytest.raises(DecisionResponseError) as excinfo:
        await ModelRouter(make_routing(provider)).aroute(context())
    await provider.client.close()
    assert excinfo.value.code == "unknown_choice"


async def test_a_refusal_is_a_malformed_response(endpoint: FakeEndpoint) -> None:
    body = json.loads(_completion(None, 1, 1))
    body["choices"][0]["message"]["refusal"] = "I cannot help with that."
    endpoint.replies.append(Reply(body=json.dumps(body).encode()))
    provider = _provider(endpoint)
    with pytest.raises(DecisionResponseError) as excinfo:
        await provider.request(_request())
    await provider.client.close()
    assert excinfo.value.detail == "refusal: I cannot help with that."


def test_a_client_and_its_settings_are_exclusive() -> None:
    client = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x")
    assert OpenAIDecisionProvider(client).client is client
    with pytest.raises(RoutingConfigurationError) as excinfo:
        OpenAIDecisionProvider(client, api_key="other")
    assert (excinfo.value.code, excinfo.value.params["field"]) == ("client_conflict", "api_key")


def test_importing_contextwise_does_not_import_openai() -> None:
    import subprocess
    import sys

    code = "import sys, contextwise; print('openai' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def _reply(message: object = None, **fields: object) -> bytes:
    body = json.loads(_completion("{}", 1, 1))
    if message is not None:
        body["choices"][0]["message"] = message
    body.update(fields)
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (_reply({"role": "assistant", "content": 42}), "not text"),
        (_reply({"role": "assistant", "content": ["a", "b"]}), "not text"),
        (_reply("just a string"), "no message"),
        (_reply(choices={"0": {"message": {"content": "{}"}}}), "no choices"),
        (_reply(choices="none"), "no choices"),
        (_reply({"role": "assistant", "content": "[" * 5_000 + "]" * 5_000}), None),
        (_reply(model=12), None),
        (_reply(usage={"prompt_tokens": "many", "completion_tokens": 1}), None),
    ],
)
async def test_a_malformed_200_reply_is_a_decision_response_error(
    endpoint: FakeEndpoint, body: bytes, detail: str | None
) -> None:
    endpoint.replies.append(Reply(body=body))
    endpoint.replies.append(Reply(body=body))
    provider = _provider(endpoint)
    with pytest.raises(DecisionResponseError) as caught:
        await provider.request(_request())
    if detail is not None:
        assert caught.value.detail is not None and detail in caught.value.detail
    # The documented rule: a malformed answer propagates through the router, never a fallback.
    with pytest.raises(DecisionResponseError):
        await ModelRouter(make_routing(provider, on_error="fallback")).aroute(context())
    await provider.client.close()


async def test_a_reply_too_deep_for_the_json_parser_is_too_deep_on_every_python(
    endpoint: FakeEndpoint,
) -> None:
    # Python 3.11 and 3.12's parser raises RecursionError here; 3.13's reads it: same answer.
    endpoint.replies.append(
        Reply(body=_reply({"role": "assistant", "content": "[" * 5_000 + "]" * 5_000}))
    )
    provider = _provider(endpoint)
    with pytest.raises(DecisionResponseError) as caught:
        await provider.request(_request())
    await provider.client.close()
    assert caught.value.code == "too_deep"


async def test_a_reply_nested_too_deep_is_a_decision_response_error(endpoint: FakeEndpoint) -> None:
    nested: list[object] = []
    for _ in range(300):
        nested = [nested]
    answer = {"choice": "deep", "confidence": 0.5, "rationale": "x", "extra": nested}
    endpoint.answer(json.dumps({"answers": {"model": answer}}))
    provider = _provider(endpoint)
    with pytest.raises(DecisionResponseError) as caught:
        await provider.request(_request())
    await provider.client.close()
    assert caught.value.code == "too_deep"


def test_a_state_with_an_integer_json_cannot_carry_is_refused_before_sending(
    endpoint: FakeEndpoint,
) -> None:
    provider = _provider(endpoint)
    routing = make_routing(provider, state=lambda ctx: {"step": ctx.step, "id": 10**5000})
    with pytest.raises(RoutingConfigurationError) as caught:
        ModelRouter(routing).route(context())
    assert caught.value.code == "state_huge_int"
    assert caught.value.params["path"] == "$.id"
    assert endpoint.requests == []


def test_one_provider_serves_many_sync_routes_and_leaves_nothing_on_stderr(
    endpoint: FakeEndpoint,
) -> None:
    unraisable: list[object] = []
    previous = sys.unraisablehook
    sys.unraisablehook = unraisable.append
    try:
        provider = _provider(endpoint, name="shared")
        router = ModelRouter(make_routing(provider))
        for _ in range(5):
            endpoint.choose("deep", 0.95)
            assert router.route(context()).choice == "deep"
        del router, provider
        gc.collect()
    finally:
        sys.unraisablehook = previous
    assert len(endpoint.requests) == 5
    assert unraisable == []  # no "Event loop is closed" from a client collected late


def test_settings_of_the_wrong_type_or_refused_by_the_client_are_coded_errors() -> None:
    for settings, code in (
        ({"base_url": 5}, "wrong_type"),
        ({"base_url": "http://exa\x00mple/v1", "api_key": "k"}, "client_not_created"),
        ({"api_key": ["k"]}, "wrong_type"),
        ({"extra_body": [("seed", 1)]}, "wrong_type"),
        ({"strict": "yes"}, "wrong_type"),
        ({"timeout": 10**400}, "invalid_timeout"),
        ({"temperature": 10**400}, "wrong_type"),
    ):
        with pytest.raises(RoutingConfigurationError) as caught:
            OpenAIDecisionProvider(**settings)  # type: ignore[arg-type]
        assert caught.value.code == code, settings
        assert_translated(caught.value)
