"""The Agents SDK: a ``PolicyModel`` that wraps a ``RoutedModel`` records each call with its
route's model spec, so that the usage is priced with the spec's prices (a ``Model`` subclass of
our own, no provider)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

from agents import Agent, RunConfig, Runner
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from contextwise import ModelPrices, ModelSpec, RoutingContext, RoutingRule, RuleRouter
from contextwise.integrations.openai_agents import PolicyModel, RoutedModel

AUDIT: dict[str, Any] = {"mode": "audit", "trigger_chars": 100_000}


class Answering(Model):
    """A model that answers with the given usage, each answer with an id of its own (or none)."""

    def __init__(self, name: str, usage: Usage, *, ids: bool = True) -> None:
        self.model, self.usage, self.ids, self.answers = name, usage, ids, 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.answers += 1
        part = ResponseOutputText(annotations=[], text="ok", type="output_text")
        message = ResponseOutputMessage(
            id=f"msg_{self.model}_{self.answers}" if self.ids else "",
            content=[part],
            role="assistant",
            status="completed",
            type="message",
        )
        return ModelResponse(output=[message], usage=self.usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests do not stream")


def asks_to_debug(context: RoutingContext) -> bool:
    return "Traceback" in str(context.messages[-1])


def routed(*, ids: bool = True) -> PolicyModel:
    router = RuleRouter(
        [RoutingRule(id="debug", model="deep", when=asks_to_debug)],
        default="fast",
        models={
            # Names that no price table knows: only the specs' prices can price the calls.
            "fast": ModelSpec(name="house-small", prices=ModelPrices(input=1, output=4)),
            "deep": ModelSpec(name="house-large", prices=ModelPrices(input=10, output=40)),
        },
    )
    models = {
        "fast": Answering(
            "house-small", Usage(requests=1, input_tokens=1_000, output_tokens=100), ids=ids
        ),
        "deep": Answering(
            "house-large", Usage(requests=1, input_tokens=2_000, output_tokens=200), ids=ids
        ),
    }
    return PolicyModel(RoutedModel(router, models=models), AUDIT)


def converse(model: PolicyModel) -> list[Any]:
    agent = Agent(name="coder", instructions="You fix tests.", model=model)

    async def run() -> list[Any]:
        history: list[Any] = []
        for question in ["What does it do?", "Traceback: KeyError. Fix it."]:
            history.append({"role": "user", "content": question})
            result = await Runner.run(agent, history, run_config=RunConfig(tracing_disabled=True))
            history = result.to_input_list()
        return history

    return asyncio.run(run())


def test_a_routed_call_is_priced_with_its_routes_spec() -> None:
    model = routed()
    history = converse(model)
    bill = model.usage(history[0])
    assert sorted(bill.by_model) == ["house-large", "house-small"]
    assert bill.by_model["house-small"].cost == Decimal("0.0014")  # 1,000 x 1 + 100 x 4
    assert bill.by_model["house-large"].cost == Decimal("0.028")  # 2,000 x 10 + 200 x 40
    assert bill.total.unpriced_calls == 0
    assert bill.total.cost == Decimal("0.0294")


def test_a_routed_call_whose_answer_has_no_id_is_still_priced_by_its_route() -> None:
    model = routed(ids=False)
    history = converse(model)
    bill = model.usage(history[0])
    # The route is known when the call is sent, not looked up by the answer's item ids: a call
    # whose answer has none is priced with its route's spec all the same.
    assert bill.total.calls == 2
    assert bill.total.unpriced_calls == 0
    assert bill.total.cost == Decimal("0.0294")
