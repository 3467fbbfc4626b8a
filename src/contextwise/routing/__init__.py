"""Model routing: a separate decision model picks the model that runs each harness step.

The implementation lives in private-by-convention modules; this package re-exports its public API.
"""

from contextwise.routing.model import (
    DEFAULT_MIN_CONFIDENCE,
    ON_ERROR_CHOICES,
    ModelRouting,
    ModelSpec,
    OnError,
    RoutingContext,
    StateFunction,
)
from contextwise.routing.router import (
    LOGGER_NAME,
    REASONING_BLOCK_TYPES,
    REASONING_MESSAGE_KEYS,
    DecisionFailedEvent,
    DecisionFinishedEvent,
    DecisionStartedEvent,
    EventHandler,
    ModelRouter,
    RouteEvent,
    RouteOutcome,
    RouteReason,
    RoutingEvent,
    default_state,
)

__all__ = [
    "DEFAULT_MIN_CONFIDENCE",
    "LOGGER_NAME",
    "ON_ERROR_CHOICES",
    "REASONING_BLOCK_TYPES",
    "REASONING_MESSAGE_KEYS",
    "DecisionFailedEvent",
    "DecisionFinishedEvent",
    "DecisionStartedEvent",
    "EventHandler",
    "ModelRouter",
    "ModelRouting",
    "ModelSpec",
    "OnError",
    "RouteEvent",
    "RouteOutcome",
    "RouteReason",
    "RoutingContext",
    "RoutingEvent",
    "StateFunction",
    "default_state",
]
