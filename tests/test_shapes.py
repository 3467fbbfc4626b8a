"""Message shapes: each shape is recognised, measured exactly and paired by its own ids."""

from __future__ import annotations

import base64
import struct
import subprocess
import sys
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from contextwise import InvalidTypeError, InvalidValueError
from contextwise.shapes import (
    PartEstimate,
    image_size,
    image_tokens,
    message_shape,
    read_message,
    summary_message,
)


def png(width: int, height: int) -> bytes:
    """A real (tiny-payload) PNG header of the given size."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


# --- OpenAI Chat and Anthropic ---------------------------------------------------------------


def test_a_chat_message_measures_its_content_and_tool_calls() -> None:
    facts = read_message(
        {
            "role": "assistant",
            "content": "ok",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
            ],
        }
    )
    assert (facts.shape, facts.role, facts.chars, facts.calls) == (
        "openai-chat",
        "assistant",
        7,
        ["c1"],
    )


def test_an_anthropic_message_is_recognised_by_its_blocks() -> None:
    facts = read_message(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"}],
        }
    )
    assert facts.shape == "anthropic"
    assert facts.results == ["t1"]
    assert facts.only_results


def test_anthropic_redacted_thinking_is_estimated_and_the_signature_is_free() -> None:
    facts = read_message(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Hmm.", "signature": "s" * 100},
                {"type": "redacted_thinking", "data": "x" * 40},
            ],
        }
    )
    assert facts.chars == 4 + 30
    assert facts.estimated_parts == 1


def test_a_plain_text_document_is_text_and_a_pdf_is_a_file() -> None:
    text_doc = {"type": "document", "source": {"type": "text", "data": "abc"}, "title": "T"}
    pdf = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBER"},
    }
    assert read_message({"role": "user", "content": [text_doc]}).chars == 4
    facts = read_message({"role": "user", "content": [pdf]})
    assert (facts.chars, facts.estimated_parts) == (12_000, 1)


# --- OpenAI Responses ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "chars", "calls", "results"),
    [
        (
            {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"},
            5,
            ["c1"],
            [],
        ),
        ({"type": "function_call_output", "call_id": "c1", "output": "three"}, 5, [], ["c1"]),
        ({"type": "custom_tool_call", "call_id": "c2", "name": "sh", "input": "ls"}, 4, ["c2"], []),
        ({"type": "custom_tool_call_output", "call_id": "c2", "output": "a b"}, 3, [], ["c2"]),
        ({"type": "computer_call", "call_id": "c3", "action": {"type": "click"}}, 16, ["c3"], []),
        (
            {"type": "local_shell_call", "call_id": "c4", "action": {"command": ["ls"]}},
            18,
            ["c4"],
            [],
        ),
        ({"type": "local_shell_call_output", "id": "c4", "output": "ok"}, 2, [], ["c4"]),
        ({"type": "web_search_call", "id": "w", "action": {"query": "q"}}, 13, [], []),
        (
            {
                "type": "mcp_call",
                "id": "m",
                "server_label": "s",
                "name": "n",
                "arguments": "{}",
                "output": "out",
            },
            7,
            [],
            [],
        ),
        (
            {
                "type": "mcp_approval_request",
                "id": "a1",
                "server_label": "s",
                "name": "n",
                "arguments": "{}",
            },
            4,
            ["a1"],
            [],
        ),
        (
            {"type": "mcp_approval_response", "approval_request_id": "a1", "approve": True},
            0,
            [],
            ["a1"],
        ),
    ],
)
def test_responses_items_pair_by_call_id_and_measure_their_text(
    item: dict[str, object], chars: int, calls: list[str], results: list[str]
) -> None:
    facts = read_message(item)
    assert facts.shape == "openai-responses"
    assert (facts.chars, facts.calls, facts.results) == (chars, calls, results)


def test_a_function_call_output_is_no_longer_zero() -> None:
    output = {"type": "function_call_output", "call_id": "c1", "output": "x" * 500}
    facts = read_message(output)
    assert facts.chars == 500
    assert facts.role == "tool" and facts.only_results


def test_a_reasoning_item_leads_and_estimates_its_encrypted_content() -> None:
    facts = read_message(
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Plan."}],
            "encrypted_content": "e" * 800,
        }
    )
    assert facts.leads
    assert (facts.chars, facts.estimated_parts) == (5 + 600, 1)


def test_a_responses_message_reads_input_and_output_text_and_refusals() -> None:
    facts = read_message(
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "output_text", "text": "Hello", "annotations": []},
                {"type": "refusal", "refusal": "No"},
            ],
        }
    )
    assert (facts.shape, facts.chars) == ("openai-responses", 7)


def test_a_screenshot_output_is_an_estimated_image() -> None:
    facts = read_message(
        {
            "type": "computer_call_output",
            "call_id": "c3",
            "output": {"type": "computer_screenshot", "image_url": data_url(png(1024, 768))},
        }
    )
    assert facts.estimated_parts == 1
    assert facts.chars == image_tokens(1024, 768, "openai") * 4


# --- Gemini ----------------------------------------------------------------------------------


def test_gemini_pairs_by_id_else_by_name() -> None:
    call = read_message(
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "f", "args": {"x": 1}, "id": "g1"}},
                {"function_call": {"name": "g", "args": {}}},
            ],
        }
    )
    answer = read_message(
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "f", "id": "g1", "response": {"ok": True}}},
                {"function_response": {"name": "g", "response": {}}},
            ],
        }
    )
    assert call.calls == ["g1", ("name", "g")]
    assert answer.results == ["g1", ("name", "g")]
    assert answer.only_results and answer.role == "user"
    assert call.chars == len("f") + len('{"x":1}') + len("g") + len("{}")


def test_gemini_thoughts_count_their_text_but_not_their_signature() -> None:
    facts = read_message(
        {
            "role": "model",
            "parts": [
                {"text": "thinking...", "thought": True, "thoughtSignature": "sig" * 50},
                {"text": "Answer"},
            ],
        }
    )
    assert (facts.shape, facts.role, facts.chars) == ("gemini", "assistant", 17)


def test_gemini_inline_images_follow_gemini_rule() -> None:
    image = base64.b64encode(png(300, 200)).decode()
    facts = read_message(
        {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": image}}]}
    )
    assert (facts.chars, facts.estimated_parts) == (258 * 4, 1)


# --- LangChain -------------------------------------------------------------------------------


def test_langchain_messages_are_read_without_conversion() -> None:
    ai = AIMessage(content="", tool_calls=[{"id": "c1", "name": "add", "args": {"a": 1}}])
    tool = ToolMessage(content="1", tool_call_id="c1")
    assert read_message(SystemMessage("Be brief.")).role == "system"
    assert read_message(HumanMessage("Hi")).role == "user"
    facts = read_message(ai)
    assert (facts.shape, facts.role, facts.calls, facts.chars) == (
        "langchain",
        "assistant",
        ["c1"],
        len("add") + len('{"a":1}'),
    )
    assert read_message(tool).results == ["c1"]


def test_langchain_anthropic_blocks_and_tool_calls_count_once() -> None:
    ai = AIMessage(
        content=[{"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}}],
        tool_calls=[{"id": "t1", "name": "add", "args": {"a": 1}}],
    )
    assert read_message(ai).chars == len("add") + len('{"a":1}')


def test_a_langchain_chat_message_carries_its_role_and_unknown_ones_fail() -> None:
    assert read_message(ChatMessage(content="x", role="developer")).role == "developer"
    with pytest.raises(InvalidValueError) as caught:
        read_message(ChatMessage(content="x", role="robot"), 3)
    assert caught.value.code == "unknown_message_role"
    with pytest.raises(InvalidValueError):
        read_message(RemoveMessage(id="m1"))


# --- pydantic-ai -----------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # RetryPromptPart, still read
def test_pydantic_ai_requests_and_responses() -> None:
    system = read_message(ModelRequest(parts=[SystemPromptPart("Be brief."), UserPromptPart("Hi")]))
    assert (system.shape, system.role, system.chars) == ("pydantic-ai", "system", 11)
    call = read_message(
        ModelResponse(
            parts=[
                ThinkingPart("Let me add.", signature="sig"),
                ToolCallPart("add", {"a": 1}, "t1"),
            ]
        )
    )
    assert (call.role, call.calls, call.chars) == ("assistant", ["t1"], 11 + 3 + 7)
    result = read_message(ModelRequest(parts=[ToolReturnPart("add", {"sum": 1}, "t1")]))
    assert (result.role, result.results, result.chars, result.only_results) == (
        "tool",
        ["t1"],
        len('{"sum":1}'),
        True,
    )
    retry = read_message(
        ModelRequest(parts=[RetryPromptPart("bad", tool_name="add", tool_call_id="t1")])
    )
    assert retry.results == ["t1"]
    assert read_message(ModelResponse(parts=[TextPart("Done")])).chars == 4


def test_pydantic_ai_media_are_estimated() -> None:
    facts = read_message(
        ModelRequest(
            parts=[
                UserPromptPart(
                    [
                        "Look",
                        ImageUrl("https://example.com/a.png"),
                        BinaryContent(data=png(512, 512), media_type="image/png"),
                    ]
                )
            ]
        )
    )
    assert facts.estimated_parts == 2
    assert facts.chars == 4 + 1600 * 4 + image_tokens(512, 512, "openai") * 4


# --- errors and recognition ------------------------------------------------------------------


def test_a_message_without_a_role_is_a_coded_error() -> None:
    with pytest.raises(InvalidValueError) as caught:
        read_message({"content": "hi"}, 2)
    assert caught.value.code == "missing_message_role"
    assert caught.value.params["index"] == 2
    assert caught.value.render("fr") != caught.value.render("en")


@pytest.mark.parametrize(
    "message",
    [
        {"role": "robot", "content": "x"},
        {"role": "model", "content": "x"},
        {"role": "robot", "parts": []},
    ],
)
def test_an_unknown_role_is_a_coded_error(message: dict[str, object]) -> None:
    with pytest.raises(InvalidValueError) as caught:
        read_message(message)
    assert caught.value.code == "unknown_message_role"
    assert "robot" in caught.value.render("zh") or "model" in caught.value.render("zh")


def test_an_unknown_item_type_is_a_coded_error() -> None:
    with pytest.raises(InvalidValueError) as caught:
        read_message({"type": "teleport_call", "call_id": "x"})
    assert caught.value.code == "unknown_message_type"


def test_an_object_of_no_shape_is_a_type_error() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        read_message(42)
    assert caught.value.code == "message_not_a_mapping"


def test_message_shape_names_each_shape() -> None:
    assert [
        message_shape(m)
        for m in (
            {"role": "user", "content": "x"},
            {"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "u"}}]},
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": ""},
            {"role": "user", "parts": [{"text": "x"}]},
            HumanMessage("x"),
            ModelResponse(parts=[]),
        )
    ] == ["openai-chat", "anthropic", "openai-responses", "gemini", "langchain", "pydantic-ai"]


def test_importing_contextwise_imports_no_framework() -> None:
    code = (
        "import sys, contextwise, contextwise.shapes\n"
        "contextwise.shapes.read_message({'role': 'user', 'content': 'x'})\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'pydantic_ai')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- estimates -------------------------------------------------------------------------------


def test_image_sizes_are_read_from_png_jpeg_gif_and_webp() -> None:
    gif = b"GIF89a" + struct.pack("<HH", 33, 44)
    webp = (
        b"RIFF"
        + b"\x00" * 4
        + b"WEBPVP8X"
        + b"\x00" * 8
        + (99).to_bytes(3, "little")
        + (49).to_bytes(3, "little")
    )
    assert image_size(data_url(png(640, 480))) == (640, 480)
    assert image_size(base64.b64encode(jpeg(800, 600)).decode()) == (800, 600)
    assert image_size(gif) == (33, 44)
    assert image_size(webp) == (100, 50)
    assert image_size(b"plain bytes") is None


def test_provider_rules_follow_their_published_examples() -> None:
    # OpenAI: a 2048 x 4096 image scales to 768 x 1536, six tiles.
    assert image_tokens(2048, 4096, "openai") == 85 + 170 * 6
    # Anthropic: 1092 x 1092 is about 1590 tokens.
    assert image_tokens(1092, 1092, "anthropic") == 1590
    assert image_tokens(384, 384, "gemini") == 258


def test_the_estimate_is_configurable_and_validated() -> None:
    image = {
        "role": "user",
        "content": [
            {"type": "image_url", "image_url": {"url": data_url(png(1024, 1024)), "detail": "high"}}
        ],
    }
    assert read_message(image).chars == 765 * 4
    flat = PartEstimate(image_rules=False, image_tokens=10, chars_per_token=3)
    assert read_message(image, part_estimate=flat).chars == 30
    with pytest.raises(InvalidValueError) as caught:
        PartEstimate(audio_tokens=-1)
    assert caught.value.code == "invalid_part_estimate"
    with pytest.raises(InvalidValueError):
        PartEstimate(chars_per_token=0)


# --- summaries -------------------------------------------------------------------------------


def test_summaries_take_the_shape_of_the_message_they_replace() -> None:
    assert summary_message(
        "s", "user", {"type": "function_call", "call_id": "c", "name": "f", "arguments": ""}
    ) == {"type": "message", "role": "user", "content": "s"}
    assert summary_message("s", "assistant", {"role": "user", "parts": []}) == {
        "role": "model",
        "parts": [{"text": "s"}],
    }
    lc = summary_message("s", "system", HumanMessage("x"))
    assert isinstance(lc, SystemMessage) and lc.content == "s"
    pa = summary_message("s", "user", ModelResponse(parts=[]))
    assert isinstance(pa, ModelRequest) and isinstance(pa.parts[0], UserPromptPart)
    for shaped in (lc, pa, summary_message("s")):
        assert read_message(shaped).chars == 1


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"role": "tool", "tool_call_id": 1, "content": "r"}, "tool_call_id"),
        ({"role": "assistant", "content": None, "tool_calls": [
            {"id": 1, "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
         "tool_calls[0].id"),
        ({"role": "assistant", "content": [{"type": "tool_use", "id": 5, "name": "f",
                                             "input": {}}]}, "content[0].id"),
        ({"role": "user", "content": [{"type": "tool_result", "tool_use_id": 5,
                                        "content": "x"}]}, "content[0].tool_use_id"),
        ({"type": "function_call", "call_id": 7, "name": "f", "arguments": "{}"}, "call_id"),
        ({"type": "function_call_output", "call_id": 7, "output": "x"}, "call_id"),
        ({"role": "model", "parts": [{"functionCall": {"id": 3, "name": "f", "args": {}}}]},
         "parts[0].functionCall.id"),
    ],
)
def test_a_tool_call_id_that_is_not_a_string_is_a_coded_error_not_an_unpaired_call(
    message: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        read_message(message, 4)
    assert caught.value.code == "invalid_message_field"
    assert caught.value.params == {"index": 4, "field": field, "type_name": "int"}


@pytest.mark.parametrize(("text", "role"), [(float("nan"), "user"), (None, "user"), ("x", "bot")])
def test_a_summary_of_something_else_than_text_is_a_coded_error(text: object, role: str) -> None:
    with pytest.raises((InvalidTypeError, InvalidValueError)) as caught:
        summary_message(text, role)  # type: ignore[arg-type]
    assert caught.value.code in {"not_a_string", "invalid_choice"}


def test_a_plain_message_measures_as_every_field_read() -> None:
    """A plain message (read without building a record of each field) measures what reading
    each field measures; a message with one more field is read field by field."""
    plain: list[object] = [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "Use tools."},
        {"role": "user", "content": "héllo"},
        {"role": "assistant", "content": ""},
        SystemMessage(content="Be brief."),
        HumanMessage(content="Hi"),
        AIMessage(content="Hello"),
    ]
    for message in plain:
        facts = read_message(message)
        pieces: list[str] = []
        read = read_message(message, sink=pieces)  # a sink: every field is read
        assert (facts.shape, facts.role, facts.chars) == (read.shape, read.role, read.chars)
        assert facts.chars == sum(map(len, pieces))
    unusual: list[object] = [
        {"role": "user", "content": "Hi", "refusal": "No."},
        {"role": "assistant", "content": "Hi", "function_call": {"name": "f", "arguments": "{}"}},
        {"role": "tool", "content": "4"},
        AIMessage(content="", tool_calls=[{"id": "c1", "name": "f", "args": {}}]),
    ]
    for message in unusual:
        assert read_message(message).chars == read_message(message, sink=[]).chars
    assert read_message(unusual[0]).chars == len("Hi") + len("No.")
    assert read_message(unusual[3]).calls == ["c1"]


_ROLES = st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "bot"])
_VALUES = st.one_of(st.text(max_size=12), st.none(), st.integers(), st.lists(st.text(), max_size=2))


@given(
    role=st.one_of(_ROLES, _VALUES),
    content=st.one_of(st.text(max_size=40), _VALUES),
    extra=st.dictionaries(st.sampled_from(["refusal", "name", "type"]), st.text(max_size=5)),
)
@settings(max_examples=300, deadline=None)
def test_any_small_dict_reads_the_same_with_or_without_the_plain_answer(
    role: object, content: object, extra: dict[str, str]
) -> None:
    """Whatever the plain check answers, reading a message gives what reading every field
    gives (a sink makes read_message read every field)."""
    message = {"role": role, "content": content, **extra}
    try:
        expected = read_message(message, sink=[])
    except (InvalidTypeError, InvalidValueError) as error:
        with pytest.raises(type(error)) as caught:
            read_message(message)
        assert caught.value.code == error.code
        return
    facts = read_message(message)
    assert (facts.shape, facts.role, facts.chars) == (expected.shape, expected.role, expected.chars)
