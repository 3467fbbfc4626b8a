"""The JSON Schema of the context policy, generated from its pydantic models."""
