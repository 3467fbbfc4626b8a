"""The generator on a project that is not contextwise (issue 33): ``tests/fixtures/inkwell``.

A small package with a class, a dataclass, a pydantic model, a function, a TypedDict, an enum and
cross-references, configured by its own ``[tool.contextwise-reference]``, and with no catalog yet:
the three commands extract, update and render give it pages in English, French and Chinese whose
every label is translated by the generator's own catalog, so that only its docstrings are left to
translate. The MkDocs plugin is driven here through its class; the slow test of the distribution
(``test_reference_distribution.py``) builds a site with it from a fresh install.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from babel.messages.catalog import Catalog

from conftest import ROOT
from contextwise_reference import catalog, cli, labels, po
from contextwise_reference.render import MARKER

PROJECT = ROOT / "tests" / "fixtures" / "inkwell"
LANGUAGES = ("en", "fr", "zh")
HEADINGS = {
    "en": ("## Enum `Priority`", "## Dataclass `Note`", "## Pydantic model `Style`"),
    "fr": (
        "## Énumération `Priority`",
        "## Classe de données `Note`",
        "## Modèle pydantic `Style`",
    ),
    "zh": ("## 枚举 `Priority`", "## 数据类 `Note`", "## Pydantic 模型 `Style`"),
}
MORE_HEADINGS = {
    "en": ("## Typed dictionary `NoteOptions`", "## Class `Notebook`", "## Functions"),
    "fr": ("## Dictionnaire typé `NoteOptions`", "## Classe `Notebook`", "## Fonctions"),
    "zh": ("## 类型化字典 `NoteOptions`", "## 类 `Notebook`", "## 函数"),
}


@pytest.fixture
def inkwell(tmp_path: Path) -> Path:
    """A scratch copy of the project, without catalogs or pages."""
    return Path(shutil.copytree(PROJECT, tmp_path / "inkwell"))


def run(root: Path, *args: str) -> int:
    return cli.main(list(args), root=root)


def page(root: Path, language: str, name: str = "notes") -> str:
    return (root / "docs" / language / "reference" / f"{name}.md").read_text(encoding="utf-8")


def translate_everything(root: Path) -> None:
    """Fill every entry of the project's catalogs, as a translator would."""
    for locale in LANGUAGES[1:]:
        path = root / "locales" / locale / "LC_MESSAGES" / "reference.po"
        found = po.read_catalog(path, locale)
        for message in found:
            if message.id:
                message.string = f"{locale}: {message.id}"
        path.write_text(po.render_po(found), encoding="utf-8")


def test_extract_update_render_give_every_label_translated(inkwell: Path) -> None:
    assert run(inkwell, "extract") == 0
    assert run(inkwell, "update") == 0
    assert run(inkwell, "render") == 0
    # only the project's texts are its to translate: its docstrings and its own title
    template = po.read_catalog(inkwell / "locales" / "reference.pot")
    contexts = {message.context for message in template if message.id}
    assert contexts and all(
        context.startswith("inkwell.") or context == "label:index:title" for context in contexts
    )
    for language in LANGUAGES:
        text = page(inkwell, language)
        lines = text.splitlines()
        for heading in HEADINGS[language] + MORE_HEADINGS[language]:
            assert any(line.startswith(heading) for line in lines), (language, heading)
        assert (MARKER in text) is (language != "en")  # the docstrings, not translated yet

    # once its docstrings are translated, nothing is left in English: the labels never were
    translate_everything(inkwell)
    assert run(inkwell, "render") == 0
    for language in LANGUAGES[1:]:
        for name in ("notes", "index"):
            assert MARKER not in page(inkwell, language, name), (language, name)
        status = page(inkwell, language, "translation-status")  # explains the marker, once
        assert status.count(MARKER) == 1
    assert "# fr: Inkwell API" in page(inkwell, "fr", "index")
    counts = "| Français | 92 | 92 | 0 | 0 | 100,0\u202f% |"
    assert counts in page(inkwell, "fr", "translation-status")
    assert run(inkwell, "render", "--check") == 0


def test_the_pages_follow_the_settings_and_flags_override_them(inkwell: Path) -> None:
    assert run(inkwell, "render") == 0
    assert (
        "Source : [`src/inkwell/notes.py`](https://github.com/example/inkwell/blob/main/src/"
        "inkwell/notes.py). Back to the [reference index](index.md)."
    ).replace(" :", ":") in page(inkwell, "en")
    assert page(inkwell, "en", "index").startswith("# Inkwell API\n")
    assert run(inkwell, "--output", "site/{language}/api", "--languages", "en,zh", "render") == 0
    assert (inkwell / "site/zh/api/notes.md").is_file()
    assert not (inkwell / "site/fr").exists()


def test_check_fails_on_a_stale_page_and_on_a_fuzzy_entry(
    inkwell: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(inkwell, "update") == 0
    translate_everything(inkwell)
    assert run(inkwell, "render") == 0
    assert run(inkwell, "render", "--check") == 0
    capsys.readouterr()

    stale = inkwell / "docs/zh/reference/notes.md"
    stale.write_text("edited by hand\n", encoding="utf-8")
    assert run(inkwell, "render", "--check") == 1
    assert capsys.readouterr().out.splitlines() == [
        "stale: docs/zh/reference/notes.md",
        "The reference is stale: run `contextwise-reference render`.",
    ]
    assert run(inkwell, "render") == 0
    capsys.readouterr()

    path = inkwell / "locales/fr/LC_MESSAGES/reference.po"
    found = po.read_catalog(path, "fr")
    entry = found.get("How urgent a note is.", context="inkwell.Priority:summary")
    assert entry is not None
    entry.flags.add("fuzzy")
    path.write_text(po.render_po(found), encoding="utf-8")
    assert run(inkwell, "render", "--check") == 1
    out = capsys.readouterr().out.splitlines()
    assert "stale: docs/fr/reference/notes.md" in out  # the page would now show English
    fuzzy = [line for line in out if line.startswith("fuzzy:")]
    assert fuzzy == [
        "fuzzy: locales/fr/LC_MESSAGES/reference.po: inkwell.Priority:summary "
        "'How urgent a note is.'"
    ]
    assert out[-1] == cli.FUZZY


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ('ouptut = "docs/{language}/api"', "unknown key 'ouptut'"),
        ('output = "docs/api"', "output: must contain {language}"),
        ("languages = []", "languages: expected a list"),
        ('labels = { chapter = "Chapter" }', "labels: unknown label 'chapter'"),
        ("source-link = 3", "source-link: expected a non-empty string"),
    ],
)
def test_a_wrong_setting_is_one_line_naming_the_key(
    inkwell: Path, capsys: pytest.CaptureFixture[str], setting: str, named: str
) -> None:
    pyproject = inkwell / "pyproject.toml"
    key = setting.split("=")[0].strip()
    kept = [line for line in pyproject.read_text(encoding="utf-8").splitlines()]
    kept = [line for line in kept if not line.startswith(f"{key} =")]
    pyproject.write_text("\n".join([*kept, setting, ""]), encoding="utf-8")
    assert run(inkwell, "render") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err and "[tool.contextwise-reference]" in err


def test_no_package_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "render") == 2
    assert "package: not set (set it there or pass --package NAME)" in capsys.readouterr().err


def test_the_generator_labels_are_complete_in_french_and_chinese() -> None:
    assert labels.problems() == []
    assert labels.translated() == ["fr", "zh"]


def test_a_project_label_is_translated_in_the_project_catalog(inkwell: Path) -> None:
    assert run(inkwell, "update") == 0
    path = inkwell / "locales/fr/LC_MESSAGES/reference.po"
    found: Catalog | None = catalog.read(path, "fr")
    assert found is not None
    title = found.get("Inkwell API", context="label:index:title")
    assert title is not None
    title.string = "L'API d'Inkwell"
    path.write_text(po.render_po(found), encoding="utf-8")
    assert run(inkwell, "render") == 0
    assert page(inkwell, "fr", "index").startswith("# L'API d'Inkwell\n")


def test_the_mkdocs_plugin_renders_or_only_checks(inkwell: Path) -> None:
    from mkdocs.exceptions import PluginError

    from contextwise_reference.plugin import ReferencePlugin

    def plugin(**options: object) -> ReferencePlugin:
        found = ReferencePlugin()
        errors, warnings = found.load_config(options)
        assert not errors and not warnings
        return found

    config = SimpleNamespace(config_file_path=str(inkwell / "mkdocs.yml"))
    with pytest.raises(PluginError, match=r"missing: docs/en/reference/notes\.md"):
        plugin(check=True).on_pre_build(config=config)
    assert not (inkwell / "docs").exists()
    plugin().on_pre_build(config=config)
    assert MARKER in page(inkwell, "fr")
    plugin(check=True).on_pre_build(config=config)  # up to date now


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_guide_shows_the_fixture_project_as_it_is(inkwell: Path, language: str) -> None:
    """The guide's settings, plugin and catalog entry are the fixture project's own (its console
    blocks run in ``test_console.py``)."""
    guide = ROOT / "docs" / language / "contributing" / "translate-your-own-reference.md"
    text = guide.read_text(encoding="utf-8")
    blocks = {kind: body for kind, body in re.findall(r"^```(\w+)\n(.*?)^```$", text, re.M | re.S)}
    pyproject = (PROJECT / "pyproject.toml").read_text(encoding="utf-8")
    assert pyproject.endswith(blocks["toml"])
    assert "plugins:\n  - contextwise-reference\n" in (PROJECT / "mkdocs.yml").read_text("utf-8")
    entry = dict(re.findall(r'^(msgctxt|msgid) "(.*)"$', blocks["po"], re.M))
    assert run(inkwell, "extract") == 0
    template = po.read_catalog(inkwell / "locales" / "reference.pot")
    assert template.get(entry["msgid"], context=entry["msgctxt"]) is not None
