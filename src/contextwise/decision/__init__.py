"""Decisions: questions for a separate decision model, its answers, and the one decision core.

A :class:`Decision` declares named questions. A :class:`ChoiceQuestion` offers 2 to 255 labelled
options; a :class:`DecisionProvider` answers it with a :class:`ChoiceAnswer` that names one option
and a confidence. Model routing (:class:`~contextwise.routing.ModelRouter`) and the ``model``
selection mode of a context policy both ask their questions through :func:`decide_choice` (or
:func:`adecide_choice`), so a provider behaves the same way everywhere: the same validation, the
same errors, the same timeout and cancellation rules.

The implementation lives in the modules of this package; this package re-exports its public API.
"""

from contextwise.decision._core import ChoiceOutcome, adecide_choice, decide_choice
from contextwise.decision._faults import CAUSE_CHAIN_DEPTH, is_provider_unavailable
from contextwise.decision._openai import OpenAIDecisionProvider
from contextwise.decision._schema import (
    MAX_CHOICES,
    MIN_CHOICES,
    PROBABILITY_TOLERANCE,
    Answer,
    ChoiceAnswer,
    ChoiceQuestion,
    ChoiceReason,
    Decision,
    DecisionProvider,
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    Question,
    TextAnswer,
    TextQuestion,
)
from contextwise.decision._state import STATE_MAX_DEPTH, check_json_state

__all__ = [
    "CAUSE_CHAIN_DEPTH",
    "MAX_CHOICES",
    "MIN_CHOICES",
    "PROBABILITY_TOLERANCE",
    "STATE_MAX_DEPTH",
    "Answer",
    "ChoiceAnswer",
    "ChoiceOutcome",
    "ChoiceQuestion",
    "ChoiceReason",
    "Decision",
    "DecisionProvider",
    "DecisionRequest",
    "DecisionResponse",
    "DecisionResult",
    "OpenAIDecisionProvider",
    "Question",
    "TextAnswer",
    "TextQuestion",
    "adecide_choice",
    "check_json_state",
    "decide_choice",
    "is_provider_unavailable",
]
