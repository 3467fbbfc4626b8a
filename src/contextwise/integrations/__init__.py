"""contextwise inside the agent frameworks: one module per framework, each behind its own extra.

- :mod:`contextwise.integrations.langchain`: ``ContextPolicyMiddleware``, a LangChain 1.x agent
  middleware (``pip install 'contextwise[langchain]'``);
- :mod:`contextwise.integrations.pydantic_ai`: ``ContextPolicyCapability`` and
  ``history_processor``, for pydantic-ai 2.x agents (``pip install 'contextwise[pydantic-ai]'``);
- :mod:`contextwise.integrations.openai_agents`: ``PolicySession``, a session of the OpenAI Agents
  SDK (``pip install 'contextwise[openai-agents]'``).

In each, the conversation is the policy's fragment ``fragment_id`` (``"history"`` by default), the
framework's own message objects go through the policy as they are, and the framework's history
keeps every message: only the model's view is fitted. This package imports no framework; each
module imports its own when it is imported.
"""
