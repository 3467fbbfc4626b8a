"""contextwise-reference: a Python package's API reference in several languages, from gettext
catalogs keyed by the API object.

Its own distribution (``pyproject.toml`` in this folder), with nothing of contextwise in it:

- :mod:`collect` reads a package with griffe (and asks pydantic at run time), with
  :mod:`annotations`, :mod:`docstrings`, :mod:`functions` and :mod:`classes` sharing one
  :mod:`loaded`;
- :mod:`model` is the language-independent result: pages made of messages;
- :mod:`render` writes the Markdown of one language, its labels from :mod:`labels` (the
  generator's own catalog, ``locales/``);
- :mod:`catalog` and :mod:`stats` handle a project's ``reference`` gettext domain, with :mod:`po`;
- :mod:`project` ties them together: every generated file of a project, and its check;
- :mod:`config` reads ``[tool.contextwise-reference]``, :mod:`cli` is the command line and
  :mod:`plugin` the MkDocs plugin.
"""
