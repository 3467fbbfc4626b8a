"""Calibration on a recorded conversation: the prediction error of each next call.

The recorded conversation (tests/fixtures/recorded_conversation.json, made by
``python -m tools.recorded_conversation``) is an agent conversation in English, French and
Chinese with tool results of source code: 40 user turns, 116 model calls, each recorded with the
input tokens the provider billed (OpenAI's chat framing over the o200k tokenizer). A
``CalibratedCounter`` over the estimate predicts each call before it observes it, as a harness
does: the error on call n + 1 is the prediction's, made from calls 1 to n.

Goal: within 3 % on every call from the 21st to the last. Exit status: 0 when met, 2 when missed.

    python benchmarks/bench_calibration.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from contextwise import CalibratedCounter, Usage, estimate_tokens

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "recorded_conversation.json"
GOAL = 0.03
FIRST = 21


def main() -> int:
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    model = recorded["model"]
    counter = CalibratedCounter()
    errors: list[float] = []
    plain: list[float] = []
    for count, billed in zip(recorded["calls"], recorded["input_tokens"], strict=True):
        request = {"system": recorded["system"], "tools": recorded["tools"],
                   "messages": recorded["messages"][:count]}
        texts = [recorded["system"], json.dumps(recorded["tools"])]
        texts += [str(message.get("content") or message.get("tool_calls")) for message in
                  request["messages"]]
        plain.append((sum(map(estimate_tokens, texts)) - billed) / billed)
        errors.append(counter.observe(request, Usage(input_tokens=billed), model=model))
    late = [abs(error) for error in errors[FIRST - 1 :]]
    print(f"recorded conversation: {len(errors)} calls of {model}, "
          f"{recorded['input_tokens'][-1]:,} input tokens at the last call")
    print(f"{'calls':>10} {'mean |error|':>14} {'max |error|':>13}")
    for label, values in (
        (f"1-{FIRST - 1}", [abs(error) for error in errors[: FIRST - 1]]),
        (f"{FIRST}-{len(errors)}", late),
    ):
        print(f"{label:>10} {sum(values) / len(values):>13.2%} {max(values):>13.2%}")
    print(f"the estimate alone, calls {FIRST}-{len(errors)}: mean |error| "
          f"{sum(abs(e) for e in plain[FIRST - 1:]) / len(late):.2%}, max "
          f"{max(abs(e) for e in plain[FIRST - 1:]):.2%}")
    ratios = ", ".join(f"{script} {ratio:.2f}" for script, ratio in counter.ratios(model).items())
    per_message, per_call = counter.overheads(model)
    print(f"fitted: {ratios}; {per_message:.1f} tokens a message, {per_call:.1f} a call")
    worst = max(late)
    met = worst <= GOAL
    print(f"{'met:   ' if met else 'MISSED:'} prediction error on calls {FIRST}-{len(errors)} "
          f"{worst:.2%} (goal <= {GOAL:.0%})")
    return 0 if met else 2


if __name__ == "__main__":
    sys.exit(main())
