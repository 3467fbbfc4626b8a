"""The message templates of the coded errors: each error class's codes and their English texts.

The classes live in :mod:`contextwise.errors`; each takes its ``messages`` from here, so that the
texts translators work on stand apart from the code that raises them. Every text is a gettext
message (``N_``, ``NP_``) of the ``contextwise`` domain.
"""

from __future__ import annotations

from collections.abc import Mapping

from contextwise._translation import N_, NP_, Message

DETAIL = N_("Detail: {detail}")
"""The line that carries an error's ``detail``."""

MORE_PROBLEMS = NP_(
    "There is {count} more problem in the same input.",
    "There are {count} more problems in the same input.",
    "count",
)
"""The line that counts the problems an error holds beyond the first."""


INVALID_VALUE_ERROR: Mapping[str, Message] = {
    "negative_size": N_("{name} must be zero or more, got {value}."),
    "non_finite_size": N_("{name} must be a finite number, got {value}."),
    "invalid_priority": N_("{name} must be a finite number of zero or more, got {value}."),
    "duplicate_segment_id": N_(
        "Segment id '{segment_id}' appears more than once: at index {first_index} and at "
        "index {index}."
    ),
    "missing_segment_field": N_(
        "The segment at index {index} has no '{field}'; every segment needs an id and a number "
        "of tokens."
    ),
    "blank_session_id": N_("A session id must be a non-blank string, got {value}."),
    "invalid_session_id": N_(
        "A session id must be a string of at most {limit} characters without NUL characters "
        "or lone surrogates, got {value}."
    ),
    "invalid_idempotency_key": N_(
        "An idempotency key must be a non-blank string of at most {limit} characters without "
        "NUL characters or lone surrogates, got {value}."
    ),
    "invalid_conversation_key": N_(
        "A conversation key must be a non-blank string of at most {limit} characters without "
        "NUL characters or lone surrogates, got {value}."
    ),
    "conversation_value_not_json": N_(
        "The value kept for conversation '{key}' cannot be stored, because JSON cannot encode "
        "it: {reason}."
    ),
    "unstorable_text": N_(
        "{field} holds a NUL character or a lone surrogate, which a session store cannot "
        "keep: {value}."
    ),
    "invalid_state_name": N_(
        "A state's name must be a non-blank string of at most {limit} characters without NUL "
        "characters or lone surrogates, got {value}."
    ),
    "store_value_not_json": N_(
        "The value of {field} cannot be stored, because JSON cannot encode it: {reason}."
    ),
    "idempotency_key_reused": N_(
        "The idempotency key '{key}' of session '{session_id}' was already used to add other "
        "messages; a retry must send the same messages, and another add needs another key."
    ),
    "message_not_json": N_(
        "The message at index {index} cannot be stored, because JSON cannot encode it: "
        "{reason}."
    ),
    "message_value_not_json": N_(
        "Message {index} holds a value that JSON cannot encode: {reason}."
    ),
    "message_too_deep": N_(
        "The message at index {index} is nested more than {limit} levels deep."
    ),
    "unknown_change": N_(
        "The session '{session_id}' has no change {change_id} with archived messages to "
        "restore."
    ),
    "unknown_segment_field": N_(
        "The segment at index {index} has an unknown key '{field}'; a segment accepts id, "
        "tokens, priority and required."
    ),
    "unknown_strategy": N_("Unknown planning strategy '{strategy}'; use one of {supported}."),
    "invalid_effort": N_("'{value}' is not an effort level; use one of {supported}."),
    "empty_supported_efforts": N_("The list of supported effort levels is empty."),
    "unknown_grouping": N_("Unknown grouping '{grouping}'; use one of {supported}."),
    "invalid_counter_result": N_(
        "Token counter '{counter_id}' returned {value} instead of a whole number of zero or "
        "more."
    ),
    "invalid_fragment": N_(
        "The fragment '{fragment_id}' must have exactly one of text and messages."
    ),
    "blank_fragment_id": N_("A fragment id must be a non-blank string, got {value}."),
    "invalid_fragment_role": N_(
        "The role of fragment '{fragment_id}' must be one of {supported}, and only a text "
        "fragment takes one; got {value}."
    ),
    "fragment_not_found": N_(
        "There is no fragment '{fragment_id}'; the fragments are {fragment_ids}."
    ),
    "missing_message_role": N_(
        "Message {index} has no role; every message needs one, such as 'user' or 'assistant', "
        "or a Responses item type."
    ),
    "unknown_message_role": N_(
        "Message {index} has the role {role}, which no supported message shape knows."
    ),
    "unknown_message_type": N_(
        "Message {index} has the type {type}, which is neither a role-based message nor a "
        "Responses item type that contextwise knows."
    ),
    "invalid_price": N_("A price must be a finite number of zero or more, got {value}."),
    "unknown_model_price": N_(
        "genai-prices has no price for the model '{model}'; give its prices with "
        "ModelSpec(prices=...) or cost(..., prices=...)."
    ),
    "invalid_calibration_state": N_(
        "The calibration state cannot be used: {reason}."
    ),
    "inconsistent_usage": N_(
        "The usage is inconsistent: {part} is {part_value}, more than {whole}, which is "
        "{whole_value}."
    ),
    "invalid_part_estimate": N_(
        "The part estimate's {field} must be a finite number of zero or more, got {value}."
    ),
    "unknown_recall_ref": N_(
        "Nothing named '{ref}' can be recalled: no original tool result with that call id "
        "is in the history or the archive."
    ),
    "invalid_recall_limit": N_("limit must be a whole number of 1 or more, got {value}."),
    # The field-validation codes: every error raised for a malformed policy file, model spec,
    # question or decision response, whatever its class, uses one of these.
    "unknown_key": N_("{field} is not a known key; the known keys here are {known}."),
    "duplicate_key": N_(
        "{field} is given twice, as '{name}' and as '{alias}'; keep one of the two spellings."
    ),
    "missing_key": N_("{field} is required but missing."),
    "wrong_type": N_("{field} must be of type {expected}, got {value}."),
    "out_of_range": N_("{field} must be {constraint}, got {value}."),
    "not_finite": N_("{field} must be a finite number, got {value}."),
    "blank_value": N_("{field} must be a non-blank string, got {value}."),
    "invalid_ttl": N_(
        "ttl must be a finite number of seconds greater than 0, or a timedelta, got {value}."
    ),
    "too_few_items": NP_(
        "{field} must hold at least {minimum} item, got {count}.",
        "{field} must hold at least {minimum} items, got {count}.",
        "minimum",
    ),
    "too_many_items": NP_(
        "{field} must hold at most {maximum} item, got {count}.",
        "{field} must hold at most {maximum} items, got {count}.",
        "maximum",
    ),
    "invalid_choice": N_("{field} must be one of {expected}, got {value}."),
    "invalid_json": N_(
        "The text is not valid JSON: the error is at line {line}, column {column}."
    ),
    "invalid_value": N_("{field} has an invalid value: {value}."),
    "too_deep": N_("{field} is nested more than {limit} levels deep."),
}
"""The codes of :class:`~contextwise.errors.InvalidValueError` and their texts."""


INVALID_TYPE_ERROR: Mapping[str, Message] = {
    "not_a_number": N_("{name} must be a number, got a value of type {type_name}."),
    "bool_not_a_number": N_("{name} must be a number, not a boolean."),
    "not_a_string": N_("{name} must be a string, got a value of type {type_name}."),
    "not_a_whole_number": N_("{name} must be a whole number, got {value}."),
    "not_callable": N_("{name} must be a function, got a value of type {type_name}."),
    "invalid_conversation_store": N_(
        "store must be a MemoryStore, SQLiteStore or SQLAlchemyStore (a store that keeps "
        "conversations), got a value of type {type_name}."
    ),
    "not_a_bool": N_("{name} must be True or False, got a value of type {type_name}."),
    "invalid_pinned_part": N_(
        "A pinned part must be a text, a message or a tool definition (a mapping), got a "
        "value of type {type_name}."
    ),
    "not_a_collection": N_(
        "{name} must be a list or another collection, got a value of type {type_name}."
    ),
    "invalid_segment": N_(
        "The segment at index {index} must be a BudgetSegment or a mapping, got a value of "
        "type {type_name}."
    ),
    "invalid_tokenizer": N_(
        "{type_name} cannot count tokens: pass an object with an encode method or a callable "
        "that returns a number of tokens."
    ),
    "invalid_encode_result": N_(
        "The tokenizer of token counter '{counter_id}' returned a value of type {type_name}, "
        "which is neither a list of token ids nor an encoding with ids."
    ),
    "invalid_effort_type": N_(
        "{name} must be an effort level such as 'medium', got a value of type {type_name}."
    ),
    "not_a_message_list": N_(
        "{name} must be a list of chat messages, got a value of type {type_name}."
    ),
    "message_not_a_mapping": N_(
        "Message {index} must be a mapping, a LangChain message or a pydantic-ai message, got "
        "a value of type {type_name}."
    ),
    "invalid_part_estimate_type": N_(
        "part_estimate must be a PartEstimate, got a value of type {type_name}."
    ),
    "invalid_message_field": N_(
        "The field '{field}' of message {index} has a value of type {type_name}, which this "
        "field does not accept."
    ),
    "not_a_policy": N_(
        "{name} must be a ContextPolicy or a mapping, got a value of type {type_name}."
    ),
    "not_a_mapping": N_("{name} must be a mapping, got a value of type {type_name}."),
    "not_a_fragment_list": N_(
        "fragments must be a list of fragments, got a value of type {type_name}."
    ),
    "invalid_fragment_type": N_(
        "Fragment {index} must be a Fragment or a mapping, got a value of type {type_name}."
    ),
    "messages_not_fragments": N_(
        "fragments must be a list of fragments, but entry {index} is a chat message; put the "
        "messages in a fragment: MessagesFragment(\"history\", messages=[...])."
    ),
    "fragment_messages_not_a_list": N_(
        "The messages of fragment '{fragment_id}' must be a list, got a value of type "
        "{type_name}."
    ),
    "invalid_budget": N_("budget must be a ContextBudget, got a value of type {type_name}."),
    "not_a_history": N_(
        "The history file '{path}' must hold a list of fragments, an object with a "
        "'fragments' list, or a list of chat messages, got a value of type {type_name}."
    ),
    "unsupported_message_object": N_(
        "The message at index {index} is a {type_name}; a session stores dicts that JSON can "
        "encode, LangChain messages and pydantic-ai messages."
    ),
    "invalid_request": N_(
        "A request must be a mapping of the provider call's arguments, a list of messages or "
        "a text, got a value of type {type_name}."
    ),
    "not_a_usage": N_("usage must be a Usage, got a value of type {type_name}."),
    "unknown_usage_shape": N_(
        "A value of type {type_name} holds no usage that contextwise can read: pass a "
        "response or its usage from OpenAI, Anthropic, Gemini, LangChain, pydantic-ai or the "
        "OpenAI Agents SDK, or a dict of the same shape."
    ),
    "invalid_session_store": N_(
        "store must be a session store such as SQLiteStore, got a value of type {type_name}."
    ),
    "incomplete_store": NP_(
        "The store of type {type_name} has no method {names}: it must implement {protocols}.",
        "The store of type {type_name} has no methods {names}: it must implement {protocols}.",
        "count",
    ),
    "not_an_instance": N_("{name} must be a {expected}, got a value of type {type_name}."),
}
"""The codes of :class:`~contextwise.errors.InvalidTypeError` and their texts."""


UNSUPPORTED_LOCALE_ERROR: Mapping[str, Message] = {
    "unsupported_locale": N_(
        "Unsupported locale {locale_name}; supported locales are {supported}."
    ),
}
"""The codes of :class:`~contextwise.errors.UnsupportedLocaleError` and their texts."""


CONTEXT_OVERFLOW_ERROR: Mapping[str, Message] = {
    "context_overflow": N_(
        "The context does not fit: {tokens} tokens for a context budget of "
        "{context_budget} tokens."
    ),
    "reserves_exceed_window": N_(
        "The reserves ({reserved} tokens: output {output}, reasoning {reasoning}, safety "
        "{safety}) exceed the context window of {window} tokens."
    ),
    "required_segments_overflow": NP_(
        "The required segment {segments} needs {required} tokens, {shortfall} more than the "
        "context budget of {context_budget} tokens.",
        "The {count} required segments {segments} need {required} tokens, {shortfall} more "
        "than the context budget of {context_budget} tokens.",
        "count",
    ),
    "policy_validation_overflow": N_(
        "The context has {chars} characters, more than the {limit_name} of {limit} set by "
        "the policy; validate mode changes nothing."
    ),
    "policy_validation_token_overflow": N_(
        "The context has {tokens} tokens, more than the {limit_name} of {limit} tokens; "
        "validate mode changes nothing."
    ),
}
"""The codes of :class:`~contextwise.errors.ContextOverflowError` and their texts."""


ROUTING_CONFIGURATION_ERROR: Mapping[str, Message] = {
    "invalid_provider": N_(
        "{field} must be a decision provider: an object with a string 'name' and a 'request' "
        "method, got a value of type {type_name}."
    ),
    "blank_router_model": N_(
        "{field} must name the router's model with a non-blank string, got {value}."
    ),
    "invalid_decision": N_("{field} must be a Decision, got a value of type {type_name}."),
    "unknown_question": N_(
        "{field} '{question}' is not a question of the decision; its questions are {known}."
    ),
    "question_not_choice": N_(
        "{field} '{question}' is a {kind} question; model routing needs a choice question."
    ),
    "models_do_not_match_criteria": N_(
        "{field} must hold exactly one model per choice of question '{question}': missing "
        "{missing}, unexpected {unexpected}."
    ),
    "router_needs_models": N_(
        "The {integration} integration routes with both router and models; {field} is "
        "missing."
    ),
    "framework_models_not_mapping": N_(
        "{field} must map each of the router's labels to a {integration} model, got a value "
        "of type {type_name}."
    ),
    "framework_models_mismatch": N_(
        "{field} must hold exactly one {integration} model per label of the router: missing "
        "{missing}, unexpected {unexpected}."
    ),
    "models_not_mapping": N_(
        "{field} must map each choice label to a ModelSpec or a model name, got a value of "
        "type {type_name}."
    ),
    "invalid_model_spec": N_(
        "{field} entry '{label}' must be a ModelSpec or a non-blank model name, got {value}."
    ),
    "blank_model_name": N_("{field} must be a non-blank model name, got {value}."),
    "unknown_api": N_("{field} must be one of the APIs {supported}, got {value}."),
    "unknown_effort_name": N_(
        "{field} sends '{value}' for the effort level '{level}', a word that no provider "
        "accepts; the accepted words are {accepted}."
    ),
    "effort_name_not_in_api": N_(
        "{field} sends '{value}' for the effort level '{level}', but the {api} API accepts "
        "only {accepted}."
    ),
    "reasoning_tokens_over_output": N_(
        "{field} gives the effort level '{level}' a thinking budget of {tokens} tokens; it "
        "must stay below the model's output limit of {limit} tokens, which also holds the "
        "answer."
    ),
    "reasoning_tokens_over_window": N_(
        "{field} gives the effort level '{level}' a thinking budget of {tokens} tokens, more "
        "than the model's context window of {limit} tokens."
    ),
    "missing_api": N_(
        "Model '{model}' declares no {field}, so its provider's options are unknown; set it "
        "to one of {supported}."
    ),
    "missing_output_limit": N_(
        "Model '{model}' declares no {field}, and the {api} API requires an output limit."
    ),
    "thinking_budget_below_minimum": N_(
        "{field} gives the effort level '{level}' a thinking budget of {tokens} tokens, but "
        "the {api} API requires at least {minimum} tokens; give it 0 to send no thinking, or "
        "at least {minimum}."
    ),
    "derived_thinking_budget_below_minimum": N_(
        "Model '{model}' has no {field} entry for the effort level '{level}', and its "
        "default thinking budget, lowered to {tokens} tokens to fit the output limit of "
        "{limit} tokens, is below the {api} API's minimum of {minimum}; give the level an "
        "entry of at least {minimum} tokens, below {limit}."
    ),
    "output_limit_below_thinking_minimum": N_(
        "Model '{model}' has an output limit of {limit} tokens, which leaves no room for the "
        "{api} API's minimum thinking budget of {minimum} tokens plus the answer at the "
        "effort level '{level}'; raise max_output_tokens above {minimum}, or send the level "
        "'none'."
    ),
    "effort_question_is_routing_question": N_(
        "{field} names the routing question '{question}'; the effort needs a question of "
        "its own."
    ),
    "effort_question_labels": N_(
        "{field} '{question}' must offer effort levels as its choices, but {labels} are not "
        "among {supported}."
    ),
    "router_or_model": N_(
        "Preparing a step needs exactly one of {field} and model: a router that picks among "
        "models, or the one model that runs the step."
    ),
    "invalid_router": N_(
        "{field} must be a router (a ModelRouter, a RuleRouter, or an object with models, "
        "default, route and aroute), got a value of type {type_name}."
    ),
    "blank_rule_id": N_("A routing rule's {field} must be a non-blank string, got {value}."),
    "rule_not_callable": N_(
        "The {field} condition of rule '{rule}' must be a function of the routing context, "
        "got a value of type {type_name}."
    ),
    "rule_without_condition": N_(
        "Rule '{rule}' sets no condition; give it min_tokens, min_step, has_tools or when, "
        "and let the default model take the steps that no rule matches."
    ),
    "missing_default": N_(
        "A rule router needs a {field} model for the steps that no rule matches; the "
        "candidate models are {known}."
    ),
    "empty_models": N_("{field} must hold at least one candidate model."),
    "invalid_rule": N_(
        "{field} entry {index} must be a RoutingRule, got a value of type {type_name}."
    ),
    "duplicate_rule_id": N_("{field} holds more than one rule with the id '{rule}'."),
    "unknown_rule_model": N_(
        "Rule '{rule}' names the model '{model}', which is not one of the candidate models "
        "{known}."
    ),
    "invalid_routing": N_(
        "{field} must be a ModelRouting declaration, got a value of type {type_name}."
    ),
    "on_event_not_callable": N_(
        "{field} must be a function that receives routing events, got a value of type "
        "{type_name}."
    ),
    "sticky_not_bool": N_(
        "{field} must be True or False, got a value of type {type_name}."
    ),
    "missing_window": N_(
        "Model '{model}' declares no context window, and no default {field} was given."
    ),
    "unknown_active_model": N_(
        "The {field} model '{model}' is not one of the candidate models {known}."
    ),
    "client_not_created": N_(
        "The {field} could not be created from these settings: the package raised "
        "{error_type}."
    ),
    "client_conflict": N_(
        "Pass either a configured client or the {field} setting, not both: the client already "
        "holds its settings."
    ),
    "unknown_fallback": N_("{field} '{fallback}' is not one of the candidate models {known}."),
    "invalid_min_confidence": N_("{field} must be a finite number from 0 to 1, got {value}."),
    "invalid_on_error": N_("{field} must be one of {supported}, got {value}."),
    "state_not_callable": N_(
        "{field} must be a function of the routing context, got a value of type {type_name}."
    ),
    "fallback_on_not_callable": N_(
        "{field} must be a function that takes an error and returns True when the fallback "
        "should answer, got a value of type {type_name}."
    ),
    "fallback_on_failed": N_(
        "The {field} test raised {error_type} instead of answering True or False."
    ),
    "invalid_timeout": N_(
        "{field} must be a finite number of seconds greater than 0, got {value}."
    ),
    "too_few_choices": NP_(
        "A choice question needs at least {minimum} options, got {count} option.",
        "A choice question needs at least {minimum} options, got {count} options.",
        "count",
    ),
    "too_many_choices": N_(
        "A choice question accepts at most {maximum} options, got {count}."
    ),
    "blank_choice_label": N_("A choice label must be a non-blank string, got {value}."),
    "blank_question_key": N_("A question key must be a non-blank string, got {value}."),
    "empty_decision": N_("A decision must declare at least one question."),
    "state_not_json": N_(
        "The {field} must be lossless JSON, but {path} holds a value of type {type_name}; use "
        "dicts with string keys, lists, strings, finite numbers, booleans and None."
    ),
    "state_non_finite": N_(
        "The {field} must be lossless JSON, but {path} holds {value}, which JSON cannot "
        "represent."
    ),
    "state_negative_zero": N_(
        "The {field} must be lossless JSON, but {path} holds -0.0, which JSON readers turn "
        "into 0."
    ),
    "state_non_string_key": N_(
        "The {field} must be lossless JSON, but {path} has the key {value} of type "
        "{type_name}; JSON object keys are strings."
    ),
    "state_huge_int": N_(
        "The {field} must be lossless JSON, but {path} holds an integer of more than {limit} "
        "digits, which JSON text cannot carry."
    ),
    "state_cycle": N_(
        "The {field} must be lossless JSON, but {path} refers back to one of its own "
        "containers."
    ),
    "state_too_deep": N_(
        "The {field} must be lossless JSON, but {path} is nested more than {limit} levels deep."
    ),
}
"""The codes of :class:`~contextwise.errors.RoutingConfigurationError` and their texts."""


DECISION_RESPONSE_ERROR: Mapping[str, Message] = {
    "invalid_response": N_(
        "Decision provider '{provider}' returned a value of type {type_name} instead of a "
        "DecisionResponse."
    ),
    "malformed_response": N_("Decision provider '{provider}' returned a malformed response."),
    "missing_answer": N_(
        "Decision provider '{provider}' gave no answer to question '{question}'."
    ),
    "not_a_choice_answer": N_(
        "The answer to question '{question}' is not a choice answer: it has no choice."
    ),
    "unknown_choice": N_(
        "The answer to question '{question}' chose '{choice}', which is not one of {allowed}."
    ),
    "confidence_out_of_range": N_(
        "The {field} of a choice answer must be a number from 0 to 1, got {value}."
    ),
    "probability_out_of_range": N_(
        "The probability of '{label}' must be a number from 0 to 1, got {value}."
    ),
    "unknown_probability_label": N_(
        "The probabilities name '{label}', which is not one of the choices {allowed}."
    ),
    "probabilities_not_normalized": N_(
        "The probabilities of a choice answer must sum to 1, got {total}."
    ),
    "probabilities_not_peaked": N_(
        "The chosen option '{choice}' must be the most probable one, but it has probability "
        "{probability} and '{top}' has {top_probability}."
    ),
}
"""The codes of :class:`~contextwise.errors.DecisionResponseError` and their texts."""


ROUTING_RULE_ERROR: Mapping[str, Message] = {
    "rule_failed": N_("The routing rule '{rule}' failed at step {step} with {error_type}."),
}
"""The codes of :class:`~contextwise.errors.RoutingRuleError` and their texts."""


DECISION_TIMEOUT_ERROR: Mapping[str, Message] = {
    "decision_timeout": N_("The decision provider did not answer in time."),
    "decision_timeout_after": N_(
        "The decision provider did not answer within {timeout} seconds."
    ),
}
"""The codes of :class:`~contextwise.errors.DecisionTimeoutError` and their texts."""


MISSING_DEPENDENCY_ERROR: Mapping[str, Message] = {
    "missing_extra": N_(
        "{module} needs {package}, which is not installed; install it with: pip install "
        "'contextwise[{extra}]'"
    ),
}
"""The codes of :class:`~contextwise.errors.MissingDependencyError` and their texts."""


PROVIDER_UNAVAILABLE_ERROR: Mapping[str, Message] = {
    "provider_unavailable": N_("The decision provider is unavailable."),
}
"""The codes of :class:`~contextwise.errors.ProviderUnavailableError` and their texts."""


QUOTA_EXCEEDED_ERROR: Mapping[str, Message] = {
    "quota_exceeded": N_("The decision provider's quota is exhausted."),
}
"""The codes of :class:`~contextwise.errors.QuotaExceededError` and their texts."""


POLICY_CONFIGURATION_ERROR: Mapping[str, Message] = {
    "duplicate_step_id": N_("The step id '{step_id}' appears more than once in the policy."),
    "reduce_never_acts": N_(
        "A policy in reduce mode with no trigger, no target and no budget never acts: give "
        "trigger_chars, target_input_chars, trigger_tokens or target_input_tokens, or a "
        "budget."
    ),
    "trigger_not_above_target": N_(
        "{trigger_name} ({trigger}) must be greater than {target_name} ({target})."
    ),
    "unknown_fixed_step": N_(
        "The fixed selection names the step '{step_id}', which the policy does not define; "
        "its steps are {step_ids}."
    ),
    "duplicate_fixed_step": N_(
        "The fixed selection names the step '{step_id}' more than once."
    ),
    "text_trim_without_target": N_(
        "The step '{step_id}' trims text, so it needs target_chars or target_tokens."
    ),
    "text_target_below_marker": N_(
        "The step '{step_id}' has a target_chars of {target_chars}, smaller than its marker "
        "of {marker_chars} characters."
    ),
    "clip_below_marker": N_(
        "The step '{step_id}' clips tool results to {max_chars} characters, fewer than its "
        "marker needs ({marker_chars} characters)."
    ),
    "unknown_compressor": N_(
        "The step '{step_id}' uses the compressor '{compressor}', which the application does "
        "not provide; it provides {provided}."
    ),
    "unknown_app": N_(
        "The step '{step_id}' uses the app '{app}', which the application does not provide; "
        "it provides {provided}."
    ),
    "invalid_compressor": N_(
        "The compressor '{compressor}' must be a function, got a value of type {type_name}."
    ),
    "invalid_app": N_("The app '{app}' must be a function, got a value of type {type_name}."),
    "unknown_fragment": N_(
        "The step '{step_id}' works on the fragment '{fragment_id}', which is not among the "
        "fragments {fragment_ids}."
    ),
    "field_mismatch": N_(
        "The step '{step_id}' works on the field '{field}' of the fragment '{fragment_id}', "
        "but that fragment has the field '{actual}'."
    ),
    "duplicate_fragment_id": N_("The fragment id '{fragment_id}' appears more than once."),
    "counter_required": NP_(
        "The limit {limits} counts tokens, so a token counter is needed: pass counter=.",
        "The limits {limits} count tokens, so a token counter is needed: pass counter=.",
        "count",
    ),
    "decision_provider_required": N_(
        "The selection mode 'model' needs a decision provider: pass decision_provider=."
    ),
    "invalid_decision_provider": N_(
        "decision_provider must be a decision provider with a name and a request method, got "
        "a value of type {type_name}."
    ),
    "invalid_step_timeout": N_(
        "step_timeout must be a finite number of seconds greater than 0, got {value}."
    ),
    "unknown_runner_option": NP_(
        "The option {names} does not exist; the runner options are {known}.",
        "The options {names} do not exist; the runner options are {known}.",
        "count",
    ),
    "runner_with_options": NP_(
        "A policy runner was given together with the option {names}: bind it into the runner "
        "with replace(), or give the policy instead of the runner.",
        "A policy runner was given together with the options {names}: bind them into the "
        "runner with replace(), or give the policy instead of the runner.",
        "count",
    ),
    "invalid_unknown_items": N_("unknown_items must be 'error' or 'opaque', got {value}."),
    "unsupported_policy_file": N_(
        "The policy file '{path}' has the suffix '{suffix}'; use .json or .toml."
    ),
    "invalid_toml": N_("The policy text is not valid TOML."),
    "keep_task_without_tool_unit": N_(
        "The step '{step_id}' turns keep_task off, which only the 'tool-unit' grouping "
        "takes; its grouping is '{grouping}'."
    ),
    "clip_without_limit": N_(
        "The step '{step_id}' clips tool results, so it needs max_chars or max_tokens."
    ),
    "unknown_step": N_(
        "The step '{step_id}' is not a step of the policy; its steps are {step_ids}."
    ),
    "provider_editing_mode": N_(
        "Only a policy in 'reduce' mode maps to the context editing of {provider}; this one "
        "is in '{mode}' mode."
    ),
    "provider_char_limits": NP_(
        "The limit {limits} counts characters, but {provider} counts input tokens: give "
        "the policy token limits instead.",
        "The limits {limits} count characters, but {provider} counts input tokens: give "
        "the policy token limits instead.",
        "count",
    ),
    "provider_trigger_required": N_(
        "The context editing of {provider} needs a token trigger: set trigger_tokens or "
        "target_input_tokens."
    ),
    "no_provider_equivalent": N_(
        "The step '{step_id}' ({kind}) has no equivalent in the context editing of "
        "{provider}: run it with contextwise, and leave it out of steps=."
    ),
    "provider_editing_nothing": N_(
        "With provider_editing='{provider}', the provider applies the policy's {kind} "
        "steps, but the policy runs none: add one, or leave provider_editing out."
    ),
    "provider_editing_unsupported": N_(
        "The model {model} cannot send the context editing of {provider}: use {expected}, "
        "or leave provider_editing out."
    ),
    "unreadable_file": N_("The file '{path}' cannot be read."),
    "not_a_regular_file": N_(
        "The path '{path}' is not a regular file; only regular files are read."
    ),
    "file_too_large": N_("The file '{path}' is larger than {limit} bytes, the most read."),
}
"""The codes of :class:`~contextwise.errors.PolicyConfigurationError` and their texts."""


POLICY_STEP_ERROR: Mapping[str, Message] = {
    "compressor_failed": N_(
        "The compressor '{compressor}' of the step '{step_id}' raised {error_type}."
    ),
    "compressor_timeout": N_(
        "The compressor '{compressor}' of the step '{step_id}' did not finish within "
        "{timeout} seconds."
    ),
    "compressor_not_smaller": N_(
        "The compressor '{compressor}' of the step '{step_id}' returned {result_chars} "
        "characters to replace {replaced_chars} characters; a summary must be smaller."
    ),
    "compressor_invalid_result": N_(
        "The compressor '{compressor}' of the step '{step_id}' returned a value of type "
        "{type_name}; return a message or a string."
    ),
    "compressor_invalid_message": N_(
        "The compressor '{compressor}' of the step '{step_id}' returned a message that cannot "
        "be read."
    ),
    "compressor_empty_summary": N_(
        "The compressor '{compressor}' of the step '{step_id}' returned a summary without "
        "any text."
    ),
    "compressor_summary_has_tools": N_(
        "The compressor '{compressor}' of the step '{step_id}' returned a message with tool "
        "calls or tool results; a summary must be plain text."
    ),
    "app_failed": N_("The app '{app}' of the step '{step_id}' raised {error_type}."),
    "app_timeout": N_(
        "The app '{app}' of the step '{step_id}' did not finish within {timeout} seconds."
    ),
    "app_invalid_result": N_(
        "The app '{app}' of the step '{step_id}' returned a value of type {type_name}; return "
        "the fragment '{fragment_id}' with its field '{field}'."
    ),
    "app_invalid_message": N_(
        "The app '{app}' of the step '{step_id}' returned a message that cannot be read."
    ),
    "app_broke_tool_pairing": N_(
        "The app '{app}' of the step '{step_id}' separated a tool call from its results."
    ),
}
"""The codes of :class:`~contextwise.errors.PolicyStepError` and their texts."""


SESSION_STORE_ERROR: Mapping[str, Message] = {
    "session_schema_mismatch": N_(
        "The session store holds schema version {found}, but this version of contextwise "
        "reads schema version {expected}."
    ),
    "invalid_store_url": N_("The database URL '{url}' cannot be used: {reason}."),
    "session_layout_mismatch": N_(
        "The session store holds tables of an older layout, without a schema version; this "
        "version of contextwise reads schema version {expected}. Use a new database or file."
    ),
    "store_cannot_open": N_("The session store '{location}' cannot be opened."),
    "store_not_a_database": N_(
        "The session store '{location}' is not a database that contextwise can read."
    ),
    "store_read_only": N_(
        "The session store '{location}' is read-only: nothing can be written."
    ),
    "store_full": N_(
        "The session store '{location}' is full: the disk or the database has no room left, "
        "and nothing was written."
    ),
    "store_locked": N_(
        "The session store '{location}' stayed locked by another writer for more than "
        "{timeout} seconds; nothing was written."
    ),
    "store_row_unreadable": N_(
        "A stored row of session '{session_id}' cannot be read back: it is damaged."
    ),
    "store_closed": N_("The session store '{location}' is closed."),
    "store_failed": N_("The session store '{location}' failed with {error_type}."),
}
"""The codes of :class:`~contextwise.errors.SessionStoreError` and their texts."""


SESSION_CONFLICT_ERROR: Mapping[str, Message] = {
    "session_conflict": N_(
        "The session '{session_id}' was changed by another writer (version {found}, "
        "expected {expected}); this change was not stored. Read the session again and retry."
    ),
    "conversation_conflict": N_(
        "The remembered conversation '{key}' was changed by another writer (version {found}, "
        "expected {expected}); this call's memory was not stored."
    ),
}
"""The codes of :class:`~contextwise.errors.SessionConflictError` and their texts."""
