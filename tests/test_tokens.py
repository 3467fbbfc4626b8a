"""Token counting: the estimate, the TokenCounter protocol, the adapters and a real tokenizer."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import contextwise
from contextwise import (
    CallableCounter,
    EstimateCounter,
    InvalidTypeError,
    InvalidValueError,
    TokenCounter,
    TokenizerCounter,
    as_token_counter,
    count_tokens,
    estimate_by_script,
    estimate_tokens,
)
from contextwise.counting import SCRIPTS
from tests.support.tokenizers import tokenizer_folder

ROOT = Path(__file__).resolve().parents[1]

# --- The estimate --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 1),
        ("Summarize the meeting notes.", 7),
        ("上下文预算", 6),
        ("コンテキスト", 8),
        ("컨텍스트", 6),
        ("12345678", 4),
        ("préférée", 6),
        ("DEFAULT_MIN_CONFIDENCE", 7),
        ("Straßenbahnhaltestelle", 13),
        ("zażółć", 10),
        ("Привет, мир", 9),
        ("Καλημέρα", 11),
        ("مرحبا بالعالم", 14),
        ("שלום עולם", 10),
        ("नमस्ते दुनिया", 17),
        ("สวัสดีครับ", 20),
        ("🙋\u200d♂️🎉", 12),
        ("dGhpcyBpcyBiYXNlNjQgZGF0YSBmb3IgYSB0ZXN0", 30),
        ("9899960707f6e0ef1f6c0af7bc74ba38635ab468", 30),
    ],
)
def test_the_estimate_prices_each_script(text: str, expected: int) -> None:
    assert estimate_tokens(text) == expected


@pytest.mark.parametrize(
    ("text", "scripts"),
    [
        ("Привет, мир", {"cyrillic", "code"}),
        ("Καλημέρα", {"greek"}),
        ("مرحبا", {"arabic"}),
        ("שלום", {"hebrew"}),
        ("नमस्ते", {"indic"}),
        ("สวัสดีครับ", {"thai"}),
        ("Բարեւ", {"letters"}),
        ("🎉✨", {"symbols"}),
        ("dGhpcyBpcyBiYXNlNjQgZGF0YSBmb3IgYSB0ZXN0", {"encoded"}),
        # A long identifier without the mix of encoded data is cut into words.
        ("DEFAULT_MIN_CONFIDENCE_LEVEL", {"latin", "code"}),
    ],
)
def test_the_estimate_tells_each_script_apart(text: str, scripts: set[str]) -> None:
    assert set(estimate_by_script(text)) == scripts


@given(st.text())
def test_property_the_estimate_is_the_sum_of_its_scripts_rounded_up(text: str) -> None:
    by_script = estimate_by_script(text)
    assert set(by_script) <= set(SCRIPTS)
    assert all(count > 0 for count in by_script.values())
    total = estimate_tokens(text)
    assert total <= sum(by_script.values()) < total + len(SCRIPTS)
    assert EstimateCounter().count(text) == total == count_tokens(text)
    assert (total == 0) == (text == "")


@given(st.text(), st.text())
def test_property_the_estimate_of_a_longer_text_is_not_smaller(text: str, more: str) -> None:
    assert estimate_tokens(text + "\n" + more) >= estimate_tokens(text)


def test_the_estimate_stays_within_its_bounds_on_every_document() -> None:
    """On every document of benchmarks/corpus (prose in fifteen languages, code, data, logs, ids,
    base64, URLs, emoji), every guide of each language and every module of the source, against
    four real tokenizers read offline from a wheel's files: at least 0.95 x and at most 1.6 x the
    largest count. benchmarks/bench_tokens.py prints the table."""
    from tools.tokenizers import GOAL_OVER_LARGEST, GOAL_UNDER_LARGEST, measure

    tokenizer_folder()
    rows = measure()
    assert {row.group for row in rows} == {
        "Corpus", "English guides", "French guides", "Chinese guides", "Python source"
    }
    for row in rows:
        assert row.to_largest >= GOAL_UNDER_LARGEST, (row.path, row.counts, row.estimate)
        assert row.to_largest <= GOAL_OVER_LARGEST, (row.path, row.counts, row.estimate)
    corpus = [row for row in rows if row.group == "Corpus"]
    # Each corpus document holds at least 200 tokens under every tokenizer.
    assert all(min(row.counts.values()) >= 200 for row in corpus)
    assert {row.kind for row in corpus} >= {
        "prose", "code", "data", "logs", "ids", "encoded", "urls", "chat"
    }


# Prose of each script of the corpus, and each kind of text the estimate tells apart.
CORPUS_SCRIPTS = {
    "prose-en.txt": "latin", "prose-fr.txt": "latin", "prose-de.txt": "latin",
    "prose-pl.txt": "latin", "prose-vi.txt": "latin", "prose-ru.txt": "cyrillic",
    "prose-uk.txt": "cyrillic", "prose-el.txt": "greek", "prose-ar.txt": "arabic",
    "prose-he.txt": "hebrew", "prose-hi.txt": "indic", "prose-th.txt": "thai",
    "prose-zh.txt": "han", "prose-ja.txt": "kana", "prose-ko.txt": "hangul",
    "encoded-base64.txt": "encoded", "ids-hashes.txt": "encoded", "chat-emoji.txt": "symbols",
}


@pytest.mark.parametrize(("name", "script"), sorted(CORPUS_SCRIPTS.items()))
def test_each_corpus_document_is_mostly_of_its_script(name: str, script: str) -> None:
    text = (ROOT / "benchmarks" / "corpus" / name).read_text(encoding="utf-8")
    by_script = estimate_by_script(text)
    top = sorted(by_script, key=lambda found: -by_script[found])
    # Japanese prose is kana and kanji; the chat's words are Latin beside its emoji.
    assert script in top[:2], (name, by_script)


def test_the_corpus_is_described_in_its_readme() -> None:
    folder = ROOT / "benchmarks" / "corpus"
    readme = (folder / "README.md").read_text(encoding="utf-8")
    names = sorted(path.name for path in folder.glob("*.txt"))
    assert len(names) >= 25
    assert all(f"`{name}`" in readme for name in names)
    assert len({name for name in names if name.startswith("prose-")}) >= 12


@pytest.mark.parametrize("value", [None, 12, b"bytes", ["a"]])
def test_estimate_refuses_what_is_not_text(value: object) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        estimate_tokens(value)  # type: ignore[arg-type]
    assert caught.value.code == "not_a_string"
    assert caught.value.params == {"name": "text", "type_name": type(value).__name__}


def test_estimate_counter() -> None:
    counter = EstimateCounter()
    assert counter.id == "estimate"
    assert isinstance(counter, TokenCounter)
    assert counter == EstimateCounter() and hash(counter) == hash(EstimateCounter())
    assert repr(counter) == "EstimateCounter()"


# --- The protocol --------------------------------------------------------------------------------


class WordCounter:
    id = "words"

    def count(self, text: str) -> int:
        return len(text.split())


def test_protocol_is_checked_at_run_time() -> None:
    assert isinstance(WordCounter(), TokenCounter)
    assert isinstance(CallableCounter(len), TokenCounter)
    assert not isinstance("text", TokenCounter)  # str has count but no id
    assert not isinstance(len, TokenCounter)


# --- TokenizerCounter ----------------------------------------------------------------------------


class ListTokenizer:
    """tiktoken's shape: encode returns a list of ids; the encoding has a name."""

    name = "fake_base"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def encode(self, text: str, **kwargs: Any) -> list[int]:
        self.calls.append((text, kwargs))
        return [len(word) for word in text.split()]


class Encoding:
    def __init__(self, ids: list[int]) -> None:
        self.ids = ids


class IdsTokenizer:
    """Hugging Face tokenizers' shape: encode returns an Encoding with ids."""

    def encode(self, text: str) -> Encoding:
        return Encoding(list(range(len(text))))


def test_tokenizer_counter_counts_a_list_of_ids() -> None:
    tokenizer = ListTokenizer()
    counter = TokenizerCounter(tokenizer)
    assert counter.id == "fake_base"
    assert counter.tokenizer is tokenizer
    assert counter.count("one two three") == 3
    assert counter.count("") == 0
    assert isinstance(counter, TokenCounter)


def test_tokenizer_counter_counts_an_encoding_with_ids() -> None:
    counter = TokenizerCounter(IdsTokenizer())
    assert counter.id == "IdsTokenizer"
    assert counter.count("hello") == 5


def test_tokenizer_counter_passes_encode_kwargs_and_id() -> None:
    tokenizer = ListTokenizer()
    counter = TokenizerCounter(tokenizer, id="gpt-x", encode_kwargs={"add_special_tokens": False})
    assert counter.id == "gpt-x"
    counter.count("a b")
    assert tokenizer.calls == [("a b", {"add_special_tokens": False})]
    assert "gpt-x" in repr(counter)


def test_tokenizer_counter_refuses_an_object_without_encode() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        TokenizerCounter(object())
    assert caught.value.code == "invalid_tokenizer"
    assert caught.value.params == {"type_name": "object"}


def test_tokenizer_counter_refuses_a_non_string_id() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        TokenizerCounter(ListTokenizer(), id=3)  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.params["name"]) == ("not_a_string", "id")


@pytest.mark.parametrize("result", [42, None, "tokens", b"ids", 3.5])
def test_tokenizer_counter_refuses_an_encode_result_without_ids(result: object) -> None:
    class Odd:
        def encode(self, text: str) -> object:
            return result

    with pytest.raises(InvalidTypeError) as caught:
        TokenizerCounter(Odd(), id="odd").count("x")
    assert caught.value.code == "invalid_encode_result"
    assert caught.value.params == {"counter_id": "odd", "type_name": type(result).__name__}


def test_tokenizer_counter_refuses_non_text() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        TokenizerCounter(ListTokenizer()).count(["a", "b"])  # type: ignore[arg-type]
    assert caught.value.code == "not_a_string"


def test_a_tokenizer_error_propagates_unchanged() -> None:
    class Failing:
        def encode(self, text: str) -> list[int]:
            raise RuntimeError("tokenizer broke")

    with pytest.raises(RuntimeError, match="tokenizer broke"):
        TokenizerCounter(Failing()).count("x")


# --- CallableCounter -----------------------------------------------------------------------------


def test_callable_counter_uses_the_function_and_its_name() -> None:
    def words(text: str) -> int:
        return len(text.split())

    counter = CallableCounter(words)
    assert counter.id == "words"
    assert counter.count("a b c") == 3
    assert CallableCounter(lambda text: 0).id == "<lambda>"
    assert CallableCounter(len, id="chars").id == "chars"


class IndexLike:
    """An integer type that is not int, such as NumPy's, accepted through __index__."""

    def __index__(self) -> int:
        return 7


def test_callable_counter_accepts_integer_types() -> None:
    assert CallableCounter(lambda text: IndexLike(), id="np").count("x") == 7  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize("result", [-1, 2.0, 2.5, True, False, "3", None, math.nan])
def test_callable_counter_refuses_results_that_are_not_whole_numbers(result: object) -> None:
    counter = CallableCounter(lambda text: result, id="bad")  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidValueError) as caught:
        counter.count("text")
    assert caught.value.code == "invalid_counter_result"
    assert caught.value.params == {"counter_id": "bad", "value": repr(result)}


def test_callable_counter_refuses_what_cannot_be_called() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        CallableCounter(5)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_tokenizer"


# --- as_token_counter and count_tokens -----------------------------------------------------------


def test_as_token_counter_returns_a_counter_as_it_is() -> None:
    counter = WordCounter()
    assert as_token_counter(counter) is counter
    estimate = EstimateCounter()
    assert as_token_counter(estimate) is estimate


def test_as_token_counter_wraps_tokenizers_and_functions() -> None:
    assert isinstance(as_token_counter(ListTokenizer()), TokenizerCounter)
    assert isinstance(as_token_counter(len), CallableCounter)
    assert as_token_counter(lambda text: len(text.split())).count("Summarize the notes.") == 3


def test_as_token_counter_prefers_encode_over_calling() -> None:
    class CallableTokenizer(ListTokenizer):
        def __call__(self, text: str) -> dict[str, list[int]]:
            return {"input_ids": [1, 2, 3]}

    counter = as_token_counter(CallableTokenizer())
    assert isinstance(counter, TokenizerCounter)
    assert counter.count("one two") == 2


@pytest.mark.parametrize("value", [None, 3, "tokenizer", object()])
def test_as_token_counter_refuses_anything_else(value: object) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        as_token_counter(value)
    assert caught.value.code == "invalid_tokenizer"
    assert caught.value.params == {"type_name": type(value).__name__}


def test_count_tokens_checks_the_result_of_any_counter() -> None:
    class Broken:
        id = "broken"

        def count(self, text: str) -> int:
            return -3

    assert count_tokens("one two three", WordCounter()) == 3
    with pytest.raises(InvalidValueError) as caught:
        count_tokens("text", Broken())
    assert caught.value.params == {"counter_id": "broken", "value": "-3"}
    with pytest.raises(InvalidTypeError):
        count_tokens(None)  # type: ignore[arg-type]


def test_errors_render_in_french_and_chinese() -> None:
    with pytest.raises(InvalidValueError) as caught:
        CallableCounter(lambda text: -1, id="bad").count("x")
    for locale in ("fr", "zh"):
        rendered = caught.value.render(locale)
        assert rendered and "{" not in rendered
    assert caught.value.code == "invalid_counter_result"


def test_public_names_are_exported() -> None:
    names = (
        "CallableCounter",
        "EstimateCounter",
        "TokenCounter",
        "TokenizerCounter",
        "as_token_counter",
        "count_tokens",
        "estimate_tokens",
    )
    for name in names:
        assert name in contextwise.__all__
        assert getattr(contextwise, name) is getattr(contextwise.counting, name)


# --- A real tokenizer ----------------------------------------------------------------------------


def _packaged_vocabulary() -> Path:
    """The legacy Claude BPE tokenizer shipped inside the litellm wheel.

    ``make tokenizers`` unpacks the wheel's tokenizer files into a cache (tools/tokenizers.py):
    without them the test skips, naming that command. Nothing is downloaded here, and litellm is
    neither installed nor imported. It is the vocabulary that anthropic wheels up to 0.38 shipped
    as ``anthropic/tokenizer.json``.
    """
    return tokenizer_folder() / "anthropic_tokenizer.json"


def test_a_real_tokenizer_from_a_packaged_vocabulary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_packaged_vocabulary()))
    assert tokenizer.get_vocab_size() == 65_000
    counter = as_token_counter(tokenizer)
    assert isinstance(counter, TokenizerCounter)
    assert counter.id == "Tokenizer"
    named = TokenizerCounter(tokenizer, id="claude-legacy")
    expected = {
        "": 0,
        "Hello, world!": 4,
        "The quick brown fox jumps over the lazy dog.": 10,
        '{"a": [1, 2, 3]}': 10,
        "上下文预算": 5,
    }
    for text, tokens in expected.items():
        assert named.count(text) == tokens, text
        assert count_tokens(text, tokenizer) == tokens
    # The estimate is conservative: at or a little over this tokenizer, in every script.
    for text, tokens in expected.items():
        assert tokens <= estimate_tokens(text) <= 1.5 * tokens, text


def test_contextwise_never_imports_a_tokenizer_library() -> None:
    code = (
        "import sys, contextwise\n"
        "contextwise.as_token_counter(len).count('x')\n"
        "print(sorted(m for m in ('tokenizers', 'tiktoken', 'transformers', 'anthropic')"
        " if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
