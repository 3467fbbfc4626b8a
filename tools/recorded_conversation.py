"""The recorded conversation that calibration is measured on: requests and the billed usage.

An agent conversation of 40 user turns in English, French and Chinese (paragraphs of the guides),
each followed by one to three tool calls whose results are pieces of the package's source, then
an answer. Every model call is recorded: how many messages of the conversation it sends, and the
input tokens a provider bills for it, computed as OpenAI's chat format does with the o200k
tokenizer: each message's text, plus 4 tokens of framing a message, plus the system prompt and
the tools (as JSON), plus 3 tokens a call.

The fixture is generated once and committed (tests/fixtures/recorded_conversation.json); the
calibration test and ``benchmarks/bench_calibration.py`` read it without any tokenizer.

    python -m tools.recorded_conversation          # write the fixture
    python -m tools.recorded_conversation --check  # exit 1 when it differs
"""

from __future__ import annotations

import json
import random
import re
import sys
from typing import Any

from tools.generated import sync
from tools.i18n import languages
from tools.tokenizers import ROOT, load

FIXTURE = ROOT / "tests" / "fixtures" / "recorded_conversation.json"
PER_MESSAGE = 4
PER_CALL = 3
SYSTEM = "You are a careful coding agent. Answer in the user's language; cite the files you read."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    }
]


def _paragraphs(language: str) -> list[str]:
    found: list[str] = []
    for path in sorted((ROOT / "docs" / language / "guides").glob("*.md")):
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        found += [part.strip() for part in text.split("\n\n") if len(part.strip()) > 80]
    return found


def _sources() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for path in sorted((ROOT / "src" / "contextwise").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for start in range(0, len(text) - 1500, 1500):
            found.append((path.relative_to(ROOT).as_posix(), text[start : start + 1500]))
    return found


def build() -> dict[str, Any]:
    """The conversation and its calls (deterministic)."""
    rng = random.Random(22)
    spoken = languages.codes()
    prose = {language: _paragraphs(language) for language in spoken}
    sources = _sources()
    messages: list[dict[str, Any]] = []
    calls: list[int] = []
    for turn in range(40):
        language = spoken[turn % len(spoken)]
        messages.append({"role": "user", "content": rng.choice(prose[language])})
        for number in range(rng.randint(1, 3)):
            calls.append(len(messages))
            path, text = rng.choice(sources)
            call_id = f"call_{turn}_{number}"
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "read_file", "arguments": json.dumps({"path": path})}}]})
            messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
        calls.append(len(messages))
        messages.append({"role": "assistant", "content": rng.choice(prose[language])})
    return {"system": SYSTEM, "tools": TOOLS, "messages": messages, "calls": calls}


def billed(conversation: dict[str, Any], o200k: Any) -> list[int]:
    """The input tokens of each call, as the provider bills them."""
    from contextwise import message_text

    fixed = o200k(conversation["system"]) + PER_MESSAGE
    fixed += o200k(json.dumps(conversation["tools"])) + PER_CALL
    sizes = [o200k(message_text(message)) + PER_MESSAGE for message in conversation["messages"]]
    totals: list[int] = []
    running = 0
    done = 0
    for count in conversation["calls"]:
        running += sum(sizes[done:count])
        done = count
        totals.append(fixed + running)
    return totals


def render() -> str:
    """The fixture's text."""
    conversation = build()
    conversation["input_tokens"] = billed(conversation, load()["o200k"])
    conversation["model"] = "gpt-5"
    return json.dumps(conversation, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    """The command line; see the module docstring."""
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    changed = sync({FIXTURE: render()}, check=check)
    if check:
        return 1 if changed else 0
    for path in changed:
        print(f"written: {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
