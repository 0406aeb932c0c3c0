"""The bank format: frozen dataclasses of one YAML deck file, validated by pydantic.

A deck file is a mapping::

    deck: kv-basics            # a short name for the file
    description: ...           # optional
    questions:
      - id: kv-bytes-per-request
        kind: numeric          # numeric | concept | choice | order
        topic: kv-cache
        difficulty: 2          # 1 easy, 2 medium, 3 hard
        tags: [gqa]
        prompt: "A model with {layers} layers ..."
        ...

Text fields of numeric questions (`prompt`, `solution`, feedback) may hold
placeholders `{name}` or `{name:spec}` naming a param or derived value; spec is
a unit symbol understood by `drill.quantities.units.format_quantity` (`GiB`, `ms`, `bytes`,
...) or a Python number format (`,`, `.2f`). `{{` and `}}` are literal braces.
Expressions (`answer`, `derived`, misconception `expr`) are evaluated by
`drill.quantities.expr`, never by Python.

Bounds, so that a bank that loads can always be drawn, shown and stored: every
number a param can draw is finite and at most MAX_PARAM_ABS (1e15) in size; a
range holds at most MAX_RANGE_VALUES (1,000,000) values; a number format in a
template is at most 40 characters wide with at most 20 digits of precision
(`drill.quantities.render`); a tolerance is finite and not negative, and `sig` is 1 to 15.
"""

from __future__ import annotations

# Plain dataclasses keep `import drill.bank.schema` cheap: building pydantic models
# costs more than a warm quiz start. Validation happens only in the adapters
# below, which import pydantic when first used. The annotations are strings
# until then; the pydantic names they mention (Field, Tag, Param, ...) are put
# into this module's namespace by `_define_validation_names` just before
# pydantic reads them.
import math
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union

from drill.quantities.dimensions import NAMES

if TYPE_CHECKING:
    from pydantic import AfterValidator, Field, TypeAdapter

    # for readers and linters; the real types are made by _define_validation_names
    Param = Any
    Question = Any
    GpuKey = str

ID_PATTERN = r"^[a-z0-9][a-z0-9-]*[a-z0-9]$"
NAME_PATTERN = r"^[a-z_][a-z0-9_]*$"

# The dimensions an answer can have (drill.quantities.dimensions): the answer expression of a
# numeric question yields a value in the base unit of its dimension.
Unit = Literal[NAMES]  # type: ignore[valid-type]

# Every record refuses keys it does not know; pydantic reads this when validating.
_CONFIG = {"extra": "forbid"}
if TYPE_CHECKING:
    from typing_extensions import dataclass_transform

    @dataclass_transform(frozen_default=True, kw_only_default=True)
    def _record(cls: type) -> type: ...

else:
    _record = dataclass(frozen=True, kw_only=True)

MAX_PARAM_ABS = 10**15
HINT_HELP = (
    "Shown on the quiz's first `h`, pointing the way without giving the answer; concept, "
    "choice and order questions need one (`kvdrill bank lint`). A numeric template's formula "
    "gives two more hints after it: in words, then with the draw's numbers."
)
MAX_RANGE_VALUES = 1_000_000
MAX_TOLERANCE_SIG = 15


def _param_number(value: float, what: str = "") -> float:
    """A number a param may draw: finite and at most MAX_PARAM_ABS in size."""
    if not math.isfinite(value):
        raise ValueError(f"{what}{value} is not a finite number")
    if abs(value) > MAX_PARAM_ABS:
        shown = f"{value:.6g}".replace("e+", "e")
        raise ValueError(f"{what}{shown} is too large: a param is at most 1e15 in size")
    return value


def _param_choices(choices: list[int | float | str]) -> list[int | float | str]:
    for choice in choices:
        if not isinstance(choice, str):
            _param_number(choice, "the choice ")
    return choices


def _template(text: str) -> str:
    """Template text whose number formats are small enough to render."""
    from drill.quantities.render import template_problem

    problem = template_problem(text)
    if problem:
        raise ValueError(problem)
    return text


@_record
class RangeParam:
    """An integer (or float) drawn uniformly from `range` (inclusive) in `step`s.

    Both ends and the step are finite and at most 1e15 in size; the range holds at
    most 1,000,000 values.
    """

    __pydantic_config__ = _CONFIG

    range: tuple[
        Annotated[float, AfterValidator(_param_number)],
        Annotated[float, AfterValidator(_param_number)],
    ]
    step: Annotated[float, AfterValidator(_param_number)] = 1

    def __post_init__(self) -> None:
        lo, hi = self.range
        if hi < lo:
            raise ValueError(f"range [{lo}, {hi}] is empty")
        if self.step <= 0:
            raise ValueError("step must be positive")
        if (hi - lo) / self.step >= MAX_RANGE_VALUES:
            raise ValueError(
                f"range [{lo:g}, {hi:g}] in steps of {self.step:g} holds more than "
                f"{MAX_RANGE_VALUES:,} values; use a larger step"
            )


@_record
class ChoiceParam:
    """One value drawn from `choices` (numbers, or strings for display-only params).

    Numbers are finite and at most 1e15 in size.
    """

    __pydantic_config__ = _CONFIG

    choices: Annotated[list[int | float | str], Field(min_length=1), AfterValidator(_param_choices)]


@_record
class PresetParam:
    """A real model drawn from `preset` (names in `drill/serving/presets.yaml`).

    A preset param named `m` exposes `m_layers`, `m_kv_heads`, `m_q_heads`,
    `m_head_dim`, `m_hidden`, `m_dtype_bytes`, `m_params` (parameter count) and
    `m_active` (the parameters one token passes through: `m_params` unless a mixture
    of experts) to expressions, and `{m}` in text renders the model's display name.
    """

    __pydantic_config__ = _CONFIG

    preset: Annotated[list[str], Field(min_length=1)]


def _gpu_key(key: str) -> str:
    """A key of drill.serving.gpus.GPU_SPECS, written exactly as `kvdrill kv --gpu` lists it."""
    from drill.errors import ConfigError
    from drill.serving.gpus import GPU_SPECS, gpu_named

    if any(spec.key == key for spec in GPU_SPECS):
        return key
    try:
        spec = gpu_named(key)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    raise ValueError(f"unknown GPU {key!r}; write it {spec.key!r}")


@_record
class GpuParam:
    """A real GPU drawn from `gpu` (keys of `drill/serving/gpus.py`, as `kvdrill kv --gpu` takes).

    A gpu param named `g` exposes `g_memory` (bytes), `g_bandwidth` (memory bytes/s)
    and `g_flops` (dense BF16 FLOP/s) from the GPU's spec sheet to expressions, and
    `{g}` in text renders the GPU's display name. An unknown key is an error when
    the bank loads.
    """

    __pydantic_config__ = _CONFIG

    gpu: Annotated[list[GpuKey], Field(min_length=1)]


def _run_field(name: str) -> str:
    """A field of drill.serving.measured.RUN_FIELDS."""
    from drill.errors import did_you_mean
    from drill.serving.measured import RUN_FIELDS

    if name in RUN_FIELDS:
        return name
    hint = did_you_mean(name, list(RUN_FIELDS)) or f"known: {', '.join(RUN_FIELDS)}"
    raise ValueError(f"unknown run field {name!r}; {hint}")


@_record
class RunParam:
    """A number (or name) from the user's latest stored run: `run: engine.decode_ms`
    (the fields are drill.serving.measured.RUN_FIELDS).

    A template with a run param is asked only when that run is stored; lint and `bank
    coverage` check it with a fixed example run.
    """

    __pydantic_config__ = _CONFIG

    run: Annotated[str, AfterValidator(_run_field)]


@_record
class MeasuredParam(ChoiceParam):
    """A run param filled in with its one measured value (drill.bank.run_params): drawn as
    a one-value `choices`; a figure quoted for context (the run's number, a second measured
    figure) may appear in the texts without feeding the answer."""

    run: str


def _param_kind(value: object) -> str | None:
    """Which kind of param a mapping is, from the key that defines it.

    Choosing by key (rather than trying each model in turn) means a typo in a
    param is reported once, against the model the author meant.
    """
    if isinstance(value, dict):
        for key, tag in (
            ("range", "RangeParam"),
            ("choices", "ChoiceParam"),
            ("preset", "PresetParam"),
            ("gpu", "GpuParam"),
            ("run", "RunParam"),
        ):
            if key in value:
                return tag
        return None
    kinds = (RangeParam, ChoiceParam, PresetParam, GpuParam, RunParam)
    return type(value).__name__ if isinstance(value, kinds) else None


@_record
class Tolerance:
    """How close an answer must be. Exactly one of rel, abs, sig; default 1 % relative.

    rel and abs are finite and not negative; sig (significant figures) is 1 to 15. Bank
    lint holds it to the question's words (drill.kinds.numeric_wording): at least ±5 %
    where the question asks "roughly" or "about", and a precision stated in the text where
    it is tighter than ±1 %.
    """

    __pydantic_config__ = _CONFIG
    DEFAULT_REL: ClassVar[float] = 0.01

    rel: float | None = None
    abs: float | None = None
    sig: int | None = None

    def __post_init__(self) -> None:
        given = [v for v in (self.rel, self.abs, self.sig) if v is not None]
        if len(given) != 1:
            raise ValueError("tolerance needs exactly one of rel, abs, sig")
        for name, value in (("rel", self.rel), ("abs", self.abs)):
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ValueError(f"tolerance {name} must be a finite number >= 0, not {value}")
        if self.sig is not None and not 1 <= self.sig <= MAX_TOLERANCE_SIG:
            raise ValueError(
                f"tolerance sig must be 1 to {MAX_TOLERANCE_SIG} figures, not {self.sig}"
            )

    @classmethod
    def default(cls) -> Tolerance:
        """1 % relative: what a question without a `tolerance` gets."""
        return cls(rel=cls.DEFAULT_REL)

    def accepts(self, value: float, target: float) -> bool:
        """Whether `value` counts as `target`."""
        if self.abs is not None:
            return abs(value - target) <= self.abs
        if self.sig is not None:
            return _round_sig(value, self.sig) == _round_sig(target, self.sig)
        return abs(value - target) <= self.relative_to(target) * abs(target)

    def relative_to(self, expected: float) -> float:
        """This tolerance as a relative one around `expected`, for checks by ratio."""
        if self.rel is not None:
            return self.rel
        if self.sig is not None:
            return 0.5 * 10 ** (1 - self.sig)
        if self.abs is not None and expected:
            return max(self.abs / abs(expected), 1e-9)
        return self.DEFAULT_REL

    def describe(self, unit: str | None) -> str:
        """One sentence for an answer key: "Accepted within ±1 %." (`unit`: a dimension)."""
        if self.abs is not None:
            from drill.quantities.units import format_in

            return f"Accepted within ±{format_in(self.abs, unit)}."
        if self.sig is not None:
            return f"Accepted to {self.sig} significant figures."
        rel = self.rel if self.rel is not None else self.DEFAULT_REL
        return f"Accepted within ±{100 * rel:g} %."


def _round_sig(x: float, sig: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, sig - 1 - math.floor(math.log10(abs(x))))


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be blank")
    return text


@_record
class HarmlessSlip:
    """A slip of the template's formula that may give exactly the right answer on some
    draws, and why that does no harm (`kvdrill bank lint` names each slip it derives).

    Lint reports such a draw unless the template lists the slip here; a slip that is
    accepted without being exact is always reported.
    """

    __pydantic_config__ = _CONFIG

    slip: Annotated[str, AfterValidator(_not_blank)]
    why: Annotated[str, AfterValidator(_not_blank)]


@_record
class Tie:
    """Which of two named wrong answers the grader names when an answer matches both.

    Two of a template's misconceptions that give one value on some draw (within the
    tolerance) fail lint, since the grader can name only one of them; a tie says that this
    is known and which one is named: `prefer` over `over`, and `why` (the likelier
    mistake, or the one whose feedback covers the other).
    """

    __pydantic_config__ = _CONFIG

    prefer: Annotated[str, Field(pattern=ID_PATTERN)]
    over: Annotated[str, Field(pattern=ID_PATTERN)]
    why: Annotated[str, AfterValidator(_not_blank)]


@_record
class Misconception:
    """A wrong way to the answer: if the user's value matches `expr`, say so.

    `id` names an entry of the misconception catalogue
    (`question_bank/misconceptions.yaml`); `feedback` overrides its text here.
    """

    __pydantic_config__ = _CONFIG

    id: Annotated[str, Field(pattern=ID_PATTERN)]
    expr: str
    feedback: Annotated[str, AfterValidator(_template)] | None = None


@_record
class WrongClaim:
    """A wrong claim about a key point: any of `cues` in an answer, not negated, marks the
    point missed, and the verdict names `claim` ("Careful: ...").

    Cues are matched as a key point's are (`KeyPoint`). Write the claim as a person would
    make it: "speculative decoding speeds up prefill".
    """

    __pydantic_config__ = _CONFIG

    cues: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    claim: Annotated[str, Field(min_length=1)]


@_record
class KeyPoint:
    """One thing a good answer covers: any of `cues` in the user's text shows it, unless
    it is negated there or the text makes one of the point's `wrong` claims.

    Cues are matched as words, whatever their form ("queued" matches the cue "queue"),
    and a cue under negation or contrast does not count ("not TTFT", "TPOT rather than
    TTFT", "doesn't include queueing"). A point that denies something lists the denial
    among its cues ("does not speed up prefill").
    """

    __pydantic_config__ = _CONFIG

    point: str
    cues: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    wrong: list[WrongClaim] = field(default_factory=list)


def _chain_values(values: dict[str, Any]) -> dict[str, Any]:
    for name, value in values.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            _param_number(value, f"{name}: ")
    return values


CHAIN_HELP = (
    "An interview's follow-ups on this template (`kvdrill interview`): the same problem asked "
    "again with one thing changed. `start` fixes params of this template when it opens the "
    "chain; each follow-up names the numeric question asked next (default: this one), what it "
    "changes, and the words the interviewer says. Every other param of the follow-up is "
    "carried over from the questions before it in the chain (`kvdrill bank lint` checks it)."
)


@_record
class FollowUp:
    """One follow-up of a chain: `question` asked with the chain's numbers so far, except
    what `change` sets.

    `change` maps params of the follow-up to a number, or to an expression over the
    values of the questions before it in the chain (`q_heads / 8`), and a gpu param to
    one of its GPU keys (`g: h200`). Every other param
    of the follow-up is carried over from those questions. `ask` is what the
    interviewer says, rendered with the follow-up's values: "Now the cache is FP8.
    How much does that request hold now?"
    """

    __pydantic_config__ = _CONFIG

    ask: Annotated[str, Field(min_length=1), AfterValidator(_template)]
    question: Annotated[str, Field(pattern=ID_PATTERN)] | None = None
    change: Annotated[
        dict[
            Annotated[str, Field(pattern=NAME_PATTERN)],
            int | float | str,
        ],
        Field(min_length=1),
        AfterValidator(_chain_values),
    ]


@_record
class Chain:
    """A numeric template's follow-ups in an interview, asked in order, each one on the
    numbers of the questions before it with one thing changed."""

    __pydantic_config__ = _CONFIG

    # params of this template fixed when it opens the chain (values it can draw; a gpu
    # param by one of its GPU keys)
    start: Annotated[
        dict[
            Annotated[str, Field(pattern=NAME_PATTERN)],
            int | float | str,
        ],
        AfterValidator(_chain_values),
    ] = field(default_factory=dict)
    follow_ups: Annotated[list[FollowUp], Field(min_length=1)]


@_record
class _Question:
    __pydantic_config__ = _CONFIG

    id: Annotated[str, Field(pattern=ID_PATTERN)]
    topic: Annotated[str, Field(pattern=ID_PATTERN)]
    difficulty: Literal[1, 2, 3] = 2
    tags: list[str] = field(default_factory=list)
    prompt: Annotated[str, Field(min_length=1)]
    explanation: str | None = None
    # shown on the quiz's first `h`; concept, choice and order questions need one (lint)
    hint: Annotated[str | None, Field(description=HINT_HELP)] = None


@_record
class NumericQuestion(_Question):
    kind: Literal["numeric"]
    # the texts rendered with each draw's numbers (also `hint` and misconception feedback)
    prompt: Annotated[str, Field(min_length=1), AfterValidator(_template)]
    explanation: Annotated[str, AfterValidator(_template)] | None = None
    params: dict[Annotated[str, Field(pattern=NAME_PATTERN)], Param] = field(default_factory=dict)
    # name -> expression over params and earlier derived names, in order
    derived: dict[Annotated[str, Field(pattern=NAME_PATTERN)], str] = field(default_factory=dict)
    answer: str
    unit: Unit
    # the unit symbol the expected value is shown in (e.g. GiB, ms); default: best fit
    show_as: str | None = None
    tolerance: Tolerance = Tolerance.default()
    solution: Annotated[list[Annotated[str, AfterValidator(_template)]], Field(min_length=1)]
    misconceptions: list[Misconception] = field(default_factory=list)
    hint: Annotated[
        Annotated[str, AfterValidator(_template)] | None, Field(description=HINT_HELP)
    ] = None
    # slips of the formula that may give exactly the answer, each with its reason
    harmless_slips: list[HarmlessSlip] = field(default_factory=list)
    # named wrong answers that may give one value, and which of the two the grader names
    ties: list[Tie] = field(default_factory=list)
    # an interview's follow-ups on this template, one thing changed at a time
    chain: Annotated[Chain | None, Field(description=CHAIN_HELP)] = None


@_record
class ConceptQuestion(_Question):
    kind: Literal["concept"]
    answer: Annotated[str, Field(min_length=1)]
    key_points: Annotated[list[KeyPoint], Field(min_length=1)]
    # names of engine_check claims that a measurement can back
    evidence: list[str] = field(default_factory=list)


@_record
class ChoiceOption:
    __pydantic_config__ = _CONFIG

    text: Annotated[str, Field(min_length=1)]
    correct: bool = False
    why: str | None = None


def _one_correct(options: list[ChoiceOption]) -> list[ChoiceOption]:
    if not any(o.correct for o in options):
        raise ValueError("at least one option must be correct")
    return options


@_record
class ChoiceQuestion(_Question):
    kind: Literal["choice"]
    options: Annotated[list[ChoiceOption], Field(min_length=2), AfterValidator(_one_correct)]


@_record
class OrderQuestion(_Question):
    kind: Literal["order"]
    # the items in their correct order; they are shown shuffled
    items: Annotated[list[str], Field(min_length=2)]


QUESTION_TYPES: dict[str, type] = {
    "numeric": NumericQuestion,
    "concept": ConceptQuestion,
    "choice": ChoiceQuestion,
    "order": OrderQuestion,
}


@_record
class DeckFile:
    __pydantic_config__ = _CONFIG

    deck: Annotated[str, Field(pattern=ID_PATTERN)]
    description: str | None = None
    questions: Annotated[list[Question], Field(min_length=1)]


# --------------------------------------------------------------------------- validation


def _define_validation_names() -> None:
    """Bind the pydantic names the annotations above use, and the Param and Question types."""
    namespace = globals()
    if "Question" in namespace:
        return
    from pydantic import AfterValidator, Discriminator, Field, Tag

    namespace.update(AfterValidator=AfterValidator, Discriminator=Discriminator, Field=Field)
    namespace["Tag"] = Tag
    from drill.serving.gpus import GPU_SPECS

    keys: list[Any] = [spec.key for spec in GPU_SPECS]  # JSON values, for the schema
    namespace["GpuKey"] = Annotated[
        str, AfterValidator(_gpu_key), Field(json_schema_extra={"enum": keys})
    ]
    namespace["Param"] = Annotated[
        Annotated[RangeParam, Tag("RangeParam")]
        | Annotated[ChoiceParam, Tag("ChoiceParam")]
        | Annotated[PresetParam, Tag("PresetParam")]
        | Annotated[GpuParam, Tag("GpuParam")]
        | Annotated[RunParam, Tag("RunParam")],
        Discriminator(
            _param_kind,
            custom_error_type="param_kind",
            custom_error_message="a param needs one of the keys range, choices, preset, gpu or run",
        ),
    ]
    namespace["Question"] = Annotated[
        Union[tuple(QUESTION_TYPES.values())],  # noqa: UP007 (the table's types, not written out)
        Field(discriminator="kind"),
    ]


def __getattr__(name: str) -> Any:
    # `Param` and `Question` are pydantic types: made on first use, not on import
    if name in ("Param", "Question", "GpuKey", "Field", "Tag", "Discriminator", "AfterValidator"):
        _define_validation_names()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def question_adapter() -> TypeAdapter:
    """A pydantic TypeAdapter validating one question mapping into its dataclass."""
    from pydantic import TypeAdapter

    _define_validation_names()
    return TypeAdapter(globals()["Question"])


@cache
def deck_adapter() -> TypeAdapter:
    """A pydantic TypeAdapter of a whole deck file (for its JSON Schema)."""
    from pydantic import TypeAdapter

    _define_validation_names()
    return TypeAdapter(DeckFile)
