"""Context policies: fit named fragments of a context into a size, and report every change.

The implementation lives in the modules of this package; this package re-exports its public API.
"""

from contextwise.policy._engine import AppMutation, Compressor
from contextwise.policy._fragments import (
    ContextResult,
    Fragment,
    FragmentField,
    MessagesFragment,
    RemovedItem,
    TextFragment,
)
from contextwise.policy._model import (
    CLEARED_PLACEHOLDER,
    CLIP_MARKER,
    DEFAULT_TRIM_MARKER,
    AppStep,
    AutoSelection,
    ClearStep,
    ClipStep,
    CompressStep,
    ContextPolicy,
    ContextSelection,
    ContextStep,
    FixedSelection,
    Grouping,
    ModelSelection,
    PolicyMode,
    SelectionMode,
    SequenceSelection,
    StepKind,
    TrimStep,
)
from contextwise.policy._report import (
    ChangeError,
    ChangeStatus,
    ContextChange,
    ContextDecision,
    ContextProcessingReport,
    ConversationReport,
    ConversationStatus,
    TokenReport,
)
from contextwise.policy._runner import (
    PolicyRunner,
    RunnerOptions,
    UnknownItems,
    aprocess_context,
    process_context,
)
from contextwise.policy._schema import context_policy_json_schema
from contextwise.policy._validation import validate_context_policy

__all__ = [
    "CLEARED_PLACEHOLDER",
    "CLIP_MARKER",
    "DEFAULT_TRIM_MARKER",
    "AppMutation",
    "AppStep",
    "AutoSelection",
    "ChangeError",
    "ChangeStatus",
    "ClearStep",
    "ClipStep",
    "CompressStep",
    "Compressor",
    "ContextChange",
    "ContextDecision",
    "ContextPolicy",
    "ContextProcessingReport",
    "ContextResult",
    "ContextSelection",
    "ContextStep",
    "ConversationReport",
    "ConversationStatus",
    "FixedSelection",
    "Fragment",
    "FragmentField",
    "Grouping",
    "MessagesFragment",
    "ModelSelection",
    "PolicyMode",
    "PolicyRunner",
    "RemovedItem",
    "RunnerOptions",
    "SelectionMode",
    "SequenceSelection",
    "StepKind",
    "TextFragment",
    "TokenReport",
    "TrimStep",
    "UnknownItems",
    "aprocess_context",
    "context_policy_json_schema",
    "process_context",
    "validate_context_policy",
]
