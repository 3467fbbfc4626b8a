"""LangChain's fake chat model, recording what each call received: one for every LangChain test.

It is LangChain's own ``GenericFakeChatModel`` (no provider, no mock of the framework): it
answers the messages it is given in order, and records the messages and the keyword arguments
(the model settings) of each call it serves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field


class RecordingChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, recording the messages and keyword arguments of each call.

    ``bind_tools`` returns the model itself, so an agent with tools can run it; a subclass that
    needs the model settings to reach each call, as with a real model, binds them instead.
    """

    seen: list[list[BaseMessage]] = Field(default_factory=list)
    kwargs: list[dict[str, Any]] = Field(default_factory=list)
    model_name: str = "fake-model"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        self.kwargs.append(kwargs)
        return super()._generate(messages, stop, run_manager, **kwargs)

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self
