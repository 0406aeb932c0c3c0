"""The hints a numeric template gives of itself: its formula in words, then with numbers.

The formula is the answer expression with every derived value the prompt does not
show written out in place (`kv: per_token * seq` with `per_token: 2 * layers * ...`
is one product), so it reads from the givens. The first hint names the factors in
words ("2 (K and V) × layers × KV heads × head_dim × bytes per element × tokens,
in bytes"), the second shows the same formula with this draw's numbers ("2 × 32 ×
8 × 128 × 2 × 4,096"); neither works it out. A template's own `hint:` comes before
them.

Words come from NAME_WORDS, by name; a preset or gpu param's fields (`m_layers`,
`g_memory`) read as the field (`layers`, `memory`); any other name is read with its underscores as spaces. A
literal 2 in a product with a KV-head count (or layers and query heads) is "2 (K
and V)", a later 2 or 1 in it the element size; a 2 next to a parameter count is
the FLOPs per parameter per token when the product counts tokens, else the bytes
of a 16-bit weight.
"""

from __future__ import annotations

import ast
import copy
import functools
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from drill.bank.schema import NumericQuestion
from drill.errors import BankError
from drill.kinds.params import param_fields
from drill.quantities.render import format_value, placeholders

NAME_WORDS = {
    "layers": "layers",
    "kv_heads": "KV heads",
    "kv_before": "KV heads before",
    "kv_after": "KV heads after",
    "q_heads": "query heads",
    "group": "query heads per KV head",
    "head_dim": "head_dim",
    "hidden": "hidden size",
    "dtype_bytes": "bytes per element",
    "dtype_bits": "bits per element",
    "seq": "tokens",
    "ctx": "context tokens",
    "prompt": "prompt tokens",
    "shared": "cached prefix tokens",
    "out": "output tokens",
    "n_tokens": "reply tokens",
    "live": "live tokens",
    "reserve": "reserved tokens",
    "requests": "requests",
    "batch": "batch",
    "b_small": "small batch",
    "b_large": "large batch",
    "params": "parameters",
    "params_b": "parameters (billions)",
    "active": "active parameters",
    "memory": "GPU memory (bytes)",
    "bandwidth": "memory bandwidth (bytes/s)",
    "flops": "peak FLOP/s",
    "cap_gb": "GPU memory (GB)",
    "bw_tbs": "bandwidth (TB/s)",
    "peak_tflops": "peak TFLOP/s",
    "rate_tflops": "effective TFLOP/s",
    "mfu_pct": "share of peak (%)",
    "tp": "tensor-parallel GPUs",
    "ttft_ms": "TTFT (ms)",
    "tpot_ms": "TPOT (ms)",
    "e2e_ms": "end-to-end time (ms)",
    "queue_ms": "queue wait (ms)",
    "step_ms": "step time (ms)",
    "t_small": "small-batch step (ms)",
    "t_large": "large-batch step (ms)",
    "tps": "tokens per second",
}
# what the answer's base unit is called after the formula: "..., in bytes"
UNIT_WORDS = {
    "bytes": "in bytes",
    "seconds": "in seconds",
    "bytes_per_s": "in bytes per second",
    "flop": "in FLOPs",
    "flop_per_s": "in FLOP/s",
    "tokens": "in tokens",
    "tokens_per_s": "in tokens per second",
    "requests": "in requests",
    "requests_per_s": "in requests per second",
    "fraction": "as a fraction",
    "flop_per_byte": "in FLOP per byte",
}
_KV_HEADS = frozenset({"kv_heads", "kv_before", "kv_after"})
_PARAMETERS = frozenset({"params", "params_b", "active"})
_TOKEN_COUNTS = frozenset(
    {"seq", "ctx", "prompt", "shared", "batch", "requests", "n_tokens", "out"}
)
# operator precedence, for parentheses: a sum below a product below a power
_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.FloorDiv: 2, ast.Mod: 2}
_SYMBOLS = {
    ast.Add: "+", ast.Sub: "−", ast.Mult: "×", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "mod",
}  # fmt: skip


@dataclass(frozen=True)
class _Formula:
    """A template's answer with unshown derived values written out, and its words."""

    tree: ast.expr
    words: str  # the first hint
    base_names: Mapping[str, str]  # a name -> what it reads as (preset fields, by field)


def formula_hints(question: NumericQuestion, values: Mapping[str, Any]) -> tuple[str, str]:
    """(the formula in words, the formula with this draw's `values`) for `question`."""
    formula = _formula(question.answer, tuple(question.derived.items()), question.prompt,
                       _preset_names(question), question.unit)  # fmt: skip
    numbers = _Writer(formula.base_names, values).write(formula.tree)
    return formula.words, f"With this draw's numbers: {numbers}."


def _preset_names(question: NumericQuestion) -> tuple[tuple[str, str], ...]:
    """(m_layers, layers)... for each preset or gpu param m: its fields read as the field."""
    return tuple(
        (f"{name}_{field}", field)
        for name, param in question.params.items()
        for field in param_fields(param)
    )


@functools.lru_cache(maxsize=512)
def _formula(
    answer: str,
    derived: tuple[tuple[str, str], ...],
    prompt: str,
    preset_names: tuple[tuple[str, str], ...],
    unit: str,
) -> _Formula:
    try:
        shown = {placeholder.name for placeholder in placeholders(prompt)}
    except BankError:  # a malformed prompt is lint's to report; write every value out
        shown = set()
    tree = inline_derived(answer, derived, keep=shown)
    base_names = dict(preset_names)
    words = _Writer(base_names, None).write(tree)
    tail = UNIT_WORDS.get(unit)
    return _Formula(tree, f"The formula: {words}{', ' + tail if tail else ''}.", base_names)


def inline_derived(
    answer: str, derived: Iterable[tuple[str, str]], keep: Container[str] = ()
) -> ast.expr:
    """`answer`'s tree with each derived value (name, text) not in `keep` written out in
    place. A derived value is worked out after the ones above it, so only those are
    written out in it (one that names itself or a later one keeps that name, as it stays
    an error when drawn)."""
    written_out: dict[str, ast.expr] = {}
    for name, text in derived:
        tree = _inline(ast.parse(text, mode="eval").body, written_out)
        if name not in keep:
            written_out[name] = tree
    return _inline(ast.parse(answer, mode="eval").body, written_out)


def _inline(node: ast.expr, written_out: Mapping[str, ast.expr]) -> ast.expr:
    """`node` with each name in `written_out` replaced by a copy of its tree."""
    if isinstance(node, ast.Name) and node.id in written_out:
        return copy.deepcopy(written_out[node.id])
    copied = copy.copy(node)
    for field, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            setattr(copied, field, _inline(value, written_out))
        elif isinstance(value, list):
            setattr(copied, field, [_inline(v, written_out) for v in value])
    return copied


class _Writer:
    """Writes a formula tree in words (`values` None) or with a draw's numbers."""

    def __init__(self, base_names: Mapping[str, str], values: Mapping[str, Any] | None) -> None:
        self.base_names = base_names
        self.values = values

    def base(self, name: str) -> str:
        return self.base_names.get(name, name)

    def write(self, node: ast.expr, context: frozenset[str] = frozenset()) -> str:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            return self._product(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return f"{self._operand(node.left, 3)}^{self._operand(node.right, 3)}"
        if isinstance(node, ast.BinOp):
            level = _PRECEDENCE.get(type(node.op), 2)
            left = self._operand(node.left, level, context)
            # a - (b - c) and a / (b * c) keep their parentheses on the right
            right = self._operand(node.right, level + 1, context)
            return f"{left} {_SYMBOLS.get(type(node.op), '?')} {right}"
        if isinstance(node, ast.UnaryOp):
            sign = "−" if isinstance(node.op, ast.USub) else ""
            return sign + self._operand(node.operand, 3, context)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = ", ".join(self.write(arg, context) for arg in node.args)
            return f"{node.func.id}({args})"
        if isinstance(node, ast.Name):
            if self.values is not None:
                value = self.values.get(node.id)
                return node.id if value is None else format_value(value)
            base = self.base(node.id)
            return NAME_WORDS.get(base, base.replace("_", " "))
        if isinstance(node, ast.Constant):
            return _literal(node.value, context, self.values is None)
        return ast.unparse(node)

    def _operand(self, node: ast.expr, level: int, context: frozenset[str] = frozenset()) -> str:
        text = self.write(node, context)
        inner = _level(node)
        return f"({text})" if inner < level else text

    def _product(self, node: ast.BinOp) -> str:
        """A chain of ×, its literals read in the light of the names beside them."""
        factors = _factors(node)
        names = frozenset(self.base(n.id) for n in ast.walk(node) if isinstance(n, ast.Name))
        context = set()
        if names & _KV_HEADS or {"q_heads", "layers"} <= names:
            context.add("kv")
        if names & _PARAMETERS:
            context.add("tokens" if names & _TOKEN_COUNTS else "weights")
        parts, seen_two = [], False
        for factor in factors:
            here = set(context)
            if "kv" in context and seen_two:
                here = {"kv-element"}
            if isinstance(factor, ast.Constant) and factor.value == 2:
                seen_two = True
            parts.append(self._operand(factor, 2, frozenset(here)))
        return " × ".join(parts)


def _factors(node: ast.expr) -> list[ast.expr]:
    """The factors of a chain of ×, left to right."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return [*_factors(node.left), *_factors(node.right)]
    return [node]


def _level(node: ast.expr) -> int:
    if isinstance(node, ast.BinOp):
        return 3 if isinstance(node.op, ast.Pow) else _PRECEDENCE.get(type(node.op), 2)
    if isinstance(node, ast.UnaryOp):
        return 3
    return 4


def _literal(value: Any, context: frozenset[str], in_words: bool) -> str:
    """A number in the formula; in words, a 2 or 1 says what it counts where that is clear."""
    text = format_value(value)
    if not in_words:
        return text
    if "kv" in context and value == 2:
        return "2 (K and V)"
    if "kv-element" in context and value in (1, 2):
        return f"{value} (bytes per element)"
    if "tokens" in context and value == 2:
        return "2 (FLOPs per parameter per token)"
    if "weights" in context and value == 2:
        return "2 (bytes per weight)"
    return text
