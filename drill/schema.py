"""The bank format: pydantic models of one YAML deck file.

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
a unit symbol understood by `drill.units.format_quantity` (`GiB`, `ms`, `bytes`,
...) or a Python number format (`,`, `.2f`). `{{` and `}}` are literal braces.
Expressions (`answer`, `derived`, misconception `expr`) are evaluated by
`drill.expr`, never by Python.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

ID_PATTERN = r"^[a-z0-9][a-z0-9-]*[a-z0-9]$"
NAME_PATTERN = r"^[a-z_][a-z0-9_]*$"

# The dimensions an answer can have. The answer expression of a numeric
# question yields a value in the base unit of its dimension.
#   bytes: bytes      seconds: s        bytes_per_s: B/s     flop: FLOP
#   flop_per_s: FLOP/s                  tokens: tokens       tokens_per_s: tokens/s
#   requests: requests                  fraction: a ratio 0..1 (answered as 0.75, 3/4 or 75%)
#   flop_per_byte: FLOP/B               count: a plain number
Unit = Literal[
    "bytes",
    "seconds",
    "bytes_per_s",
    "flop",
    "flop_per_s",
    "tokens",
    "tokens_per_s",
    "requests",
    "fraction",
    "flop_per_byte",
    "count",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RangeParam(_Model):
    """An integer (or float) drawn uniformly from `range` (inclusive) in `step`s."""

    range: tuple[float, float]
    step: float = 1

    @model_validator(mode="after")
    def _check(self) -> RangeParam:
        lo, hi = self.range
        if hi < lo:
            raise ValueError(f"range [{lo}, {hi}] is empty")
        if self.step <= 0:
            raise ValueError("step must be positive")
        return self


class ChoiceParam(_Model):
    """One value drawn from `choices` (numbers, or strings for display-only params)."""

    choices: list[int | float | str] = Field(min_length=1)


class PresetParam(_Model):
    """A real model drawn from `preset` (names in `drill/presets.yaml`).

    A preset param named `m` exposes `m_layers`, `m_kv_heads`, `m_q_heads`,
    `m_head_dim`, `m_hidden`, `m_dtype_bytes` and `m_params` (parameter count)
    to expressions, and `{m}` in text renders the model's display name.
    """

    preset: list[str] = Field(min_length=1)


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
        ):
            if key in value:
                return tag
        return None
    return (
        type(value).__name__ if isinstance(value, (RangeParam, ChoiceParam, PresetParam)) else None
    )


Param = Annotated[
    Annotated[RangeParam, Tag("RangeParam")]
    | Annotated[ChoiceParam, Tag("ChoiceParam")]
    | Annotated[PresetParam, Tag("PresetParam")],
    Discriminator(
        _param_kind,
        custom_error_type="param_kind",
        custom_error_message="a param needs one of the keys range, choices or preset",
    ),
]


class Tolerance(_Model):
    """How close an answer must be. Exactly one of rel, abs, sig; default 1 % relative."""

    rel: float | None = None
    abs: float | None = None
    sig: int | None = None

    @model_validator(mode="after")
    def _one(self) -> Tolerance:
        given = [v for v in (self.rel, self.abs, self.sig) if v is not None]
        if len(given) != 1:
            raise ValueError("tolerance needs exactly one of rel, abs, sig")
        return self


class Misconception(_Model):
    """A wrong way to the answer: if the user's value matches `expr`, say so.

    `id` names an entry of the misconception catalogue
    (`question_bank/misconceptions.yaml`); `feedback` overrides its text here.
    """

    id: Annotated[str, Field(pattern=ID_PATTERN)]
    expr: str
    feedback: str | None = None


class KeyPoint(_Model):
    """One thing a good answer covers; any of `cues` in the user's text shows it."""

    point: str
    cues: list[str] = Field(min_length=1)


class _Question(_Model):
    id: Annotated[str, Field(pattern=ID_PATTERN)]
    topic: Annotated[str, Field(pattern=ID_PATTERN)]
    difficulty: Literal[1, 2, 3] = 2
    tags: list[str] = []
    prompt: str = Field(min_length=1)
    explanation: str | None = None


class NumericQuestion(_Question):
    kind: Literal["numeric"]
    params: dict[Annotated[str, Field(pattern=NAME_PATTERN)], Param] = {}
    # name -> expression over params and earlier derived names, in order
    derived: dict[Annotated[str, Field(pattern=NAME_PATTERN)], str] = {}
    answer: str
    unit: Unit
    # the unit symbol the expected value is shown in (e.g. GiB, ms); default: best fit
    show_as: str | None = None
    tolerance: Tolerance = Tolerance(rel=0.01)
    solution: list[str] = Field(min_length=1)
    misconceptions: list[Misconception] = []
    hint: str | None = None


class ConceptQuestion(_Question):
    kind: Literal["concept"]
    answer: str = Field(min_length=1)
    key_points: list[KeyPoint] = Field(min_length=1)
    # names of engine_check claims that a measurement can back
    evidence: list[str] = []


class ChoiceOption(_Model):
    text: str = Field(min_length=1)
    correct: bool = False
    why: str | None = None


class ChoiceQuestion(_Question):
    kind: Literal["choice"]
    options: list[ChoiceOption] = Field(min_length=2)

    @field_validator("options")
    @classmethod
    def _one_correct(cls, options: list[ChoiceOption]) -> list[ChoiceOption]:
        if not any(o.correct for o in options):
            raise ValueError("at least one option must be correct")
        return options


class OrderQuestion(_Question):
    kind: Literal["order"]
    # the items in their correct order; they are shown shuffled
    items: list[str] = Field(min_length=2)


Question = Annotated[
    NumericQuestion | ConceptQuestion | ChoiceQuestion | OrderQuestion,
    Field(discriminator="kind"),
]


class DeckFile(_Model):
    deck: Annotated[str, Field(pattern=ID_PATTERN)]
    description: str | None = None
    questions: list[Question] = Field(min_length=1)
