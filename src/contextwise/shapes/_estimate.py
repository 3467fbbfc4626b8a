"""Estimates for the parts of a message that have no text: images, audio, video, files, and
encrypted reasoning.

Such a part still takes room in the model's context, so it is never counted as zero. Its size is
an estimate in characters, the unit in which contextwise measures messages: a figure in tokens is
turned into characters at :attr:`PartEstimate.chars_per_token` characters a token, the ratio of
:func:`~contextwise.estimate_tokens`.
"""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from contextwise._checks import finite_float, whole_number
from contextwise._translation import short_repr
from contextwise.errors import InvalidTypeError, InvalidValueError

PartKind: TypeAlias = Literal["image", "audio", "video", "file", "encrypted"]
"""The kinds of parts that are measured by an estimate."""

ImageRule: TypeAlias = Literal["openai", "anthropic", "gemini"]
"""The provider whose published image-token rule applies to an image."""

_SNIFF_CHARS: Final = 87_384
"""Base64 characters decoded at most to find an image's size (64 KiB of data)."""


@dataclass(frozen=True, slots=True)
class PartEstimate:
    """How the parts of a message that have no text are measured.

    An image whose width and height can be read from its data (a base64 PNG, JPEG, GIF or WebP
    image, inline in the message) is measured by the image-token rule that its provider publishes:

    - OpenAI (the Chat and Responses shapes, and the framework objects): 85 tokens with
      ``detail: "low"``; otherwise the image is scaled to fit in 2048 x 2048, then so that its
      shorter side is at most 768 pixels, and costs 85 tokens plus 170 tokens for each 512-pixel
      tile;
    - Anthropic: the image is scaled so that its longer side is at most 1568 pixels and its area
      at most about 1.2 megapixels (784 x 1568, the largest size Anthropic lists), and costs
      ``width x height / 750`` tokens;
    - Gemini: 258 tokens when both sides are at most 384 pixels, otherwise 258 tokens for each tile,
      the tile side being two thirds of the shorter side, between 256 and 768 pixels.

    Any other image (a URL, a file id, data in an unknown format) counts :attr:`image_tokens`.
    Audio, video and files count a flat figure, and encrypted reasoning counts a share of the
    length of its encrypted text. Each figure can be changed: pass your own instance wherever a
    ``part_estimate`` is taken.

    Raises:
        InvalidValueError: When a figure is negative, or ``chars_per_token`` is not positive
            (code ``invalid_part_estimate``).

    Examples:
        >>> from contextwise import PartEstimate, message_chars
        >>> image = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
        >>> message_chars({"role": "user", "content": [image]})
        6400
        >>> message_chars({"role": "user", "content": [image]},
        ...               part_estimate=PartEstimate(image_tokens=1000))
        4000
    """

    image_tokens: int = 1600
    """The tokens of an image whose size is unknown: the most that Anthropic charges for one
    image, more than OpenAI and Gemini charge for an image of about one megapixel."""

    audio_tokens: int = 1920
    """The tokens of an audio part: one minute at the 32 tokens a second that Gemini publishes."""

    video_tokens: int = 15780
    """The tokens of a video part: one minute at the 263 tokens a second that Gemini publishes."""

    file_tokens: int = 3000
    """The tokens of a file or document part (a PDF, for example): one page at the upper bound
    that Anthropic publishes for a page."""

    encrypted_ratio: float = 0.75
    """The characters counted for each character of encrypted reasoning (the ``encrypted_content``
    of a Responses ``reasoning`` item, the ``data`` of an Anthropic ``redacted_thinking``
    block): base64 text holds three bytes in four characters."""

    chars_per_token: float = 4.0
    """The characters that one token of the figures above stands for."""

    image_rules: bool = True
    """Whether an image of known size is measured by its provider's rule; when false, every image
    counts :attr:`image_tokens`."""

    def __post_init__(self) -> None:
        for name in ("image_tokens", "audio_tokens", "video_tokens", "file_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidValueError(
                    "invalid_part_estimate", field=name, value=short_repr(value)
                )
            whole_number(value, name)  # no larger than any count contextwise takes
        for name in ("encrypted_ratio", "chars_per_token"):
            value = getattr(self, name)
            number = finite_float(value)
            if number is None or number < 0 or (name == "chars_per_token" and number == 0):
                raise InvalidValueError(
                    "invalid_part_estimate", field=name, value=short_repr(value)
                )

    def flat_chars(self, kind: PartKind) -> int:
        """Return the characters of a part of this kind whose size is unknown.

        Args:
            kind: ``"image"``, ``"audio"``, ``"video"`` or ``"file"``; ``"encrypted"`` counts 0,
                since encrypted reasoning is measured from its text.

        Returns:
            The flat figure of that kind, in characters.

        Examples:
            >>> from contextwise import PartEstimate
            >>> PartEstimate().flat_chars("audio")
            7680
        """
        if kind not in _KINDS:
            raise InvalidValueError(
                "invalid_choice", field="kind", expected=list(_KINDS), value=short_repr(kind)
            )
        tokens = {
            "image": self.image_tokens,
            "audio": self.audio_tokens,
            "video": self.video_tokens,
            "file": self.file_tokens,
        }.get(kind, 0)
        return self.to_chars(tokens)

    def to_chars(self, tokens: int) -> int:
        """Return the characters that stand for a number of tokens.

        Args:
            tokens: A number of tokens.

        Returns:
            ``ceil(tokens * chars_per_token)``.

        Examples:
            >>> from contextwise import PartEstimate
            >>> PartEstimate().to_chars(85)
            340
        """
        whole_number(tokens, "tokens")
        return math.ceil(tokens * self.chars_per_token)

    def encrypted_chars(self, text: str) -> int:
        """Return the characters counted for a piece of encrypted reasoning.

        Args:
            text: The encrypted text, as the provider returned it.

        Returns:
            ``ceil(len(text) * encrypted_ratio)``.

        Examples:
            >>> from contextwise import PartEstimate
            >>> PartEstimate().encrypted_chars("x" * 400)
            300
        """
        if not isinstance(text, str):
            raise InvalidTypeError("not_a_string", name="text", type_name=type(text).__name__)
        return math.ceil(len(text) * self.encrypted_ratio)

    def image_chars(self, data: str | bytes | None, rule: ImageRule, detail: object = None) -> int:
        """Return the characters counted for an image.

        Args:
            data: The image's data, as base64 text (a ``data:`` URL included) or bytes; ``None``
                when the message holds only a URL or a file id.
            rule: The provider whose image-token rule applies.
            detail: The OpenAI ``detail`` of the image (``"low"``, ``"high"``, ``"auto"``).

        Returns:
            The image's tokens by the provider's rule when its size can be read, otherwise
            :attr:`image_tokens`, in characters.

        Examples:
            >>> from contextwise import PartEstimate
            >>> PartEstimate().image_chars(None, "openai")
            6400
            >>> PartEstimate().image_chars(None, "openai", detail="low")
            340
        """
        _check_rule(rule)
        if rule == "openai" and detail == "low" and self.image_rules:
            return self.to_chars(85)
        size = image_size(data) if self.image_rules and data is not None else None
        if size is None:
            return self.to_chars(self.image_tokens)
        return self.to_chars(image_tokens(size[0], size[1], rule))


_KINDS: Final = ("image", "audio", "video", "file", "encrypted")
_RULES: Final = ("openai", "anthropic", "gemini")


def _check_rule(rule: object) -> None:
    if rule not in _RULES:
        raise InvalidValueError(
            "invalid_choice", field="rule", expected=list(_RULES), value=short_repr(rule)
        )


def image_tokens(width: int, height: int, rule: ImageRule) -> int:
    """Return the tokens of an image of a given size by a provider's published rule.

    See :class:`PartEstimate` for the three rules.

    Args:
        width: The image's width in pixels.
        height: The image's height in pixels.
        rule: ``"openai"`` (high detail), ``"anthropic"`` or ``"gemini"``.

    Returns:
        The number of tokens.

    Examples:
        >>> image_tokens(1024, 1024, "openai"), image_tokens(1000, 1000, "anthropic")
        (765, 1334)
        >>> image_tokens(300, 200, "gemini"), image_tokens(1024, 1024, "gemini")
        (258, 1032)
    """
    _check_rule(rule)
    w = float(max(whole_number(width, "width"), 1))
    h = float(max(whole_number(height, "height"), 1))
    if rule == "anthropic":
        scale = min(1.0, 1568 / max(w, h), math.sqrt(1_229_312 / (w * h)))
        return math.ceil(round(w * scale) * round(h * scale) / 750)
    if rule == "gemini":
        if w <= 384 and h <= 384:
            return 258
        unit = min(768.0, max(256.0, float(math.floor(min(w, h) / 1.5))))
        return 258 * math.ceil(w / unit) * math.ceil(h / unit)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def image_size(data: str | bytes) -> tuple[int, int] | None:
    """Read an image's width and height from the start of its data.

    PNG, GIF, WebP and JPEG images are read; only the first 64 KiB are decoded.

    Args:
        data: Base64 text (a ``data:`` URL included) or the image's bytes.

    Returns:
        ``(width, height)``, or ``None`` when the format is not recognised.

    Examples:
        >>> import base64, struct
        >>> png = b"\\x89PNG\\r\\n\\x1a\\n" + struct.pack(">I4sII", 13, b"IHDR", 640, 480)
        >>> image_size(base64.b64encode(png).decode())
        (640, 480)
        >>> image_size("not an image") is None
        True
    """
    if not isinstance(data, str | bytes | bytearray | memoryview):
        raise InvalidTypeError(
            "not_an_instance", name="data", expected="str | bytes", type_name=type(data).__name__
        )
    head = _head_bytes(data)
    if head is None:
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp_size(head)
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _head_bytes(data: str | bytes) -> bytes | None:
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data[: _SNIFF_CHARS * 3 // 4])
    if data.startswith("data:"):
        marker = data.find(";base64,", 0, 200)
        if marker < 0:
            return None
        data = data[marker + 8 :]
    head = data[:_SNIFF_CHARS]
    head = head[: len(head) - len(head) % 4]
    try:
        return base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        return (
            int.from_bytes(head[24:27], "little") + 1,
            int.from_bytes(head[27:30], "little") + 1,
        )
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(head) >= 30:
        return (
            int.from_bytes(head[26:28], "little") & 0x3FFF,
            int.from_bytes(head[28:30], "little") & 0x3FFF,
        )
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    position = 2
    while position + 9 < len(head):
        if head[position] != 0xFF:
            return None
        marker = head[position + 1]
        if marker == 0xFF:
            position += 1
            continue
        length = int.from_bytes(head[position + 2 : position + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height = int.from_bytes(head[position + 5 : position + 7], "big")
            width = int.from_bytes(head[position + 7 : position + 9], "big")
            return width, height
        position += 2 + length
    return None


DEFAULT_PART_ESTIMATE: Final = PartEstimate()
"""The estimate used when none is given."""
