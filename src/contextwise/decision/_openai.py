"""A decision provider for any OpenAI-compatible chat completions endpoint (the ``openai`` extra).

Install it with ``pip install "contextwise[openai]"``. The ``openai`` package is imported only when
a provider is created, so the rest of contextwise never needs it.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Any

from contextwise._checks import MAX_DEPTH, finite_float, require_instance, too_deep
from contextwise._translation import short_repr, short_text
from contextwise.accounting import usage_from
from contextwise.decision._core import check_timeout, coerce_response
from contextwise.decision._schema import (
    ChoiceQuestion,
    DecisionRequest,
    DecisionResponse,
    Question,
)
from contextwise.errors import (
    ContextwiseError,
    DecisionResponseError,
    DecisionTimeoutError,
    MissingDependencyError,
    ProviderUnavailableError,
    QuotaExceededError,
    RoutingConfigurationError,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

DEFAULT_INSTRUCTIONS = (
    "You are a decision model inside an agent harness. You receive questions and the state of "
    "the conversation as JSON. Answer every question. For a choice question, pick exactly one of "
    "its option labels, give your confidence from 0 to 1 that it is the best option, and a short "
    "rationale. For a text question, answer in a short text. Reply with JSON only, following the "
    "schema."
)
"""The system prompt sent to the decision model, unless ``instructions`` replaces it."""


class OpenAIDecisionProvider:
    """Answer decision requests with an OpenAI-compatible chat model and structured output.

    Each request becomes one ``chat.completions.create`` call with a ``json_schema`` response
    format: the schema lists every question, restricts each choice to its labels and asks for a
    confidence and a rationale. The endpoint can be OpenAI or any server that speaks the same
    protocol (vLLM, Ollama, LiteLLM, OpenRouter, Azure OpenAI...).

    Errors are mapped so that the router can decide what to do:

    - a timeout of the client raises :class:`~contextwise.errors.DecisionTimeoutError`;
    - a 429 status raises :class:`~contextwise.errors.QuotaExceededError` (it always propagates);
    - a 5xx status (529 "overloaded" included) or a connection failure raises
      :class:`~contextwise.errors.ProviderUnavailableError` (the router may fall back);
    - any other status (400, 401, 404...) propagates as the ``openai`` error itself;
    - a body that is not JSON, or a reply that is not the JSON the schema asks for, raises
      :class:`~contextwise.errors.DecisionResponseError` (it always propagates).

    The original ``openai`` error is always the ``__cause__`` of the mapped one. The ``openai``
    client retries 408, 409, 429 and 5xx answers and connection errors ``max_retries`` times (2 by
    default) with exponential backoff before any of this happens; the router's own ``timeout``
    bounds the whole call, retries included.

    Args:
        client: An ``openai.AsyncOpenAI`` client (or ``AsyncAzureOpenAI``), already configured.
            When omitted, one is created from ``base_url``, ``api_key``, ``timeout`` and
            ``max_retries`` (the client reads ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` when they
            are not given).
        name: The provider's name, recorded in events and logs.
        base_url: The endpoint's base URL, such as ``http://localhost:8000/v1``; only without
            ``client``.
        api_key: The API key; only without ``client``.
        timeout: The client's timeout in seconds for one HTTP request; only without ``client``.
        max_retries: How many times the client retries a failed request; only without
            ``client``.
        instructions: The system prompt sent to the decision model.
        temperature: The sampling temperature, or ``None`` to leave the model's default (some
            reasoning models accept no other).
        strict: Whether the endpoint must follow the JSON schema exactly (``strict`` structured
            output). Servers that do not support it may need ``False``.
        extra_body: Additional JSON fields sent with each request, for server-specific options.

    A provider made from settings gives each event loop its own client, closed when that loop
    shuts down: each call of a sync ``route()`` runs on an event loop of its own, and an
    ``openai`` client cannot outlive the loop that opened its connections. A client you give
    is used as it is, on the event loop it belongs to.

    Raises:
        RoutingConfigurationError: When ``client`` is given together with a setting it already
            holds (code ``client_conflict``), ``timeout`` is not a finite number of seconds
            greater than 0 (code ``invalid_timeout``), ``max_retries`` is not a whole number of
            zero or more, ``temperature`` is not a number from 0 to 2, ``name`` is blank, a
            setting has the wrong type (codes ``wrong_type``, ``out_of_range``,
            ``blank_value``), or the ``openai`` package refuses the settings, a base URL with
            control characters or no API key anywhere for example (code
            ``client_not_created``, with the package's error as ``__cause__``).
        MissingDependencyError: When the ``openai`` package is not installed and no client is
            given (code ``missing_extra``).

    Examples:
        >>> from contextwise import OpenAIDecisionProvider
        >>> provider = OpenAIDecisionProvider(base_url="http://127.0.0.1:9/v1", api_key="test")
        >>> provider.name
        'openai'
    """

    def __init__(
        self,
        client: AsyncOpenAI | None = None,
        *,
        name: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        instructions: str = DEFAULT_INSTRUCTIONS,
        temperature: float | None = None,
        strict: bool = True,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        _check_settings(name, timeout, max_retries, temperature)
        _check_request_settings(base_url, api_key, instructions, strict, extra_body)
        self._settings: dict[str, Any] | None = None
        self._client_taken = False
        if client is None:
            settings: dict[str, Any] = {"base_url": base_url, "api_key": api_key}
            if timeout is not None:
                settings["timeout"] = timeout
            if max_retries is not None:
                settings["max_retries"] = max_retries
            client = _new_client(settings)
            self._settings = settings
        else:
            given = {
                "base_url": base_url,
                "api_key": api_key,
                "timeout": timeout,
                "max_retries": max_retries,
            }
            for field, value in given.items():
                if value is not None:
                    raise RoutingConfigurationError("client_conflict", field=field)
        self.client = client
        """The ``openai`` async client that sends the requests: the one given, or the one made
        from the settings, which serves the first event loop that uses the provider."""
        self._loop_clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[AsyncOpenAI, AsyncGenerator[None, None]]
        ] = weakref.WeakKeyDictionary()
        self.name = name
        """The provider's name, recorded in events and logs."""
        self.instructions = instructions
        """The system prompt sent to the decision model."""
        self.temperature = temperature
        """The sampling temperature, or ``None`` for the model's default."""
        self.strict = strict
        """Whether the endpoint must follow the JSON schema exactly."""
        self.extra_body = dict(extra_body) if extra_body else None
        """Additional JSON fields sent with each request."""

    async def request(self, request: DecisionRequest) -> DecisionResponse:
        """Ask the chat model the request's questions and return its validated answers.

        Args:
            request: The decision model, the questions and the state.

        Returns:
            The answers, the model that answered and the tokens it spent.

        Raises:
            DecisionTimeoutError: When the client times out.
            QuotaExceededError: When the endpoint answers 429.
            ProviderUnavailableError: When the endpoint answers 5xx or cannot be reached.
            DecisionResponseError: When the body is not JSON, or the reply is not the JSON the
                schema asks for: no choices, a content that is not text, text that is not JSON
                or is nested too deep, answers that do not validate.
            InvalidTypeError: When ``request`` is not a :class:`DecisionRequest` (code
                ``not_an_instance``).
            openai.APIStatusError: Raised unchanged for any other error status.
        """
        import openai

        require_instance(request, DecisionRequest, "request", "DecisionRequest")
        options: dict[str, Any] = {}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if self.extra_body:
            options["extra_body"] = self.extra_body
        client = await self._loop_client()
        try:
            completion = await client.chat.completions.create(
                model=request.model,
                messages=[
                    {"role": "system", "content": self.instructions},
                    {"role": "user", "content": request_text(request)},
                ],
                response_format={
                    "type": "json_schema",
                    "json_schema": {
                        "name": "decision",
                        "schema": response_schema(request.questions),
                        "strict": self.strict,
                    },
                },
                **options,
            )
        except openai.APITimeoutError as exc:
            raise DecisionTimeoutError(str(exc)) from exc
        except openai.RateLimitError as exc:
            raise QuotaExceededError(f"{exc.status_code}: {exc.message}") from exc
        except openai.APIStatusError as exc:
            if exc.status_code >= 500:
                raise ProviderUnavailableError(f"{exc.status_code}: {exc.message}") from exc
            raise
        except openai.APIConnectionError as exc:
            raise ProviderUnavailableError(str(exc)) from exc
        except json.JSONDecodeError as exc:
            raise DecisionResponseError(
                "malformed_response", provider=self.name, detail=f"the body is not JSON: {exc}"
            ) from exc
        return self._parse(completion, request)

    async def _loop_client(self) -> AsyncOpenAI:
        """The client for the running event loop.

        An ``openai`` client keeps its connections on the event loop that opened them, and each
        sync ``route()`` runs on an event loop of its own. A client given by the caller is used
        as it is; with settings, each event loop gets a client of its own, closed when that loop
        shuts down (``asyncio.run`` does so), so no connection outlives its loop.
        """
        if self._settings is None:
            return self.client
        loop = asyncio.get_running_loop()
        found = self._loop_clients.get(loop)
        if found is not None:
            return found[0]
        client = _new_client(self._settings) if self._client_taken else self.client
        self._client_taken = True
        closer = _close_with_loop(client)
        await closer.__anext__()
        self._loop_clients[loop] = (client, closer)
        return client

    def _parse(self, completion: Any, request: DecisionRequest) -> DecisionResponse:
        content = self._content(completion)
        try:
            data = json.loads(content)
        except RecursionError as exc:  # Python 3.11 and 3.12 give up before the depth check
            raise _too_deep() from exc
        except ValueError as exc:
            raise DecisionResponseError(
                "malformed_response", provider=self.name, detail=f"not JSON: {content[:200]}"
            ) from exc
        if too_deep(data):  # Python 3.13's parser reads any depth: the same answer everywhere
            raise _too_deep()
        answers = data.get("answers") if isinstance(data, dict) else None
        if isinstance(answers, dict):
            for answer in answers.values():
                if isinstance(answer, dict) and answer.get("rationale") == "":
                    answer["rationale"] = None
        model = getattr(completion, "model", None)
        raw: dict[str, Any] = {"model": model or request.model, "answers": answers}
        usage = getattr(completion, "usage", None)
        if usage is not None:
            try:
                raw["usage"] = usage_from(usage, source="openai-chat")
            except ContextwiseError as exc:
                raise DecisionResponseError(
                    "malformed_response", provider=self.name, detail=f"usage: {exc}"
                ) from exc
        return coerce_response(raw, self)

    def _content(self, completion: Any) -> str:
        """The text of the reply's first choice; any other shape is a malformed response."""
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise DecisionResponseError(
                "malformed_response", provider=self.name, detail="the reply has no choices"
            )
        message = getattr(choices[0], "message", None)
        if message is None or isinstance(message, str | bytes) or not hasattr(message, "content"):
            raise DecisionResponseError(
                "malformed_response", provider=self.name, detail="the choice has no message"
            )
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise DecisionResponseError(
                "malformed_response", provider=self.name, detail=f"refusal: {short_text(refusal)}"
            )
        content = getattr(message, "content", None)
        if content is None:
            return ""
        if not isinstance(content, str):
            raise DecisionResponseError(
                "malformed_response",
                provider=self.name,
                detail=f"the content is a {type(content).__name__}, not text",
            )
        return content


async def _close_with_loop(client: AsyncOpenAI) -> AsyncGenerator[None, None]:
    """Suspended while its event loop runs; the loop's shutdown closes the client."""
    try:
        yield
    finally:
        await client.close()


def _new_client(settings: Mapping[str, Any]) -> AsyncOpenAI:
    """Build an ``openai`` client from the settings; what the client refuses is a coded error."""
    try:
        from openai import AsyncOpenAI
    except ImportError:
        raise MissingDependencyError(
            "missing_extra", module="OpenAIDecisionProvider", package="openai", extra="openai"
        ) from None
    try:
        return AsyncOpenAI(**settings)
    except Exception as exc:
        raise RoutingConfigurationError(
            "client_not_created",
            field="client",
            error_type=type(exc).__name__,
            detail=short_text(exc) or None,
        ) from exc


def request_text(request: DecisionRequest) -> str:
    """Write the user message: the questions with their options, then the state, as JSON.

    Args:
        request: The decision request.

    Returns:
        The JSON text sent as the user message.

    Examples:
        >>> from contextwise import ChoiceQuestion, DecisionRequest
        >>> question = ChoiceQuestion(instructions="Pick.", criteria={"a": "First.", "b": "Second."})
        >>> print(request_text(DecisionRequest(model="m", questions={"q": question}, state={})))
        {"questions": {"q": {"kind": "choice", "instructions": "Pick.", "options": {"a": "First.", "b": "Second."}}}, "state": {}}
    """  # noqa: E501 - a doctest output is one line
    questions: dict[str, Any] = {}
    for key, question in request.questions.items():
        if isinstance(question, ChoiceQuestion):
            questions[key] = {
                "kind": "choice",
                "instructions": question.instructions,
                "options": question.criteria,
            }
        else:
            questions[key] = {"kind": "text", "instructions": question.instructions}
    return json.dumps(
        {"questions": questions, "state": request.state}, ensure_ascii=False, allow_nan=False
    )


def response_schema(questions: Mapping[str, Question]) -> dict[str, Any]:
    """Build the JSON schema of the reply: one answer object per question, all required.

    The schema follows the rules of strict structured output: every property is required and no
    other property is allowed. A choice answer's ``choice`` is restricted to the labels.

    Args:
        questions: The questions of the request, by key.

    Returns:
        The JSON schema of ``{"answers": {key: answer}}``.

    Examples:
        >>> from contextwise import ChoiceQuestion
        >>> schema = response_schema(
        ...     {"q": ChoiceQuestion(instructions="Pick.", criteria={"a": "A", "b": "B"})}
        ... )
        >>> schema["properties"]["answers"]["properties"]["q"]["properties"]["choice"]["enum"]
        ['a', 'b']
    """
    properties: dict[str, Any] = {}
    for key, question in questions.items():
        if isinstance(question, ChoiceQuestion):
            properties[key] = {
                "type": "object",
                "properties": {
                    "choice": {"type": "string", "enum": list(question.criteria)},
                    "confidence": {
                        "type": "number",
                        "description": "From 0 to 1: how sure you are that the choice is best.",
                    },
                    "rationale": {"type": "string"},
                },
                "required": ["choice", "confidence", "rationale"],
                "additionalProperties": False,
            }
        else:
            properties[key] = {
                "type": "object",
                "properties": {"text": {"type": "string"}, "rationale": {"type": "string"}},
                "required": ["text", "rationale"],
                "additionalProperties": False,
            }
    return {
        "type": "object",
        "properties": {
            "answers": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            }
        },
        "required": ["answers"],
        "additionalProperties": False,
    }


def _check_settings(
    name: object, timeout: object, max_retries: object, temperature: object
) -> None:
    """Check the provider's own settings before any client is built."""
    if not isinstance(name, str) or not name.strip():
        raise RoutingConfigurationError("blank_value", field="name", value=short_repr(name))
    check_timeout(timeout, field="timeout")
    if max_retries is not None:
        if isinstance(max_retries, bool) or not isinstance(max_retries, int):
            raise RoutingConfigurationError(
                "wrong_type", field="max_retries", expected="integer", value=short_repr(max_retries)
            )
        if max_retries < 0:
            raise RoutingConfigurationError(
                "out_of_range", field="max_retries", constraint="≥ 0", value=short_repr(max_retries)
            )
    if temperature is not None:
        number = finite_float(temperature)
        if number is None:
            raise RoutingConfigurationError(
                "wrong_type", field="temperature", expected="number", value=short_repr(temperature)
            )
        if not 0.0 <= number <= 2.0:
            bound = "≤ 2" if number > 2.0 else "≥ 0"
            raise RoutingConfigurationError(
                "out_of_range", field="temperature", constraint=bound, value=short_repr(temperature)
            )


def _check_request_settings(
    base_url: object, api_key: object, instructions: object, strict: object, extra_body: object
) -> None:
    """Check the settings sent with each request, and the client's settings, by type."""
    for field, value in (("base_url", base_url), ("api_key", api_key)):
        if value is not None and not isinstance(value, str):
            raise RoutingConfigurationError(
                "wrong_type", field=field, expected="string", value=short_repr(value)
            )
    if not isinstance(instructions, str):
        raise RoutingConfigurationError(
            "wrong_type", field="instructions", expected="string", value=short_repr(instructions)
        )
    if not isinstance(strict, bool):
        raise RoutingConfigurationError(
            "wrong_type", field="strict", expected="boolean", value=short_repr(strict)
        )
    if extra_body is not None and (
        not isinstance(extra_body, Mapping) or not all(isinstance(key, str) for key in extra_body)
    ):
        raise RoutingConfigurationError(
            "wrong_type", field="extra_body", expected="object", value=short_repr(extra_body)
        )


def _too_deep() -> DecisionResponseError:
    """A reply nested deeper than contextwise reads, on every Python version alike."""
    return DecisionResponseError("too_deep", field="DecisionResponse", limit=MAX_DEPTH)
