"""Reactive compaction: what a provider's refusal of a prompt as too long says, the target the
integrations reduce to before their one retry, and the report a second refusal carries.

The integrations recognise the refusal by the framework's own error class (never by its text); the
text is read only for the sizes it reports: the context window, the tokens the prompt came to, and
the output tokens the request reserved. The retry's target is the whole prompt the window leaves
once the output reserve and a margin are taken out, scaled from what the provider counted to what
contextwise measures; when the refusal reports no window, it is 10 percent under what was sent. The
pinned parts (system prompt, instructions, tool definitions) count inside that whole-prompt target,
as they do inside the policy's own targets.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from contextwise import ContextProcessingReport, PolicyRunner
from contextwise.counting import ModelCounter
from contextwise.messages import message_text
from contextwise.policy._api import measure_of

REPORT_ATTRIBUTE: Final = "contextwise_report"
"""The attribute of a framework error, refused again after the retry, that holds the report of
the retry's reduction."""

MARGIN: Final = 0.05
"""The share of the context window kept free for the difference between contextwise's measure
and the provider's count."""

FALLBACK_SHARE: Final = 0.9
"""The share of what was sent that the retry keeps when the refusal reports no window."""

_NUMBER = r"(\d[\d,_]*)"
_PATTERNS: Final = (
    # OpenAI: "maximum context length is 128000 tokens. However, your messages resulted in
    # 130532 tokens" / "you requested 130532 tokens (120532 in the messages, 10000 in the
    # completion)".
    (re.compile(rf"maximum context length is {_NUMBER}", re.I), "limit"),
    (re.compile(rf"resulted in {_NUMBER} tokens", re.I), "sent"),
    (re.compile(rf"{_NUMBER} in the messages", re.I), "sent"),
    (re.compile(rf"{_NUMBER} in the completion", re.I), "output"),
    # Anthropic: "prompt is too long: 208310 tokens > 200000 maximum", or "input length and
    # `max_tokens` exceed context limit: 197202 + 21333 > 200000".
    (re.compile(rf"too long: {_NUMBER} tokens > {_NUMBER}", re.I), "sent limit"),
    (re.compile(rf"{_NUMBER} \+ {_NUMBER} > {_NUMBER}", re.I), "sent output limit"),
    # Gemini: "The input token count (1200000) exceeds the maximum number of tokens allowed
    # (1048576)".
    (re.compile(rf"input token count \({_NUMBER}\)", re.I), "sent"),
    (re.compile(rf"number of tokens allowed \({_NUMBER}\)", re.I), "limit"),
)


@dataclass(frozen=True, slots=True)
class Refusal:
    """What a provider's refusal of a prompt as too long reports, each ``None`` when it does
    not say."""

    limit: int | None = None
    """The context window, in tokens."""
    sent: int | None = None
    """The tokens the refused prompt came to."""
    output: int | None = None
    """The output tokens the request reserved."""


OPENAI_CODE: Final = "context_length_exceeded"
"""The error code with which OpenAI (and the APIs that follow it) refuses a prompt as too long."""


def too_long(error: BaseException, classes: tuple[type[BaseException], ...]) -> bool:
    """Whether an error is a refusal of a prompt as too long: an instance of the framework's
    own overflow classes, or an error that keeps OpenAI's code (``openai.BadRequestError``,
    which langchain-openai raises unchanged in class when the SDK's message leaves the code
    out)."""
    return isinstance(error, classes) or getattr(error, "code", None) == OPENAI_CODE


def read_refusal(error: BaseException) -> Refusal:
    """The sizes a refusal's message reports (the message, and the body where the SDK keeps
    it)."""
    texts = [str(error), str(getattr(error, "message", "") or "")]
    body = getattr(error, "body", None)
    if body is not None:
        texts.append(json.dumps(body, default=str))
    found: dict[str, int] = {}
    for text in texts:
        for pattern, names in _PATTERNS:
            match = pattern.search(text)
            if match is None:
                continue
            for name, value in zip(names.split(), match.groups(), strict=True):
                found.setdefault(name, int(value.replace(",", "").replace("_", "")))
    return Refusal(found.get("limit"), found.get("sent"), found.get("output"))


@dataclass(slots=True)
class Overflow:
    """One retry after a refusal: what the refusal said, and, once the conversation has
    reduced again, the report of that reduction."""

    refusal: Refusal
    reserve: int | None = None
    """The output tokens the request reserves, when the integration knows them (the refusal's
    own figure wins)."""
    report: ContextProcessingReport | None = field(default=None)
    """The report of the retry's reduction, set by the conversation."""

    @property
    def reduced(self) -> bool:
        """Whether the retry's reduction removed anything (else the retry is not sent)."""
        report = self.report
        return report is not None and report.after_chars < report.before_chars

    def share(self, whole_tokens: int | None) -> float:
        """The share of the whole prompt the retry keeps."""
        refusal = self.refusal
        counted = refusal.sent if refusal.sent is not None else whole_tokens
        if refusal.limit is None or not counted:
            return FALLBACK_SHARE
        reserve = refusal.output if refusal.output is not None else (self.reserve or 0)
        goal = refusal.limit - reserve - math.ceil(refusal.limit * MARGIN)
        share = goal / counted
        return share if share < 1 else FALLBACK_SHARE

    def runner(
        self, runner: PolicyRunner, messages: Sequence[Any], pinned: Sequence[object]
    ) -> PolicyRunner:
        """The runner of the retry: the policy with the forced targets, on the whole prompt (the
        pinned parts count against the targets, as they do for the policy's own). A policy in
        ``audit`` or ``validate`` mode changes nothing, here too: its runner is kept, and the
        call is not retried."""
        self._calibrate(runner, messages, pinned)
        if runner.policy.mode != "reduce":
            return runner
        measure = measure_of(runner)
        chars = sum(measure.profile(list(messages)).sizes)
        pinned_chars = sum(len(_pinned_text(part)) for part in pinned)
        tokens = pinned_tokens = None
        if measure.counter is not None:
            tokens = sum(measure.one_message_tokens(message) for message in messages)
            pinned_tokens = sum(measure.text_tokens(_pinned_text(part)) for part in pinned)
        whole_tokens = None if tokens is None else tokens + (pinned_tokens or 0)
        share = self.share(whole_tokens)
        update: dict[str, Any] = {}
        target_chars = max(1, math.floor((chars + pinned_chars) * share))
        # No trigger: the target stands in for it, so the policy acts whenever it is passed.
        update["trigger_chars"], update["target_input_chars"] = None, target_chars
        if whole_tokens is not None:
            target_tokens = max(1, math.floor(whole_tokens * share))
            update["trigger_tokens"], update["target_input_tokens"] = None, target_tokens
        policy = runner.policy.model_copy(update=update)
        return PolicyRunner(policy, **runner.options)

    def _calibrate(
        self, runner: PolicyRunner, messages: Sequence[Any], pinned: Sequence[object]
    ) -> None:
        """Feed the tokens the provider counted to the runner's calibrated counter."""
        counter = runner.counter
        sent = self.refusal.sent
        if not isinstance(counter, ModelCounter) or sent is None or sent <= 0:
            return
        request = {
            "system": "\n\n".join(
                _pinned_text(part) for part in pinned if not isinstance(part, Mapping)
            ),
            "tools": [part for part in pinned if isinstance(part, Mapping)],
            "messages": list(messages),
        }
        counter.observe(request, {"input_tokens": sent})


def attach(error: BaseException, overflow: Overflow) -> BaseException:
    """The framework's error, refused again after the retry (or not retried because nothing
    could be removed), with the retry's report as ``contextwise_report`` and a note."""
    report = overflow.report
    setattr(error, REPORT_ATTRIBUTE, report)
    if report is not None:
        # In English, for operators, like the policy's log records; the report holds the numbers.
        outcome = "retried, and refused again" if overflow.reduced else "nothing removed"
        error.add_note(
            "contextwise: after the provider refused the prompt as too long, the messages were "
            f"reduced from {report.before_chars} to {report.after_chars} characters "
            f"({outcome}); see the error's {REPORT_ATTRIBUTE}."
        )
    return error


def _pinned_text(part: object) -> str:
    """A pinned part as text: a text as it is, a message or a tool definition as its JSON."""
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):
        return json.dumps(part, sort_keys=True, ensure_ascii=False, default=str)
    return message_text(part)  # a framework message (LangChain's system message)
