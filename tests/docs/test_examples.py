"""Every example of the reference runs as copied: alone, in a fresh namespace.

The examples are read the way the reference renders them (``contextwise_reference.project.load``):
each doctest session of an ``Examples:`` section is one block a reader copies. Each runs with
nothing but the builtins in its namespace, so a block that uses a name it does not import fails with
``NameError`` here, even when ``pytest --doctest-modules`` (which runs a docstring's blocks in one
shared namespace, seeded with the module's globals) passes.
"""

from __future__ import annotations

import doctest
import functools
from collections.abc import Iterator

import pytest

from conftest import ROOT
from contextwise_reference import project
from contextwise_reference.model import ClassDoc, Example, Function, Reference

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@functools.cache
def _reference() -> Reference:
    return project.load(project.Project.configured(ROOT)).reference


def _function_blocks(function: Function) -> Iterator[tuple[str, list[Example]]]:
    yield function.path, function.examples


def _class_blocks(cls: ClassDoc) -> Iterator[tuple[str, list[Example]]]:
    yield cls.path, cls.examples
    if cls.constructor is not None:
        yield from _function_blocks(cls.constructor)
    for method in cls.methods:
        yield from _function_blocks(method)


def example_blocks(reference: Reference) -> list[tuple[str, str]]:
    """(``path#n``, doctest source) for every example block the reference shows."""
    blocks: list[tuple[str, str]] = []
    for page in reference.pages:
        named: list[tuple[str, list[Example]]] = []
        for cls in page.classes:
            named += _class_blocks(cls)
        for function in page.functions:
            named += _function_blocks(function)
        named += [(attribute.path, attribute.examples) for attribute in page.attributes]
        for path, examples in named:
            codes = [example.code for example in examples if example.code]
            blocks += [(f"{path}#{number}", code) for number, code in enumerate(codes, 1)]
    return blocks


def run_alone(name: str, source: str) -> tuple[int, str]:
    """Run one doctest session in a fresh namespace: (failures, what the runner reported)."""
    test = doctest.DocTestParser().get_doctest(
        source, {"__name__": "__example__"}, name, None, 0
    )
    output: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=output.append, clear_globs=True)
    return runner.failures, "".join(output)


BLOCKS = example_blocks(_reference())


def test_the_reference_shows_examples() -> None:
    assert len(BLOCKS) > 150
    names = {name.split("#")[0] for name, _ in BLOCKS}
    assert any(name.endswith(".ContextBudget.plan") for name in names)


@pytest.mark.parametrize(("name", "source"), BLOCKS, ids=[name for name, _ in BLOCKS])
def test_each_example_runs_alone_in_a_fresh_namespace(name: str, source: str) -> None:
    failures, report = run_alone(name, source)
    assert failures == 0, report


def test_an_example_that_relies_on_a_name_it_does_not_import_fails() -> None:
    failures, report = run_alone("sample", ">>> ContextBudget.__name__\n'ContextBudget'\n")
    assert failures == 1 and "NameError" in report
    failures, _ = run_alone(
        "sample",
        ">>> from contextwise import ContextBudget\n>>> ContextBudget.__name__\n'ContextBudget'\n",
    )
    assert failures == 0
