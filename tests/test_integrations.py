"""The integrations package: no framework is imported until its module is, and a missing framework
is a coded, translated ImportError that names the extra to install."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from contextwise import MissingDependencyError

FRAMEWORKS = {
    "contextwise.integrations.langchain": ("langchain", "langchain"),
    "contextwise.integrations.pydantic_ai": ("pydantic_ai", "pydantic-ai"),
    "contextwise.integrations.openai_agents": ("agents", "openai-agents"),
}


def test_importing_contextwise_and_its_integrations_package_imports_no_framework() -> None:
    code = (
        "import sys, contextwise, contextwise.integrations\n"
        "print(sorted(m for m in ('langchain', 'langchain_core', 'langgraph', 'pydantic_ai',"
        " 'agents') if m in sys.modules))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output == "[]\n"


@pytest.mark.parametrize("module", sorted(FRAMEWORKS))
def test_a_missing_framework_raises_a_coded_import_error_naming_its_extra(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    package, extra = FRAMEWORKS[module]
    for name in [n for n in sys.modules if n == package or n.startswith(f"{package}.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, package, None)  # what an absent package imports as
    monkeypatch.delitem(sys.modules, module, raising=False)

    with pytest.raises(MissingDependencyError) as caught:
        importlib.import_module(module)

    error = caught.value
    assert isinstance(error, ImportError)
    assert error.code == "missing_extra"
    assert error.params == {"module": module, "package": error.params["package"], "extra": extra}
    install = f"pip install 'contextwise[{extra}]'"
    for locale in ("en", "fr", "zh"):
        assert install in error.render(locale) and module in error.render(locale)
    assert error.render("fr") != error.render("en") != error.render("zh")
