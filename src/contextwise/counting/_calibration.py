"""Token counts calibrated against what the provider reports: :class:`CalibratedCounter`.

The package :mod:`contextwise.counting` documents it and re-exports its public names.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from contextwise._checks import whole_number
from contextwise._translation import short_repr
from contextwise.accounting import Usage, usage_from  # noqa: F401 - Usage: the examples
from contextwise.counting._tokens import (
    SCRIPTS,
    EstimateCounter,
    Script,
    TokenCounter,
    as_token_counter,
    check_count,
    estimate_by_script,
)
from contextwise.errors import InvalidTypeError, InvalidValueError
from contextwise.messages import message_text

__all__ = ["CALIBRATION_STATE_VERSION", "CalibratedCounter", "ModelCounter", "counter_key"]

CALIBRATION_STATE_VERSION = 1
"""The version of the state's layout; a state of another version is refused."""

_FEATURES = (*SCRIPTS, "messages", "call")
_FEATURES_OF_ESTIMATE_2 = ("latin", "han", "kana", "hangul", "digits", "code", "messages", "call")
_FROM_ESTIMATE_2 = [_FEATURES.index(name) for name in _FEATURES_OF_ESTIMATE_2]
_PRIOR = tuple([1.0] * len(SCRIPTS) + [0.0, 0.0])
_PRIOR_WEIGHT = 0.5
"""How many observations the prior is worth."""

_RECENT_TEXTS = 4096
"""How many texts' measures a counter remembers (the messages of the calls in flight)."""

_SYSTEM_KEYS = ("system", "instructions", "system_instruction", "systemInstruction")
_MESSAGE_KEYS = ("messages", "input", "contents")


def counter_key(counter: object) -> str:
    """The name a stored count is kept under: the counter's ``id``, and its ``version`` when it
    has one (``estimate@3``), so that a count made by another version is measured again.

    Args:
        counter: A token counter.

    Returns:
        The key.

    Examples:
        >>> from contextwise import EstimateCounter, counter_key
        >>> counter_key(EstimateCounter())
        'estimate@3'
    """
    name = str(getattr(counter, "id", type(counter).__name__))
    version = getattr(counter, "version", None)
    return name if version is None else f"{name}@{version}"


class _Fit:
    """One model's sufficient statistics: the normal equations of the relative fit."""

    __slots__ = ("matrix", "observations", "vector")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        size = len(_FEATURES)
        self.observations = 0
        self.matrix = [[0.0] * size for _ in range(size)]
        self.vector = [0.0] * size
        if data is not None:
            self.observations = int(data["observations"])
            matrix = [[float(value) for value in row] for row in data["matrix"]]
            vector = [float(value) for value in data["vector"]]
            # A state of version 2 of the estimate knew fewer scripts: each keeps its statistics
            # and a script it did not know starts from the prior.
            where = list(range(size)) if len(vector) == size else _FROM_ESTIMATE_2
            known = len(where)
            if len(vector) != known or len(matrix) != known or any(len(r) != known for r in matrix):
                raise InvalidValueError("invalid_calibration_state", reason="wrong size")
            for position, index in enumerate(where):
                self.vector[index] = vector[position]
                for value, column in zip(matrix[position], where, strict=True):
                    self.matrix[index][column] = value

    def add(self, features: Sequence[float], tokens: int) -> None:
        scaled = [value / tokens for value in features]
        for row, first in zip(self.matrix, scaled, strict=True):
            for column, second in enumerate(scaled):
                row[column] += first * second
        for index, value in enumerate(scaled):
            self.vector[index] += value
        self.observations += 1

    def solve(self) -> list[float]:
        """The coefficients: ratios and overheads of zero or more (a coefficient the fit would
        make negative, as collinear requests allow, is held at 0 and the others fitted again)."""
        size = len(_FEATURES)
        count = max(self.observations, 1)
        pinned: set[int] = set()
        while True:
            system = [row[:] for row in self.matrix]
            target = self.vector[:]
            for index in range(size):
                weight = _PRIOR_WEIGHT * (self.matrix[index][index] / count + 1e-9)
                system[index][index] += weight
                target[index] += weight * _PRIOR[index]
            for index in pinned:
                system[index] = [0.0] * size
                system[index][index] = 1.0
                target[index] = 0.0
                for row in range(size):
                    if row != index:
                        system[row][index] = 0.0
            solution = _solve(system, target)
            negative = {index for index, value in enumerate(solution) if value < 0.0} - pinned
            if not negative:
                return solution
            pinned |= negative

    def to_json(self) -> dict[str, Any]:
        return {"observations": self.observations, "matrix": self.matrix, "vector": self.vector}


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Solve a small symmetric positive definite system by Gaussian elimination."""
    size = len(vector)
    rows = [[*row, value] for row, value in zip(matrix, vector, strict=True)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda index: abs(rows[index][column]))
        rows[column], rows[pivot] = rows[pivot], rows[column]
        head = rows[column][column]
        if head == 0.0:
            continue
        for index in range(column + 1, size):
            factor = rows[index][column] / head
            if factor:
                pivot_row = rows[column]
                rows[index] = [a - factor * b for a, b in zip(rows[index], pivot_row, strict=True)]
    solution = [0.0] * size
    for index in reversed(range(size)):
        head = rows[index][index]
        rest = sum(rows[index][col] * solution[col] for col in range(index + 1, size))
        solution[index] = 0.0 if head == 0.0 else (rows[index][size] - rest) / head
    return solution


class CalibratedCounter:
    """Token counts calibrated per model against the usage the provider reports.

    Give it a base counter (the estimate by default, or any tokenizer), then after each model
    call ``observe(request, usage, model=...)``. ``predict(request, model=...)`` then says how
    many input tokens the provider will bill for a request, and ``for_model(name)`` is a
    :class:`~contextwise.TokenCounter` for one model, to give to a policy, a budget or a
    session. Several models are calibrated apart in one counter.

    Args:
        base: The counter the calibration starts from: a token counter, a tokenizer or a
            counting function; the estimate of :func:`~contextwise.estimate_tokens` when
            omitted.
        state: A state that :meth:`state` returned, to go on from.

    Raises:
        InvalidTypeError: When ``base`` cannot count (code ``invalid_tokenizer``).
        InvalidValueError: When ``state`` is not a calibration state for this base counter
            (code ``invalid_calibration_state``).

    Examples:
        >>> from contextwise import CalibratedCounter, Usage
        >>> counter = CalibratedCounter()
        >>> request = {"system": "Be brief.", "messages": [
        ...     {"role": "user", "content": "What changed in the budget guide?"}]}
        >>> for _ in range(3):
        ...     _ = counter.observe(request, Usage(input_tokens=30), model="m")
        >>> counter.predict(request, model="m")
        30
        >>> counter.for_model("m").id
        'calibrated:m'
    """

    def __init__(self, base: object | None = None, *, state: Mapping[str, Any] | None = None):
        self._base: TokenCounter = EstimateCounter() if base is None else as_token_counter(base)
        self._fits: dict[str, _Fit] = {}
        self._solved: dict[str, list[float]] = {}
        # A harness sends the same messages at every call: each text is measured once.
        self._recent: dict[str, dict[Script, float]] = {}
        if state is not None:
            self.load_state(state)

    @property
    def base(self) -> TokenCounter:
        """The counter the calibration starts from."""
        return self._base

    @property
    def base_key(self) -> str:
        """The base counter's id and version, as :func:`counter_key` writes them."""
        return counter_key(self._base)

    def models(self) -> list[str]:
        """The models observed so far."""
        return sorted(self._fits)

    def observations(self, model: str) -> int:
        """How many calls of a model were observed.

        Args:
            model: The model's name.

        Returns:
            The number of calls, 0 for a model never observed.
        """
        _check_model(model)
        fit = self._fits.get(model)
        return 0 if fit is None else fit.observations

    # --- measuring -----------------------------------------------------------------------------

    def base_by_script(self, text: str) -> dict[Script, float]:
        """The base counter's count of a text, split by script.

        The estimate splits its own count; another base counter's count is split in the shares
        the estimate gives each script.

        Args:
            text: The text.

        Returns:
            The base tokens of each script the text holds.
        """
        if not isinstance(text, str):
            raise InvalidTypeError("not_a_string", name="text", type_name=type(text).__name__)
        cached = self._recent.get(text)
        if cached is None:
            cached = self._split(text)
            if len(self._recent) >= _RECENT_TEXTS:
                self._recent.clear()
            self._recent[text] = cached
        return dict(cached)

    def _split(self, text: str) -> dict[Script, float]:
        shares = estimate_by_script(text)
        if isinstance(self._base, EstimateCounter):
            return {script: float(tokens) for script, tokens in shares.items()}
        total = check_count(self._base.count(text), counter_key(self._base))
        whole = sum(shares.values())
        if not whole:
            return {"code": float(total)} if total else {}
        return {script: total * tokens / whole for script, tokens in shares.items()}

    def features(self, request: Any) -> list[float]:
        """What the fit sees of a request: its base tokens per script, its number of messages,
        and 1 for the call.

        Args:
            request: The whole request: a mapping with the keyword arguments of the provider's
                call (``system`` or ``instructions``, ``tools``, ``messages``, ``input`` or
                ``contents``), a list of messages, or a text.

        Returns:
            The features, in the order of the scripts, then messages, then the call.

        Raises:
            InvalidTypeError: When the request is none of these (code ``invalid_request``).
        """
        totals = dict.fromkeys(SCRIPTS, 0.0)
        messages = 0
        for text, is_message in _request_texts(request):
            for script, tokens in self.base_by_script(text).items():
                totals[script] += tokens
            messages += is_message
        return [*(totals[script] for script in SCRIPTS), float(messages), 1.0]

    # --- fitting -------------------------------------------------------------------------------

    def _coefficients(self, model: str) -> list[float]:
        solved = self._solved.get(model)
        if solved is None:
            fit = self._fits.get(model)
            solved = list(_PRIOR) if fit is None else fit.solve()
            self._solved[model] = solved
        return solved

    def observe(self, request: Any, usage: Any, *, model: str) -> float:
        """Learn from one call: the whole request and the usage the provider reported.

        Args:
            request: The whole request, as :meth:`features` takes it.
            usage: The call's usage, or anything :func:`~contextwise.usage_from` reads.
            model: The model that served the call.

        Returns:
            The relative error of the prediction made before this call was learnt:
            ``(predicted - billed) / billed``, ``0.0`` when nothing was billed.

        Raises:
            InvalidTypeError: When the request or the usage cannot be read.
            InvalidValueError: When the usage reports more than 2⁶³ − 1 input tokens (code
                ``out_of_range``), which no call bills; nothing is learnt from it.
        """
        _check_model(model)
        billed = whole_number(usage_from(usage).input_tokens, "input_tokens")
        features = self.features(request)
        predicted = _dot(self._coefficients(model), features)
        if billed <= 0:
            return 0.0
        self._fits.setdefault(model, _Fit()).add(features, billed)
        self._solved.pop(model, None)
        return (predicted - billed) / billed

    def predict(self, request: Any, *, model: str) -> int:
        """The input tokens the provider will bill for a request, as calibrated so far.

        Args:
            request: The whole request, as :meth:`features` takes it.
            model: The model that will serve it.

        Returns:
            The predicted input tokens, rounded up.
        """
        _check_model(model)
        return max(0, math.ceil(_dot(self._coefficients(model), self.features(request)) - 1e-9))

    def ratios(self, model: str) -> dict[Script, float]:
        """The fitted ratio of each script: billed tokens per base token.

        Args:
            model: The model.

        Returns:
            The ratio of each script (``1.0`` for a script never seen).
        """
        _check_model(model)
        coefficients = self._coefficients(model)
        return dict(zip(SCRIPTS, coefficients, strict=False))

    def overheads(self, model: str) -> tuple[float, float]:
        """The fitted overheads: tokens per message and tokens per call.

        Args:
            model: The model.

        Returns:
            The per-message and the per-call overhead, in tokens.
        """
        _check_model(model)
        coefficients = self._coefficients(model)
        return coefficients[-2], coefficients[-1]

    def for_model(self, name: str) -> ModelCounter:
        """The counter of one model: calibrated counts with its ratios.

        Args:
            name: The model's name.

        Returns:
            A token counter whose ``id`` is ``calibrated:<name>``.
        """
        _check_model(name)
        return ModelCounter(self, name)

    # --- state ---------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The calibration as a plain dict (JSON): what a session store keeps.

        Returns:
            The state: its version, the base counter's key, and each model's statistics.
        """
        return {
            "version": CALIBRATION_STATE_VERSION,
            "base": self.base_key,
            "models": {name: fit.to_json() for name, fit in sorted(self._fits.items())},
        }

    def load_state(self, state: Mapping[str, Any], *, models: Sequence[str] | None = None) -> None:
        """Take a state that :meth:`state` returned, replacing what is known of its models.

        Args:
            state: The state.
            models: Only these models; all the state's models when omitted.

        Raises:
            InvalidValueError: When the state is malformed, of another version, or made with
                another base counter (code ``invalid_calibration_state``).
        """
        try:
            if state.get("version") != CALIBRATION_STATE_VERSION:
                raise ValueError(f"version {state.get('version')!r}")
            if state.get("base") != self.base_key:
                raise ValueError(f"base counter {state.get('base')!r}, not {self.base_key!r}")
            loaded = {name: _Fit(data) for name, data in dict(state["models"]).items()}
        except InvalidValueError:
            raise
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise InvalidValueError("invalid_calibration_state", reason=str(exc)) from None
        for name, fit in loaded.items():
            if models is None or name in models:
                self._fits[name] = fit
                self._solved.pop(name, None)

    def __repr__(self) -> str:
        return f"CalibratedCounter({self._base!r}, models={self.models()!r})"


class ModelCounter:
    """The token counter of one model of a :class:`CalibratedCounter`.

    ``count(text)`` is the base count of each script times the model's ratio.
    ``scale(base_tokens)`` calibrates a count the base counter made earlier (a session stores
    base counts, so that they never go stale), with the per-message overhead. The per-call
    overhead is in :attr:`overheads`.

    Examples:
        >>> from contextwise import CalibratedCounter
        >>> counter = CalibratedCounter().for_model("m")
        >>> counter.count("Hello, world!"), counter.scale(10)
        (4, 10)
    """

    __slots__ = ("_calibrated", "_model")

    def __init__(self, calibrated: CalibratedCounter, model: str) -> None:
        self._calibrated = calibrated
        self._model = model

    @property
    def id(self) -> str:
        """``calibrated:`` followed by the model's name."""
        return f"calibrated:{self._model}"

    @property
    def model(self) -> str:
        """The model's name."""
        return self._model

    @property
    def calibrated(self) -> CalibratedCounter:
        """The calibrated counter it belongs to."""
        return self._calibrated

    @property
    def base(self) -> TokenCounter:
        """The base counter."""
        return self._calibrated.base

    @property
    def overheads(self) -> tuple[float, float]:
        """The model's per-message and per-call overheads, in tokens."""
        return self._calibrated.overheads(self._model)

    def count(self, text: str) -> int:
        """Count a text's tokens: each script's base count times the model's ratio.

        Args:
            text: The text.

        Returns:
            The calibrated count, rounded up.

        Raises:
            InvalidTypeError: When the text is not a string (code ``not_a_string``).
        """
        if not isinstance(text, str):
            raise InvalidTypeError("not_a_string", name="text", type_name=type(text).__name__)
        ratios = self._calibrated.ratios(self._model)
        by_script = self._calibrated.base_by_script(text)
        return max(0, math.ceil(sum(ratios[s] * t for s, t in by_script.items()) - 1e-9))

    def scale(self, base_tokens: int) -> int:
        """Calibrate one message's count made by the base counter.

        The ratio is the one the model's last fit gives to the mix of scripts it has seen,
        plus the per-message overhead.

        Args:
            base_tokens: The base counter's count of the message.

        Returns:
            The calibrated count, rounded up.
        """
        whole_number(base_tokens, "base_tokens")
        return max(0, math.ceil(base_tokens * self.mean_ratio() + self.overheads[0] - 1e-9))

    def mean_ratio(self) -> float:
        """The model's ratio over the mix of scripts observed: billed per base token."""
        fit = self._calibrated._fits.get(self._model)
        ratios = self._calibrated.ratios(self._model)
        if fit is None or not fit.observations:
            return 1.0
        weights = [max(fit.vector[index], 0.0) for index in range(len(SCRIPTS))]
        whole = sum(weights)
        if not whole:
            return 1.0
        return sum(ratios[s] * w for s, w in zip(SCRIPTS, weights, strict=True)) / whole

    def observe(self, request: Any, usage: Any) -> float:
        """Learn from one call of this model; see :meth:`CalibratedCounter.observe`.

        Args:
            request: The whole request.
            usage: The call's usage.

        Returns:
            The relative error of the prediction made before this call was learnt.
        """
        return self._calibrated.observe(request, usage, model=self._model)

    def predict(self, request: Any) -> int:
        """The input tokens the provider will bill for a request; see
        :meth:`CalibratedCounter.predict`.

        Args:
            request: The whole request.

        Returns:
            The predicted input tokens.
        """
        return self._calibrated.predict(request, model=self._model)

    def __repr__(self) -> str:
        return f"ModelCounter(model={self._model!r})"


def _dot(first: Sequence[float], second: Sequence[float]) -> float:
    return sum(a * b for a, b in zip(first, second, strict=True))


def _check_model(model: object) -> None:
    if not isinstance(model, str):
        raise InvalidTypeError("not_a_string", name="model", type_name=type(model).__name__)
    if not model.strip():
        raise InvalidValueError("blank_value", field="model", value=short_repr(model))


def _request_texts(request: Any) -> list[tuple[str, bool]]:
    """The texts of a request, each with whether it is a message."""
    if isinstance(request, str):
        return [(request, False)]
    if isinstance(request, list | tuple):
        return [(message_text(message), True) for message in request]
    if not isinstance(request, Mapping):
        raise InvalidTypeError("invalid_request", type_name=type(request).__name__)
    texts: list[tuple[str, bool]] = []
    for key in _SYSTEM_KEYS:
        system = request.get(key)
        if isinstance(system, str):
            texts.append((system, False))
        elif system is not None:
            texts.append((json.dumps(system, ensure_ascii=False, default=str), False))
    tools = request.get("tools")
    if tools:
        texts.append((json.dumps(tools, ensure_ascii=False, default=str), False))
    for key in _MESSAGE_KEYS:
        messages = request.get(key)
        if isinstance(messages, str):
            texts.append((messages, True))
        elif isinstance(messages, list | tuple):
            texts.extend((message_text(message), True) for message in messages)
    return texts


