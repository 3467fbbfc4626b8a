"""Model routing: a separate decision model picks the model that runs each harness step.

The implementation lives in the modules of this package; this package re-exports its public API.
"""

from contextwise.routing._model import (
    APIS,
    DEFAULT_MIN_CONFIDENCE,
    DEFAULT_REASONING_TOKENS,
    EFFORT_WORDS,
    ON_ERROR_CHOICES,
    Api,
    ModelRouting,
    ModelSpec,
    OnError,
    RoutingContext,
    StateFunction,
)
from contextwise.routing._options import provider_options
from contextwise.routing._outcome import (
    LOGGER_NAME,
    DecisionFailedEvent,
    DecisionFinishedEvent,
    DecisionStartedEvent,
    EventHandler,
    RouteEvent,
    RouteOutcome,
    Router,
    RouteReason,
    RoutingEvent,
    RuleFailedEvent,
)
from contextwise.routing._router import (
    REASONING_BLOCK_TYPES,
    REASONING_MESSAGE_KEYS,
    ModelRouter,
    default_state,
)
from contextwise.routing._rules import RULES_PROVIDER, RoutingRule, RulePredicate, RuleRouter

__all__ = [
    "APIS",
    "DEFAULT_MIN_CONFIDENCE",
    "DEFAULT_REASONING_TOKENS",
    "EFFORT_WORDS",
    "LOGGER_NAME",
    "ON_ERROR_CHOICES",
    "REASONING_BLOCK_TYPES",
    "REASONING_MESSAGE_KEYS",
    "RULES_PROVIDER",
    "Api",
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
    "Router",
    "RoutingContext",
    "RoutingEvent",
    "RoutingRule",
    "RuleFailedEvent",
    "RulePredicate",
    "RuleRouter",
    "StateFunction",
    "default_state",
    "provider_options",
]
