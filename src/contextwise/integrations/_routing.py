"""What the three integrations share for routing: a router, the framework's own model for each of
its labels, and the previous call's route (what a sticky router keeps).

The route of each model call is asked with the messages the model will receive (after the
policy), and the chosen label's framework model runs the call with the route's effort, sent
through the framework's own settings. The previous call's label and effort travel with the
conversation itself where the framework keeps metadata on a response (LangChain's
``response_metadata``, pydantic-ai's ``metadata``), under :data:`ROUTE_KEY`: routing stays
stateless, and survives a restart with the history.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, Generic, TypeVar

from contextwise._translation import short_text
from contextwise.effort import Effort, is_effort
from contextwise.errors import InvalidTypeError, RoutingConfigurationError
from contextwise.routing import ModelSpec, RouteOutcome, Router, RoutingContext, provider_options
from contextwise.routing._api import check_router

ModelT = TypeVar("ModelT")

ROUTE_KEY: Final = "contextwise_route"
"""The metadata key of a response that records the route that produced it."""


def route_record(outcome: RouteOutcome) -> dict[str, Any]:
    """What a response records of its route: the label, the model, the effort and the reason."""
    return {
        "choice": outcome.choice,
        "model": outcome.model.name,
        "effort": None if outcome.effort is None else outcome.effort.value,
        "reason": outcome.reason,
    }


class StepRouting(Generic[ModelT]):
    """A router and the framework's model of each of its labels."""

    __slots__ = ("_warned", "models", "router")

    def __init__(self, router: Router, models: Mapping[str, ModelT]) -> None:
        self.router = router
        self.models = dict(models)
        self._warned: set[tuple[str, str]] = set()

    def unsent(self, outcome: RouteOutcome, why: str) -> RouteOutcome:
        """The outcome of a route whose effort the framework does not send: without its effort,
        so that the response records what was sent. The first time for a label and a reason, a
        ``UserWarning`` names why (the effort is an operator's setting; the warning is in
        English, like the routing log)."""
        if outcome.effort is None:
            return outcome
        if (outcome.choice, why) not in self._warned:
            self._warned.add((outcome.choice, why))
            warnings.warn(
                f"contextwise: the route to {outcome.choice!r} asks for the effort "
                f"{outcome.effort.value!r}, which is not sent: {why}. The route records no effort.",
                UserWarning,
                stacklevel=2,
            )
        return replace(outcome, effort=None)

    def context(
        self,
        step: int,
        messages: Sequence[Any],
        previous: object,
        *,
        system: str = "",
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> RoutingContext:
        """The routing context of one call; ``previous`` is the last response's route record."""
        candidates = self.router.models
        choice = previous.get("choice") if isinstance(previous, Mapping) else None
        if not isinstance(choice, str) or choice not in candidates:
            return RoutingContext(
                step=step,
                model=candidates[self.router.default].name,
                system=system,
                messages=messages,
                tools=tools,
            )
        effort = previous.get("effort") if isinstance(previous, Mapping) else None
        return RoutingContext(
            step=step,
            model=candidates[choice].name,
            system=system,
            messages=messages,
            tools=tools,
            choice=choice,
            effort=effort if is_effort(effort) else None,
        )

    def route(self, context: RoutingContext) -> tuple[RouteOutcome, ModelT]:
        """Route one call from sync code: the outcome and the framework's model to call."""
        outcome = self.router.route(context)
        return outcome, self.models[outcome.choice]

    async def aroute(self, context: RoutingContext) -> tuple[RouteOutcome, ModelT]:
        """Route one call: the outcome and the framework's model to call."""
        outcome = await self.router.aroute(context)
        return outcome, self.models[outcome.choice]


def step_routing(
    router: object, models: object, integration: str, model_type: type | None = None
) -> StepRouting[Any] | None:
    """Check ``router`` and ``models`` together: both or neither, one model per router label,
    each an instance of the framework's ``model_type`` when it is given."""
    if router is None and models is None:
        return None
    if router is None or models is None:
        raise RoutingConfigurationError(
            "router_needs_models",
            field="models" if models is None else "router",
            integration=integration,
        )
    check_router(router)
    if not isinstance(models, Mapping):
        raise RoutingConfigurationError(
            "framework_models_not_mapping",
            field="models",
            integration=integration,
            type_name=type(models).__name__,
        )
    labels = list(router.models)  # type: ignore[attr-defined]
    missing = [label for label in labels if label not in models]
    unexpected = [short_text(key) for key in models if key not in labels]
    if missing or unexpected:
        raise RoutingConfigurationError(
            "framework_models_mismatch",
            field="models",
            integration=integration,
            missing=missing,
            unexpected=unexpected,
        )
    if model_type is not None:
        for label, model in models.items():
            if not isinstance(model, model_type):
                raise InvalidTypeError(
                    "not_an_instance",
                    name=f"models[{short_text(label)!r}]",
                    expected=model_type.__name__,
                    type_name=type(model).__name__,
                )
    return StepRouting(router, models)  # type: ignore[arg-type]


def effort_options(spec: ModelSpec, effort: Effort | None) -> dict[str, Any]:
    """The request options of a route for a chat model that takes the provider's own keyword
    arguments (LangChain's): :func:`~contextwise.provider_options` without the model name, or
    nothing when the spec declares no API or there is no effort."""
    if effort is None or spec.api is None:
        return {}
    if spec.api == "gemini":
        return _gemini_options(spec, effort)
    options = provider_options(spec, effort)
    options.pop("model", None)
    return options


def _gemini_options(spec: ModelSpec, effort: Effort) -> dict[str, Any]:
    """The keyword arguments that LangChain's ``ChatGoogleGenerativeAI`` takes for an effort:
    ``thinking_level`` (the provider's word, when ``effort_names`` names the level) or
    ``thinking_budget`` (0 for ``none``), and ``max_output_tokens``; never google-genai's own
    ``config=``, which is the name of the runnable's configuration."""
    config = provider_options(spec, effort).get("config", {})
    options: dict[str, Any] = {}
    if "max_output_tokens" in config:
        options["max_output_tokens"] = config["max_output_tokens"]
    thinking = config.get("thinking_config", {})
    if "thinking_level" in thinking:
        options["thinking_level"] = str(thinking["thinking_level"]).lower()
    if "thinking_budget" in thinking:
        options["thinking_budget"] = thinking["thinking_budget"]
    return options


def effort_word(spec: ModelSpec, effort: Effort) -> str:
    """The provider's word for an effort level: the spec's ``effort_names`` entry, or its own."""
    return (spec.effort_names or {}).get(effort, effort.value)
