"""The reference generator: golden pages of a fixture package in three languages, and its commands.

The fixture package (``tests/fixtures/refpkg``) holds one object of each kind the generator
documents; its committed pages under ``docs/{en,fr,zh}/reference`` are the golden files, produced
by ``python -m tools.docs.gen_sdk_reference --root tests/fixtures/refpkg --package samplepkg
render``. Its French catalog leaves one message untranslated and one fuzzy, its Chinese catalog
one untranslated, so the golden pages also pin the English fallback and its marker.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message

from conftest import ROOT
from contextwise_reference import project
from contextwise_reference.model import Msg, Reference, TypeExpr
from contextwise_reference.render import MARKER, Renderer
from contextwise_reference.stats import coverage, status
from support.reference import FIXTURE, cli, copy_fixture, golden
from tools.i18n import languages

SAMPLE = project.Project(root=FIXTURE, package="samplepkg")
CONTEXTWISE = project.Project.configured(ROOT)
LANGUAGES = languages.codes()


@pytest.fixture
def sample_copy(tmp_path: Path) -> Path:
    """A scratch copy of the fixture project, free to change."""
    return copy_fixture(tmp_path)


# -- the project's own reference ---------------------------------------------------------------


def test_the_reference_is_fresh() -> None:
    target = CONTEXTWISE
    _, files = project.generate(target)
    problems = project.check(target, files)
    assert not problems, (
        "the reference is stale; run `python -m tools.docs.gen_sdk_reference render`:\n"
        + "\n".join(problems)
    )


def test_the_generator_settings_of_contextwise_follow_its_languages() -> None:
    from contextwise import i18n
    from contextwise_reference import languages as generator_languages

    assert CONTEXTWISE.package == "contextwise"
    assert CONTEXTWISE.languages == tuple(language.code for language in i18n.LANGUAGES)
    for language in i18n.LANGUAGES:
        assert generator_languages.babel_locale(language.code) == language.babel_locale


def test_every_public_module_has_a_page_in_every_language() -> None:
    import contextwise

    state = project.load(CONTEXTWISE)
    pages = state.reference.pages
    documented = {name for page in pages if page.namespace == "contextwise" for name in page.names}
    public = {name for name in contextwise.__all__ if not name.startswith("_")}
    assert documented == public
    standalone = {page.namespace: page.names for page in pages if page.namespace != "contextwise"}
    assert standalone == {
        "contextwise.integrations": ["IntegrationOptions"],
        "contextwise.integrations.langchain": [
            "SUMMARY_PROMPT",
            "ContextPolicyMiddleware",
            "recall_tool",
            "summarizer",
        ],
        "contextwise.integrations.openai_agents": [
            "SUMMARY_PROMPT",
            "PolicyModel",
            "PolicySession",
            "RoutedModel",
            "recall_tool",
            "summarizer",
        ],
        "contextwise.integrations.pydantic_ai": [
            "SUMMARY_PROMPT",
            "ContextPolicyCapability",
            "history_processor",
            "recall_tool",
            "summarizer",
        ],
    }
    for language in LANGUAGES:
        folder = ROOT / "docs" / language / "reference"
        for page in state.reference.pages:
            assert (folder / f"{page.slug}.md").is_file()


INTEGRATION_PAGES = {
    "integrations-langchain": "ContextPolicyMiddleware",
    "integrations-pydantic-ai": "ContextPolicyCapability",
    "integrations-openai-agents": "PolicySession",
}


def test_integration_pages_are_read_without_importing_the_frameworks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A None entry in sys.modules makes any import of that name fail: no framework is importable.
    for name in [n for n in sys.modules if n.startswith("contextwise.integrations.")]:
        monkeypatch.delitem(sys.modules, name)
    for framework in ("langchain", "pydantic_ai", "agents"):
        monkeypatch.setitem(sys.modules, framework, None)
    state = project.load(CONTEXTWISE)
    pages = {page.slug: page for page in state.reference.pages}
    for slug, name in INTEGRATION_PAGES.items():
        assert pages[slug].classes[0].name == name
        constructor = pages[slug].classes[0].constructor
        assert constructor is not None
        # ``**options: Unpack[RunnerOptions]`` is shown as one documented parameter per option.
        params = {param.name: param for param in constructor.params}
        assert {"fragment_id", "counter", "compressors", "on_result"} <= params.keys()
        assert "**options" not in params
        assert all(param.description is not None for param in params.values())
        assert not params["fragment_id"].required
    assert pages["integrations-pydantic-ai"].functions[0].name == "history_processor"
    # The Agents SDK's routed model and policy model are read without importing the SDK too.
    classes = {found.name: found for found in pages["integrations-openai-agents"].classes}
    routed = classes["RoutedModel"]
    assert routed.constructor is not None
    names = [param.name for param in routed.constructor.params]
    assert names == ["router", "models", "store", "ttl"]
    wrapper = classes["PolicyModel"].constructor
    assert wrapper is not None
    assert [param.name for param in wrapper.params][:5] == [
        "model",
        "policy",
        "cache_breakpoints",
        "provider_editing",
        "fragment_id",
    ]
    assert not [n for n in sys.modules if n.startswith("contextwise.integrations.")]


RUNNER_OPTIONS = (
    "counter",
    "budget",
    "compressors",
    "apps",
    "decision_provider",
    "step_timeout",
    "part_estimate",
    "unknown_items",
)


def _unpacking_functions(reference: Reference) -> list[tuple[str, list[object]]]:
    """Every documented function and constructor whose signature takes
    ``**options: Unpack[RunnerOptions]``, with its parameters."""
    found: list[tuple[str, list[object]]] = []
    for page in reference.pages:
        functions = list(page.functions)
        for cls in page.classes:
            functions += [cls.constructor, *cls.methods] if cls.constructor else list(cls.methods)
        for function in functions:
            if any(f"Unpack[{typed}]" in function.signature for typed in RUNNER_TYPED_DICTS):
                found.append((function.path, list(function.params)))
    return found


RUNNER_TYPED_DICTS = ("RunnerOptions", "StepOptions", "IntegrationOptions")
"""The typed dicts that hold the runner options: ``RunnerOptions``, and those that extend it."""

STEP_OPTIONS = (
    "router",
    "model",
    "active",
    "active_effort",
    "system",
    "tools",
    "pinned",
    "window",
    "output",
    "reasoning",
)


def test_step_options_are_one_table_documented_once_by_their_typed_dict() -> None:
    state = project.load(CONTEXTWISE)
    unpacking = dict(_unpacking_functions(state.reference))
    for path in ("contextwise.prepare_step", "contextwise.aprepare_step"):
        params = {param.name: param for param in unpacking[path]}  # type: ignore[attr-defined]
        assert "**options" not in params and params["step"].required, path
        # The step's own options, then the runner options; each described by its typed dict.
        names = [name for name in params if name not in ("policy", "fragments", "step")]
        assert names == [*STEP_OPTIONS, *RUNNER_OPTIONS], path
        for option in STEP_OPTIONS:
            description = params[option].description
            assert description is not None, (path, option)
            assert description.context == f"contextwise.StepOptions.{option}:description"
    # The typed dict's own table holds its own keys: the runner options have theirs.
    pages = {page.slug: page for page in state.reference.pages}
    typed = {found.name: found for found in pages["step"].classes}["StepOptions"]
    assert [field.name for field in typed.fields] == list(STEP_OPTIONS)
    template = (ROOT / "locales" / "reference.pot").read_text(encoding="utf-8")
    for option in STEP_OPTIONS:
        assert f'msgctxt "contextwise.aprepare_step:param:{option}"' not in template
        assert f'msgctxt "contextwise.StepOptions.{option}:description"' in template


INTEGRATION_OPTIONS = ("fragment_id", "on_result", "store", "ttl", "max_memory_bytes")

INTEGRATION_CONSTRUCTORS = (
    "contextwise.integrations.langchain.ContextPolicyMiddleware.__init__",
    "contextwise.integrations.pydantic_ai.ContextPolicyCapability.__init__",
    "contextwise.integrations.openai_agents.PolicySession.__init__",
    "contextwise.integrations.openai_agents.PolicyModel.__init__",
)


def test_integration_options_are_one_table_documented_once_by_their_typed_dict() -> None:
    state = project.load(CONTEXTWISE)
    unpacking = dict(_unpacking_functions(state.reference))
    for path in INTEGRATION_CONSTRUCTORS:
        params = {param.name: param for param in unpacking[path]}  # type: ignore[attr-defined]
        assert "**options" not in params, path
        for option in (*INTEGRATION_OPTIONS, *RUNNER_OPTIONS):
            assert not params[option].required, (path, option)
        for option in INTEGRATION_OPTIONS:
            description = params[option].description
            assert description is not None, (path, option)
            assert description.context == (
                f"contextwise.integrations.IntegrationOptions.{option}:description"
            ), (path, option)
    pages = {page.slug: page for page in state.reference.pages}
    typed = {found.name: found for found in pages["integrations"].classes}["IntegrationOptions"]
    assert typed.kind == "typeddict"
    assert [field.name for field in typed.fields] == list(INTEGRATION_OPTIONS)
    template = (ROOT / "locales" / "reference.pot").read_text(encoding="utf-8")
    for path in INTEGRATION_CONSTRUCTORS:
        for option in INTEGRATION_OPTIONS:
            assert f'msgctxt "{path.removesuffix(".__init__")}:param:{option}"' not in template


def test_runner_options_are_one_table_documented_once_by_the_typed_dict() -> None:
    state = project.load(CONTEXTWISE)
    unpacking = _unpacking_functions(state.reference)
    paths = {path for path, _ in unpacking}
    for expected in (
        "contextwise.ContextPolicy.bind",
        "contextwise.process_context",
        "contextwise.ContextSession",
        "contextwise.prepare_step",
        "contextwise.integrations.langchain.ContextPolicyMiddleware",
        "contextwise.integrations.pydantic_ai.history_processor",
        "contextwise.integrations.openai_agents.PolicySession",
    ):
        assert any(path.startswith(expected) for path in paths), expected
    for path, params in unpacking:
        by_name = {param.name: param for param in params}  # type: ignore[attr-defined]
        assert "**options" not in by_name and "**changes" not in by_name, path
        for option in RUNNER_OPTIONS:
            param = by_name[option]
            assert not param.required and param.default is None, (path, option)
            # One message, the typed dict's own: a translator sees each description once.
            assert param.description is not None, (path, option)
            assert param.description.context == (
                f"contextwise.RunnerOptions.{option}:description"
            ), (path, option)
    template = (ROOT / "locales" / "reference.pot").read_text(encoding="utf-8")
    for path, _ in unpacking:
        for option in RUNNER_OPTIONS:
            assert f'msgctxt "{path}:param:{option}"' not in template, (path, option)
    for option in RUNNER_OPTIONS:
        assert f'msgctxt "contextwise.RunnerOptions.{option}:description"' in template


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_private_type_appears_in_a_signature_of_the_reference(language: str) -> None:
    import re

    private = re.compile(r"(?<![\w.])_[A-Z]\w*")
    folder = ROOT / "docs" / language / "reference"
    for page in sorted(folder.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        signatures = re.findall(r"```python\n(.*?)```", text, re.S)
        cells = re.findall(r"<code>(.*?)</code>", text)
        for snippet in signatures + cells:
            assert not private.search(snippet), f"{page.name}: {snippet!r}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_integration_pages_register_their_module_identifiers(language: str) -> None:
    folder = ROOT / "docs" / language / "reference"
    for slug, name in INTEGRATION_PAGES.items():
        text = (folder / f"{slug}.md").read_text(encoding="utf-8")
        module = slug.replace("integrations-", "integrations.").replace("-", "_")
        assert f"[](){{#contextwise.{module}.{name}}}" in text
        assert f"from contextwise.{module} import" in text
        assert "[](){#contextwise." + name + "}" not in text
    index = (folder / "index.md").read_text(encoding="utf-8")
    assert all(f"({slug}.md)" in index for slug in INTEGRATION_PAGES)


def test_every_page_label_is_translated() -> None:
    state = project.load(CONTEXTWISE)
    for result in state.coverage:
        labels = result.pages["label"]
        assert labels.translated == labels.total, f"{result.locale}: page labels not all translated"


@pytest.mark.parametrize(
    "page", ["budget", "counting", "effort", "errors", "i18n", *INTEGRATION_PAGES]
)
def test_core_pages_are_fully_translated(page: str) -> None:
    state = project.load(CONTEXTWISE)
    for result in state.coverage:
        count = result.pages[page]
        assert (count.translated, count.fuzzy) == (count.total, 0), (
            f"{result.locale}/{page}: {count.fuzzy} fuzzy, {count.untranslated} untranslated"
        )


# -- golden pages of the fixture ---------------------------------------------------------------


def test_golden_pages_match_the_generator() -> None:
    _, files = project.generate(SAMPLE)
    assert project.check(SAMPLE, files) == [], (
        "regenerate with `python -m tools.docs.gen_sdk_reference --root tests/fixtures/refpkg "
        "--package samplepkg render` and review the diff"
    )


LAYOUT = {
    "en": [
        "# shapes.py",
        "Source: `src/samplepkg/shapes.py`. Back to the [reference index](index.md).",
        "> This page is generated from the package's sources. "
        "Do not edit it by hand: change the source and regenerate.",
        "## Import {#section-import}",
        "## Pydantic model `ShapeSpec` {#ShapeSpec}",
        "**Fields:**",
        "| Name | Type | Required | Description |",
        "| Name | Type | Default | Required | Description |",
        "### Constructor {#Shape-constructor}",
        "This element takes no parameters.",
        "**Returns:** <code>[Shape](#Shape)</code> — A new shape whose sides are `factor` times "
        "longer.",
        "- [`SampleError`](errors.md#SampleError) — When the factor is negative (code "
        "`negative_factor`).",
        "## Functions {#section-functions}",
        "## Constants and type aliases {#section-constants}",
        "## Examples {#section-examples}",
    ],
    "fr": [
        "# shapes.py",
        "Source\u00a0: `src/samplepkg/shapes.py`. Retour à l'[index de la référence](index.md).",
        "## Importation {#section-import}",
        "## Modèle pydantic `ShapeSpec` {#ShapeSpec}",
        "**Champs\u00a0:**",
        "| Nom | Type | Requis | Description |",
        "| Nom | Type | Valeur par défaut | Requis | Description |",
        "### Constructeur {#Shape-constructor}",
        "Cet élément ne prend aucun paramètre.",
        "**Retour\u00a0:** <code>[Shape](#Shape)</code> — Une nouvelle forme dont les côtés sont "
        "`factor` fois plus longs.",
        "## Fonctions {#section-functions}",
        "## Exemples {#section-examples}",
    ],
    "zh": [
        "# shapes.py",
        "源文件：`src/samplepkg/shapes.py`。返回[参考索引](index.md)。",
        "## 导入 {#section-import}",
        "## Pydantic 模型 `ShapeSpec` {#ShapeSpec}",
        "**字段：**",
        "| 名称 | 类型 | 必需 | 说明 |",
        "| 名称 | 类型 | 默认值 | 必需 | 说明 |",
        "### 构造函数 {#Shape-constructor}",
        "无参数。",
        "**返回：** <code>[Shape](#Shape)</code>：一个新形状，其边长是原来的 `factor` 倍。",
        "## 函数 {#section-functions}",
        "## 示例 {#section-examples}",
    ],
}


def test_chinese_reference_pages_introduce_a_description_with_a_full_width_colon() -> None:
    # "{item} — {description}" is a label: Chinese writes "{item}：{description}", never a spaced
    # em dash, which is no Chinese punctuation
    pages = sorted((ROOT / "docs" / "zh" / "reference").glob("*.md"))
    assert pages
    found = [page.name for page in pages if " — " in page.read_text(encoding="utf-8")]
    assert not found, found
    assert "</code>：一个新形状" in golden("zh", "shapes")


@pytest.mark.parametrize("language", LANGUAGES)
def test_golden_layout(language: str) -> None:
    lines = golden(language, "shapes").splitlines()
    for expected in LAYOUT[language]:
        assert expected in lines, f"{language}: missing line {expected!r}"
    text = "\n".join(lines)
    # the import line, and the docstring examples as console sessions
    assert "```python\nfrom samplepkg import (\n    DEFAULT_SIDE,\n    Color,\n" in text
    assert "```pycon\n>>> area(Shape.square(3.0))\n9.0\n```" in text
    # a union in a table cell, with the documented name linked on the same page
    assert "| `origin` | <code>[Point](#Point) &#124; None</code> | `None` |" in text


@pytest.mark.parametrize("language", LANGUAGES)
def test_types_link_to_their_page_in_the_same_language(language: str) -> None:
    tools = golden(language, "tools")
    assert "<code>[Unit](shapes.md#Unit) &#124; None</code>" in tools
    assert "<code>[Counter](#Counter) &#124; None</code>" in tools


@pytest.mark.parametrize("language", LANGUAGES)
def test_pydantic_decides_required_and_default(language: str) -> None:
    shapes = golden(language, "shapes")
    yes, no = {"en": ("yes", "no"), "fr": ("oui", "non"), "zh": ("是", "否")}[language]
    # `label: str | None = Field(...)` looks defaulted to a reader; pydantic says it is required.
    assert f"| `label` | <code>str &#124; None</code> |  | {yes} |" in shapes
    assert f"| `tags` | <code>list&#91;str&#93;</code> | `list()` | {no} |" in shapes
    assert f"| `color` | <code>[Color](#Color)</code> | `Color.RED` | {no} |" in shapes


PROPERTIES = {
    "en": ("**Properties:**", "| Name | Type | Description |", "The distance from the origin."),
    "fr": ("**Propriétés\u00a0:**", "| Nom | Type | Description |", "La distance à l'origine."),
    "zh": ("**特性：**", "| 名称 | 类型 | 说明 |", "到原点的距离。"),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_models_and_dataclasses_show_their_properties(language: str) -> None:
    label, header, norm = PROPERTIES[language]
    shapes = golden(language, "shapes")
    lines = shapes.splitlines()
    # a Properties table after the fields of the pydantic model and of the dataclass
    assert lines.count(label) == 2
    assert lines.count(header) == 2
    for cls in ("ShapeSpec", "Point"):
        section = shapes.split(f"{{#{cls}}}")[1].split(f"{{#{cls}-constructor}}")[0]
        assert section.index(label) > section.index("| `")
    assert "| `corners` | <code>int</code> |" in shapes
    assert f"| `norm` | <code>float</code> | {norm} |" in shapes
    # a property's type links to its definition; a private property is not documented
    assert "| `mirror` | <code>[Point](#Point)</code> |" in shapes
    assert "_key" not in shapes
    # the plain class keeps its properties in its attributes table
    assert shapes.split("{#Shape}")[1].count(label) == 0


@pytest.mark.parametrize("language", LANGUAGES)
def test_dataclass_fields_outside_the_constructor_and_static_methods(language: str) -> None:
    shapes = golden(language, "shapes")
    no = {"en": "no", "fr": "non", "zh": "否"}[language]
    # `kind = field(init=False)`: a documented field, never a constructor parameter
    assert f"| `kind` | <code>str</code> | {no} |" in shapes
    assert "```python\nPoint(x: float, y: float = 0.0)\n```" in shapes
    constructor = shapes.split("{#Point-constructor}")[1].split("{#Point-parse}")[0]
    assert "`kind`" not in constructor
    assert "```python\n@staticmethod\nparse(text: str) -> Point\n```" in shapes


def test_untranslated_and_fuzzy_text_falls_back_to_english_with_a_marker() -> None:
    assert f"{MARKER} Only squares are supported in this sample." in golden("fr", "shapes")
    tools = golden("fr", "tools")
    assert f"{MARKER} Ignored; shows a link to a type documented on another page." in tools
    assert "Ignoré" not in tools  # a fuzzy translation is never published
    assert f"{MARKER} The errors of samplepkg." in golden("zh", "errors")
    assert MARKER not in golden("en", "shapes")


def test_error_codes_are_translated_from_the_package_catalog() -> None:
    assert "| `negative_side` | Le côté doit être positif ou nul ; reçu : {value}. |" in golden(
        "fr", "errors"
    )
    assert (
        f"| `negative_side` | {MARKER} The side must be zero or more, got {{value}}. |"
        in golden("zh", "errors")
    )


def test_status_page_shows_the_honest_counts() -> None:
    page = golden("fr", "translation-status")
    assert "| Français | 151 | 149 | 1 | 1 | 98,7\u202f% |" in page
    assert "| 简体中文 | 151 | 150 | 0 | 1 | 99.3% |" in golden("zh", "translation-status")


def _section(page: str, anchor: str) -> list[str]:
    """The lines of one function's section, from its heading to the next heading."""
    lines = page.splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith(f"{{#{anchor}}}"))
    # a section ends at the next heading, or at the identifier anchor written right before it
    ends = ("#", "[](){#")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(ends)), len(lines))
    return lines[start:end]


def _documented_part(section: list[str]) -> list[str]:
    """What a function's section says after its summary: parameters, returns and raises."""
    first = next(i for i, line in enumerate(section) if line.startswith("**"))
    return section[first:]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(
    ("sync", "twin"), [("measure", "ameasure"), ("Shape-render", "Shape-arender")]
)
def test_a_sync_face_shows_the_parameters_returns_and_raises_of_its_async_twin(
    language: str, sync: str, twin: str
) -> None:
    page = golden(language, "shapes")
    sync_section, twin_section = _section(page, sync), _section(page, twin)
    assert "async" not in sync_section[3] and "async" in twin_section[3]  # the signatures
    assert _documented_part(sync_section) == _documented_part(twin_section)
    assert len(_documented_part(sync_section)) > 3


def test_the_texts_a_sync_face_borrows_are_translated_once() -> None:
    state = project.load(SAMPLE)
    contexts = [msg.context for _, msg in state.messages]
    borrowed = ("param", "returns", "raises")
    for sync, twin in (
        ("measure", "ameasure"),
        ("Shape.render", "Shape.arender"),
    ):
        own = [c for c in contexts if c.startswith(f"samplepkg.{sync}:")]
        assert own == [f"samplepkg.{sync}:summary"], own
        assert any(c.startswith(f"samplepkg.{twin}:param:") for c in contexts)
    assert any(c.endswith("ameasure:returns") for c in contexts)
    assert any(c.endswith("ameasure:raises:SampleError") for c in contexts)
    assert not [
        c for c in contexts if c.split(":")[0].endswith(".measure") and c.split(":")[1] in borrowed
    ]
    french = golden("fr", "shapes")
    assert (
        french.count(
            "| `factor` | <code>float</code> | `1.0` | non | L'échelle appliquée avant la mesure. |"
        )
        == 2
    )
    chinese = golden("zh", "shapes")
    assert chinese.count("缩放后的周长，后跟其单位。") == 2


# -- translation counts ------------------------------------------------------------------------


def test_status_counts_fuzzy_and_half_filled_plurals_as_not_translated() -> None:
    catalog = Catalog(locale="fr")
    catalog.add("done", "fait", context="a")
    catalog.add("unsure", "peut-être", context="b", flags=["fuzzy"])
    catalog.add("empty", "", context="c")
    catalog.add(("one file", "{n} files"), ("un fichier", "", "{n} fichiers"), context="d")
    catalog.add(("one dir", "{n} dirs"), ("un dossier", "{n} dossiers"), context="e")
    catalog.add(("one page", "{n} pages"), ("une page", "{n} pages", "{n} de pages"), context="f")
    msgs = [
        Msg("a", "done"),
        Msg("b", "unsure"),
        Msg("c", "empty"),
        Msg("d", "one file"),
        Msg("e", "one dir"),
        Msg("f", "one page"),
        Msg("g", "missing"),
        Msg("other", "done"),  # same msgid, other context: not the same message
    ]
    assert [status(catalog, msg) for msg in msgs] == [
        "translated",
        "fuzzy",
        "untranslated",
        "untranslated",
        "untranslated",
        "translated",
        "untranslated",
        "untranslated",
    ]
    result = coverage([("p", msg) for msg in msgs], catalog, "fr")
    assert (result.total.translated, result.total.fuzzy, result.total.untranslated) == (2, 1, 5)
    assert result.total.ratio == pytest.approx(2 / 8)
    assert not result.releasable


def test_stats_prints_the_totals_last(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(FIXTURE, "stats") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-4].split() == [
        "locale",
        "translated",
        "fuzzy",
        "untranslated",
        "total",
        "coverage",
    ]
    assert lines[-3].split() == ["fr", "149", "1", "1", "151", "98.7%"]
    assert lines[-2].split() == ["zh", "150", "0", "1", "151", "99.3%"]
    assert lines[-1] == "release rule (100 % translated, 0 fuzzy): not met"
    assert cli(FIXTURE, "stats", "--strict") == 1


# -- the commands --------------------------------------------------------------------------------


def test_render_writes_only_what_changed(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = sample_copy / "docs/fr/reference/shapes.md"
    other = sample_copy / "docs/zh/reference/shapes.md"
    assert cli(sample_copy, "render") == 0
    assert capsys.readouterr().out.strip() == "the reference is up to date"
    before = other.stat().st_mtime_ns
    page.write_text("edited by hand\n", encoding="utf-8")
    assert cli(sample_copy, "render") == 0
    assert capsys.readouterr().out.split("\n")[0] == "written: docs/fr/reference/shapes.md"
    assert page.read_text(encoding="utf-8") == golden("fr", "shapes")
    assert other.stat().st_mtime_ns == before


def test_check_lists_stale_and_orphan_pages_and_a_stale_template(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (sample_copy / "docs/fr/reference/shapes.md").write_text("edited\n", encoding="utf-8")
    (sample_copy / "docs/zh/reference/removed.md").write_text("# removed\n", encoding="utf-8")
    (sample_copy / "docs/en/reference/tools.md").unlink()
    pot = sample_copy / "locales/reference.pot"
    pot.write_text(pot.read_text(encoding="utf-8").replace("Bright red.", "Red."), encoding="utf-8")
    assert cli(sample_copy, "render", "--check") == 1
    out = capsys.readouterr().out
    for line in (
        "stale: docs/fr/reference/shapes.md",
        "orphan: docs/zh/reference/removed.md",
        "missing: docs/en/reference/tools.md",
        "stale: locales/reference.pot",
    ):
        assert line in out.splitlines()
    assert (sample_copy / "docs/fr/reference/shapes.md").read_text(encoding="utf-8") == "edited\n"
    assert cli(sample_copy, "render") == 0
    assert not (sample_copy / "docs/zh/reference/removed.md").exists()
    assert _stale(sample_copy) == []


def _stale(root: Path) -> list[str]:
    """What ``render --check`` finds stale in a copy of the fixture (its fuzzy entry aside)."""
    target = project.Project(root=root, package="samplepkg")
    return project.check(target, project.generate(target)[1])


def test_check_fails_on_a_fuzzy_entry_and_names_it(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the fixture's French catalog holds one fuzzy entry, on purpose: never published
    assert _stale(sample_copy) == []
    assert cli(sample_copy, "render", "--check") == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "fuzzy: locales/fr/LC_MESSAGES/reference.po: samplepkg.count_words:param:unit "
        "'Ignored; shows a link to a type documented on another page.'",
        "A fuzzy translation is never published: check it against the English text, then remove "
        "its fuzzy flag.",
    ]
    po = sample_copy / "locales/fr/LC_MESSAGES/reference.po"
    po.write_text(po.read_text(encoding="utf-8").replace("#, fuzzy\nmsgctxt", "msgctxt"), "utf-8")
    assert cli(sample_copy, "render", "--check") == 1  # now translated: the page is stale
    assert cli(sample_copy, "render") == 0
    assert cli(sample_copy, "render", "--check") == 0


def test_a_griffe_warning_fails_the_generator(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = sample_copy / "src/samplepkg/tools/_impl.py"
    source = module.read_text(encoding="utf-8")
    module.write_text(
        source.replace(
            "        text: The text to measure.\n        counter:",
            "        text: The text to measure.\n"
            "        language: Not a parameter.\n"
            "        counter:",
        ),
        encoding="utf-8",
    )
    assert cli(sample_copy, "render", "--check") == 2
    assert (
        "Parameter 'language' does not appear in the function signature" in capsys.readouterr().err
    )


def test_update_keeps_obsolete_entries_and_marks_changes_fuzzy(sample_copy: Path) -> None:
    shapes = sample_copy / "src/samplepkg/shapes.py"
    source = shapes.read_text(encoding="utf-8")
    source = source.replace('"""A fill colour."""', '"""A fill colour for the shape."""')
    source = source.replace(
        "\n        The copy keeps the description; only the length of the sides changes.\n", ""
    )
    shapes.write_text(source, encoding="utf-8")
    assert cli(sample_copy, "update") == 0
    po = (sample_copy / "locales/fr/LC_MESSAGES/reference.po").read_text(encoding="utf-8")
    changed = po.split('msgctxt "samplepkg.Color:summary"')[0].rsplit("\n\n", 1)[-1]
    assert "#, fuzzy" in changed
    assert '#~ msgctxt "samplepkg.Shape.scaled:paragraph:1"' in po
    assert '#~ msgstr "La copie garde la description ; seule la longueur des côtés change."' in po
    assert "POT-Creation-Date" not in (sample_copy / "locales/reference.pot").read_text("utf-8")
    # the fuzzy entry is not published: the page shows the new English text, marked
    assert cli(sample_copy, "render") == 0
    page = (sample_copy / "docs/fr/reference/shapes.md").read_text(encoding="utf-8")
    assert f"{MARKER} A fill colour for the shape." in page


def test_template_contexts_are_public_paths_and_slots() -> None:
    """A text is keyed by the public path of its object (``samplepkg.Shape``, the name the root
    exports), not by the module that defines it; a page's own texts by its public module."""
    pot = (FIXTURE / "locales/reference.pot").read_text(encoding="utf-8")
    for context in (
        "samplepkg.shapes:paragraph:2:item:1",
        "samplepkg.Shape:summary",
        "samplepkg.Shape.scaled:param:factor",
        "samplepkg.Shape.scaled:returns",
        "samplepkg.Shape.scaled:raises:SampleError",
        "samplepkg.Shape:example:1",
        "samplepkg.ShapeSpec.sides:description",
        "samplepkg.ShapeSpec.corners:description",
        "samplepkg.Point.norm:description",
        "samplepkg.Point.kind:description",
        "samplepkg.Point.parse:param:text",
        "samplepkg.Counter:summary",
    ):
        assert f'msgctxt "{context}"' in pot
    # the page labels are the generator's: a project's catalog holds only its docstrings
    assert 'msgctxt "label:' not in pot
    assert 'msgctxt "samplepkg.shapes.' not in pot
    assert 'msgctxt "samplepkg.tools.' not in pot
    assert "POT-Creation-Date" not in pot


# -- keyed by public paths: modules can become private ------------------------------------------


def _layout(root: Path) -> tuple[dict[str, list[str]], set[tuple[str, str]], dict[str, list[str]]]:
    """What must not move when a module is renamed: the page map (names by page), the catalog's
    (context, text) pairs, and the anchors of each page."""
    state = project.load(project.Project(root=root, package="samplepkg"))
    reference = state.reference
    pages = {page.slug: page.names for page in reference.pages}
    messages = {(msg.context, msg.text) for _, msg in state.messages}
    anchors = {
        page.slug: [
            *(cls.anchor for cls in page.classes),
            *(method.anchor for cls in page.classes for method in cls.methods),
            *(fn.anchor for fn in page.functions),
            *(attribute.anchor for attribute in page.attributes),
        ]
        for page in reference.pages
    }
    return pages, messages, anchors


def test_making_a_module_private_moves_no_page_and_no_translation(sample_copy: Path) -> None:
    before = _layout(sample_copy)
    def entries(path: Path) -> list[str]:  # a catalog without its source locations (#: lines)
        lines = path.read_text(encoding="utf-8").splitlines()
        return [line for line in lines if not line.startswith("#:")]

    catalogs = {path: entries(path) for path in sorted((sample_copy / "locales").rglob("*.po*"))}
    source = sample_copy / "src/samplepkg"
    (source / "shapes.py").rename(source / "_shapes.py")
    for module in source.rglob("*.py"):
        text = module.read_text(encoding="utf-8")
        module.write_text(text.replace("samplepkg.shapes", "samplepkg._shapes"), encoding="utf-8")
    try:
        after = _layout(sample_copy)
        assert after == before  # the same pages, names, contexts and anchors
        assert cli(sample_copy, "update") == 0
        assert cli(sample_copy, "render") == 0
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] == "samplepkg"]:
            del sys.modules[name]
    # The catalogs are unchanged by the update but for the file each text comes from: no fuzzy
    # entry, no obsolete one, no new one.
    assert {path: entries(path) for path in catalogs} == catalogs
    for language in LANGUAGES:
        page = (sample_copy / f"docs/{language}/reference/shapes.md").read_text(encoding="utf-8")
        assert page.replace("_shapes", "shapes") == golden(language, "shapes")


def _old_style(catalog: Catalog, mapping: dict[str, str]) -> int:
    """Put back the contexts of before the migration (``samplepkg.shapes.Shape:summary``)."""
    back = {new: old for old, new in mapping.items()}
    entries = [m for m in catalog if m.id]
    moved = 0
    for message in entries:
        catalog.delete(message.id, context=message.context)
        path, colon, slot = (message.context or "").partition(":")
        head, _, rest = path.partition(".")
        name, dot, tail = rest.partition(".")
        old = back.get(f"{head}.{name}")
        if old is not None:
            message.context = f"{old}{dot}{tail}{colon}{slot}"
            moved += 1
    for message in entries:  # in their order: only the contexts differ
        catalog[message.id] = message
    return moved


def test_migrate_moves_old_contexts_keeping_every_translation(sample_copy: Path) -> None:
    from contextwise_reference import catalog as reference_catalog
    from contextwise_reference import migrate
    from tools.i18n import catalogs

    target = project.Project(root=sample_copy, package="samplepkg")
    state = project.load(target)
    mapping = migrate.context_map(state.reference)
    assert mapping["samplepkg.shapes.Shape"] == "samplepkg.Shape"
    assert mapping["samplepkg.tools.Counter"] == "samplepkg.Counter"
    committed = {loc: target.po(loc).read_bytes() for loc in target.translated}
    for locale in target.translated:
        found = state.catalogs[locale]
        assert found is not None
        assert _old_style(found, mapping) > 0
        target.po(locale).write_text(catalogs.render_po(found), encoding="utf-8")
    assert cli(sample_copy, "render", "--check") == 1  # old contexts: the translations are lost

    assert cli(sample_copy, "migrate") == 0
    assert {loc: target.po(loc).read_bytes() for loc in target.translated} == committed
    assert cli(sample_copy, "migrate") == 0  # again: nothing left to move, nothing changes
    assert {loc: target.po(loc).read_bytes() for loc in target.translated} == committed

    assert cli(sample_copy, "update") == 0
    assert {loc: target.po(loc).read_bytes() for loc in target.translated} == committed
    assert _stale(sample_copy) == []
    for locale in target.translated:
        merged = reference_catalog.read(target.po(locale), locale)
        assert merged is not None
        active = [m for m in merged if m.id]
        assert not any("samplepkg.shapes." in (m.context or "") for m in active)


def test_the_project_catalogs_are_keyed_by_public_paths_with_nothing_lost() -> None:
    """The migration of the real catalogs: from the contexts of before, every entry comes back
    translated, with no fuzzy entry and no new obsolete one."""
    from contextwise_reference import catalog as reference_catalog
    from contextwise_reference import migrate

    target = CONTEXTWISE
    state = project.load(target)
    mapping = migrate.context_map(state.reference)
    template = reference_catalog.template(state.reference, state.messages)
    for locale in target.translated:
        found = state.catalogs[locale]
        assert found is not None
        obsolete = len(found.obsolete)
        assert migrate.migrate(found, mapping) == 0  # nothing old-style is left
        assert _old_style(found, mapping) > 1000
        assert migrate.migrate(found, mapping) > 1000
        merged = reference_catalog.merge(template, found, locale)
        assert [m.context for m in merged if m.id and m.fuzzy] == []
        assert [m.context for m in merged if m.id and not m.string] == []
        assert len(merged.obsolete) == obsolete


def test_type_cells_escape_markdown_and_pipes() -> None:
    reference = Reference("pkg", [], {})
    renderer = Renderer(reference, "en")
    expr = TypeExpr(("Callable[[str], int | None] | *_Ts",))
    assert renderer.type(expr) == (
        "<code>Callable&#91;&#91;str&#93;, int &#124; None&#93; &#124; &#42;&#95;Ts</code>"
    )


def test_migrate_keeps_the_translated_entry_when_old_and_new_contexts_meet() -> None:
    """A catalog merged from two branches may hold a text under both contexts: the translated,
    not fuzzy one wins, whichever context it had."""
    from contextwise_reference import migrate

    mapping = {"pkg.page.Name": "pkg.Name"}
    catalog = Catalog(locale="fr")
    catalog.add("A name.", "", context="pkg.Name:summary")
    catalog.add("A name.", "Un nom.", context="pkg.page.Name:summary")
    catalog.add("Fuzzy.", "Approximatif.", context="pkg.Name.x:summary", flags=["fuzzy"])
    catalog.add("Fuzzy.", "Sûr.", context="pkg.page.Name.x:summary")
    catalog.add("Other.", "Autre.", context="pkg.page:summary")
    assert migrate.migrate(catalog, mapping) == 2
    kept = {(m.context, m.string) for m in catalog if m.id}
    assert kept == {
        ("pkg.Name:summary", "Un nom."),
        ("pkg.Name.x:summary", "Sûr."),
        ("pkg.page:summary", "Autre."),
    }
    assert not any(m.fuzzy for m in catalog if m.id)
    assert migrate.migrate(catalog, mapping) == 0


def test_migrate_brings_back_a_translation_left_in_an_obsolete_old_entry() -> None:
    from contextwise_reference import migrate

    catalog = Catalog(locale="fr")
    catalog.add("A name.", "", context="pkg.Name:summary")
    catalog.obsolete["old"] = Message("A name.", "Un nom.", context="pkg.page.Name:summary")
    catalog.obsolete["gone"] = Message("Gone.", "Parti.", context="pkg.page.Gone:summary")
    assert migrate.migrate(catalog, {"pkg.page.Name": "pkg.Name"}) == 1
    entry = catalog.get("A name.", context="pkg.Name:summary")
    assert entry is not None and entry.string == "Un nom." and not entry.fuzzy
    assert list(catalog.obsolete) == ["gone"]  # history that has no new entry stays
