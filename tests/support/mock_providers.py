"""Mock provider APIs for the integration tests: each answers ``ok`` in its provider's shape and
records the JSON body and headers of every request the real SDK client sends."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

ANTHROPIC_OK = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 1},
}
CHAT_OK = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-test",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
}
RESPONSES_OK = {
    "id": "resp_1",
    "object": "response",
    "created_at": 0,
    "model": "gpt-test",
    "status": "completed",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 11,
    },
}


class Recorder:
    """A mock provider: it records each request's JSON body and headers, and answers ``ok``."""

    def __init__(self, reply: dict[str, Any] | None = None) -> None:
        self.reply = ANTHROPIC_OK if reply is None else reply
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def handler(self, module: Any) -> Callable[[Any], Any]:
        def handle(request: Any) -> Any:
            self.bodies.append(json.loads(request.content))
            self.headers.append({key.lower(): value for key, value in request.headers.items()})
            return module.Response(200, json=self.reply)

        return handle

    def async_client(self, sdk: Any) -> Any:
        return self.http_client(sdk.DefaultAsyncHttpxClient)

    def client(self, sdk: Any) -> Any:
        return self.http_client(sdk.DefaultHttpxClient)

    def http_client(self, cls: type[Any]) -> Any:
        """An HTTP client of ``cls`` (an SDK's own client class) over the mock."""
        # openai 3 and anthropic 2 send through httpx2, their earlier releases through httpx.
        names = {base.__module__.split(".")[0] for base in cls.__mro__}
        module = importlib.import_module("httpx2" if "httpx2" in names else "httpx")
        return cls(transport=module.MockTransport(self.handler(module)))

    @property
    def sent(self) -> str:
        """The last body, as text."""
        return json.dumps(self.bodies[-1])
