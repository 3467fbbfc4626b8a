"""The documentation tools: the reference generator and the MkDocs hook."""
