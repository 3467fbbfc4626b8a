"""The reference generator behind ``python -m tools.docs.gen_sdk_reference``.

- :mod:`sdkref.collect` reads a package with griffe (and asks pydantic at run time), with
  :mod:`sdkref.annotations`, :mod:`sdkref.docstrings`, :mod:`sdkref.functions` and
  :mod:`sdkref.classes` sharing one :mod:`sdkref.loaded`;
- :mod:`sdkref.model` is the language-independent result: pages made of messages;
- :mod:`sdkref.render` writes the Markdown of one language;
- :mod:`sdkref.catalog` and :mod:`sdkref.stats` handle the ``reference`` gettext domain;
- :mod:`sdkref.project` ties them together: every generated file of a project, and its check.
"""
