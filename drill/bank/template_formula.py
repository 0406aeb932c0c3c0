"""A numeric template's answer read as a formula of *roles*, for `kvdrill bank coverage`.

Two templates that name the same quantity differently should compare equal, so every
name a template's expressions use is given a role and a scale to base units:

- a preset or gpu param's fields read as the field: `m_layers` and `model_layers` are
  both `layers`, `g_memory` is `memory`;
- a unit at the end of a name is a scale: `cap_gb` is `cap` in GB (x 10^9 bytes),
  `params_b` is `params` in billions, `queue_ms` is `queue` in ms, `hit_pct` is `hit` in
  percent, `dtype_bits` is `dtype` in bits (1/8 byte);
- a few stems are one role under two words (ROLE_SYNONYMS): `cap` and `memory`, `bw`
  and `bandwidth`, `ctx` and `seq`, `dtype` and `dtype_bytes`, and `heads` (multi-head
  attention, where every head is a KV head) and `kv_heads`.

Two names of one template with the same role keep their own names.

Questions asked of a template (nothing here evals bank text: expressions are compiled
by drill.quantities.expr, trees walked from `ast.parse`):

- `uses_kv_formula`: with every derived value written out in place, does some product
  in the answer hold the KV-size product 2 x layers x KV heads x head_dim x bytes per
  element (x tokens, which a per-token figure leaves out)? See `kv_product`.
- `evaluate_on_roles`: the answer for given role values (base units); a derived value
  whose role is given is taken as given, so a template that draws `kv_gb` meets one that
  works `kv` out from layers and heads.
- `same_formula`: equal answers on several random role assignments (an identity test:
  the same function of the same roles, however the expressions are arranged).
- `same_answers`: one template's formula evaluated on another's seeded draws.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drill.bank.schema import GpuParam, NumericQuestion, PresetParam
from drill.errors import ExprError
from drill.kinds.hints import inline_derived
from drill.kinds.instance import InstanceError
from drill.kinds.numeric_draw import compiled, draw_numeric
from drill.kinds.numeric_slips import same
from drill.kinds.params import param_fields

# a unit at the end of a name: (its factor to base units)
UNIT_SUFFIXES: dict[str, float] = {
    "b": 1e9,  # billions (params_b)
    "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
    "gbs": 1e9, "tbs": 1e12, "gbps": 1e9 / 8,  # bytes/s; gigabits/s
    "tflops": 1e12,
    "ms": 1e-3, "us": 1e-6,
    "pct": 1e-2,
    "bits": 1 / 8,
}  # fmt: skip
# stems that name one role in two words
ROLE_SYNONYMS = {
    "cap": "memory",
    "bw": "bandwidth",
    "ctx": "seq",
    "dtype": "dtype_bytes",
    "heads": "kv_heads",  # multi-head attention: every head is a KV head
}


@dataclass(frozen=True)
class Role:
    name: str
    scale: float  # the name's value times scale is the role's value in base units


def name_role(name: str) -> Role:
    """The role of a plain name (no preset or gpu field): its unit suffix read as a scale."""
    stem, _, suffix = name.rpartition("_")
    scale = UNIT_SUFFIXES.get(suffix) if stem else None
    if scale is None:
        stem, scale = name, 1.0
    return Role(ROLE_SYNONYMS.get(stem, stem), scale)


_CACHE: dict[tuple[str, int], tuple[NumericQuestion, Any]] = {}


def _cached(kind: str, question: NumericQuestion, work: Callable[[NumericQuestion], Any]) -> Any:
    """`work(question)`, remembered per question object (questions are unhashable; each
    pair of templates asks for the same roles hundreds of times)."""
    key = (kind, id(question))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is question:  # the object kept alive: its id stays its own
        return hit[1]
    if len(_CACHE) > 8192:
        _CACHE.clear()
    value = work(question)
    _CACHE[key] = (question, value)
    return value


def template_roles(question: NumericQuestion) -> dict[str, Role]:
    """Every name a template's expressions may use (params, a preset's or gpu's fields,
    derived values) -> its role. Params that would share a role keep their own names, and
    so does a derived value whose role a param has (`heads = m_kv_heads / tp`)."""
    return _cached("roles", question, _template_roles)


def _template_roles(question: NumericQuestion) -> dict[str, Role]:
    drawn: dict[str, Role] = {}
    for name, param in question.params.items():
        if isinstance(param, PresetParam | GpuParam):
            for field_name in param_fields(param):
                drawn[f"{name}_{field_name}"] = Role(field_name, 1.0)
        else:
            drawn[name] = name_role(name)
    counts: dict[str, int] = {}
    for role in drawn.values():
        counts[role.name] = counts.get(role.name, 0) + 1
    names = {
        name: role if counts[role.name] == 1 else Role(name, 1.0) for name, role in drawn.items()
    }
    taken = {role.name for role in names.values()}
    for name in question.derived:
        role = name_role(name)
        names[name] = role if role.name not in taken else Role(name, 1.0)
        taken.add(names[name].name)
    return names


def param_roles(question: NumericQuestion) -> dict[str, Role]:
    """The roles of what a template draws (params and preset or gpu fields)."""

    def drawn(question: NumericQuestion) -> dict[str, Role]:
        roles = template_roles(question)
        return {name: role for name, role in roles.items() if name not in question.derived}

    return _cached("params", question, drawn)


# --------------------------------------------------------------------------- evaluating


def evaluate_on_roles(
    question: NumericQuestion, values: Mapping[str, float], *, given_derived: bool = True
) -> float | None:
    """The answer when each drawn name takes its role's value from `values` (base units);
    with `given_derived`, a derived value whose role is in `values` is taken from there.
    None when a name has no value or the expression cannot be evaluated."""
    roles = template_roles(question)
    env: dict[str, float] = {}
    for name, role in param_roles(question).items():
        if role.name in values:
            env[name] = values[role.name] / role.scale
    needed = _needed(question)
    try:
        for name, text in question.derived.items():
            if name not in needed:
                continue  # a value only the text shows
            role = roles[name]
            if given_derived and role.name in values:
                env[name] = values[role.name] / role.scale
            else:
                env[name] = compiled(text).evaluate(env)
        return float(compiled(question.answer).evaluate(env))
    except (ExprError, OverflowError, ValueError):
        return None


def _needed(question: NumericQuestion) -> set[str]:
    """The derived values the answer uses, directly or through other derived values."""
    return _cached("needed", question, _needed_derived)


def _needed_derived(question: NumericQuestion) -> set[str]:
    needed: set[str] = set()
    todo = list(compiled(question.answer).names)
    while todo:
        name = todo.pop()
        if name in question.derived and name not in needed:
            needed.add(name)
            todo.extend(compiled(question.derived[name]).names)
    return needed


@dataclass(frozen=True)
class RoleDraw:
    """One seeded draw of a template, by role (base units)."""

    drawn: dict[str, float]  # the params (and preset or gpu fields)
    values: dict[str, float]  # the params and derived values
    expected: float  # the answer


def draw_roles(question: NumericQuestion, seed: int, presets: Mapping[str, Any]) -> RoleDraw | None:
    """The draw of `question` with `seed`, by role; None if it cannot be drawn."""
    try:
        draw = draw_numeric(question, seed, presets)
    except InstanceError:
        return None
    roles = template_roles(question)
    values = {
        roles[name].name: float(value) * roles[name].scale
        for name, value in draw.values.items()
        if name in roles and isinstance(value, int | float)
    }
    drawn_roles = {role.name for role in param_roles(question).values()}
    drawn = {role: value for role, value in values.items() if role in drawn_roles}
    return RoleDraw(drawn, values, float(draw.expected))


def same_formula(
    a: NumericQuestion,
    a_draws: Sequence[RoleDraw | None],
    b: NumericQuestion,
    b_draws: Sequence[RoleDraw | None],
) -> bool:
    """Whether `a` and `b` compute the same function of the roles they draw.

    An identity test at realistic magnitudes (a floor of free memory over a sequence's
    cache must not be 0 on every trial): the i-th trial takes the roles of `a`'s i-th
    draw, and those only `b` draws from `b`'s i-th draw, and scales each role by its own
    random factor between 1/2 and 2 (a fixed seed), so a constant that one template fixes
    and the other happens to draw no longer agrees. The two answers must agree on every
    trial where both can be evaluated (at least three), and must not be one constant.
    """
    if a.unit != b.unit:
        return False
    rng = random.Random(0)
    agreed: list[float] = []
    for first_draw, second_draw in zip(a_draws, b_draws, strict=False):
        if first_draw is None or second_draw is None:
            continue
        merged = {**second_draw.drawn, **first_draw.drawn}
        values = {role: value * 2 ** rng.uniform(-1, 1) for role, value in sorted(merged.items())}
        first, second = evaluate_on_roles(a, values), evaluate_on_roles(b, values)
        if first is None or second is None:
            continue
        if not same(first, second):
            return False
        agreed.append(first)
    return len(agreed) >= 3 and any(not same(v, agreed[0]) for v in agreed)


def answer_roles(question: NumericQuestion) -> dict[str, str]:
    """role -> the drawn name behind it, for the drawn names the answer needs."""
    needed: set[str] = set(compiled(question.answer).names)
    for name in _needed(question):
        needed |= compiled(question.derived[name]).names
    return {role.name: name for name, role in param_roles(question).items() if name in needed}


def special_case(
    general: NumericQuestion, other: NumericQuestion, drawn: Sequence[RoleDraw | None]
) -> tuple[str, int, int] | None:
    """(name, agreeing, comparable) for the first role (by name) of `general`'s answer that
    `other` does not draw which, set to one in base units (100 %, one token, one request,
    one GPU), makes `general`'s formula give `other`'s answers on at least half of
    `other`'s comparable draws (`drawn`); None when there is none."""
    if general.unit != other.unit:
        return None
    others = {role.name for role in param_roles(other).values()}
    for role, name in sorted(answer_roles(general).items()):
        if role in others:
            continue
        agree = comparable = 0
        for draw in drawn:
            if draw is None:
                continue
            value = evaluate_on_roles(general, {**draw.values, role: 1.0}, given_derived=False)
            if value is None:
                continue
            comparable += 1
            agree += same(value, draw.expected)
        if comparable and 2 * agree >= comparable:
            return name, agree, comparable
    return None


def same_answers(
    formula: NumericQuestion, drawn: Sequence[RoleDraw | None], other: NumericQuestion
) -> tuple[int, int]:
    """(agreeing, comparable): `formula`'s answer from the roles of `other`'s draws
    (its params and derived values), against `other`'s answer on each. A draw is
    comparable when it holds a value for every role `formula`'s answer needs."""
    if formula.unit != other.unit:
        return 0, 0
    agree = comparable = 0
    for draw in drawn:
        if draw is None:
            continue
        value = evaluate_on_roles(formula, draw.values, given_derived=False)
        if value is None:
            continue
        comparable += 1
        agree += same(value, draw.expected)
    return agree, comparable


# --------------------------------------------------------------------------- the KV formula

# the KV-size product's factors besides the K+V 2, each a role or a whole constant
KV_FACTORS = ("layers", "kv_heads", "head_dim", "dtype_bytes")
# names of KV-head counts before and after a change (a grouped-query retrofit)
_KV_HEAD_NAMES = frozenset({"kv_before", "kv_after"})


def inlined_answer(question: NumericQuestion) -> ast.expr:
    """The answer's tree with every derived value written out in place (in order: a value
    that names itself stays a name, as it stays an error when drawn)."""
    return inline_derived(question.answer, question.derived.items())


def _constant(node: ast.expr) -> float | None:
    """The value of a subtree with no names (`10**9`, `512 + 64`), else None."""
    if any(isinstance(n, ast.Name) for n in ast.walk(node)):
        return None
    try:
        return float(compiled(ast.unparse(node)).evaluate({}))
    except ExprError:
        return None


def _factors(node: ast.expr) -> Iterator[ast.expr]:
    """The factors of a product's numerator: `a * (b / c) * d` -> a, b, d."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        yield from _factors(node.left)
        yield from _factors(node.right)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        yield from _factors(node.left)
    else:
        yield node


def product_factors(node: ast.expr) -> Iterator[list[ast.expr]]:
    """The products a tree holds, each as its numerator's factors (sums among them
    multiplied out)."""
    return _terms(node)


def _terms(node: ast.expr) -> Iterator[list[ast.expr]]:
    """The products a tree holds, each as its numerator's factors, with a sum among the
    factors multiplied out: (a + b) * c holds a * c and b * c."""
    for product in ast.walk(node):
        if isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult | ast.Div):
            yield from _expanded(list(_factors(product)))


def _expanded(factors: list[ast.expr]) -> Iterator[list[ast.expr]]:
    for i, factor in enumerate(factors):
        if isinstance(factor, ast.BinOp) and isinstance(factor.op, ast.Add | ast.Sub):
            if _constant(factor) is not None:
                continue
            for side in (factor.left, factor.right):
                yield from _expanded([*factors[:i], *_factors(side), *factors[i + 1 :]])
            return
    yield factors


def kv_product(question: NumericQuestion) -> bool:
    """Whether some product in the written-out answer is the KV-size product.

    A product qualifies when, besides a literal 2 (K and V), it has a distinct factor for
    each of layers, KV heads, head_dim and bytes per element, each either that role (by
    the roles above; `kv_before`/`kv_after` count as KV heads) or a whole-number constant
    (a template may fix any of them: `2 * 32 * 8 * 128 * ctx * 2`). Tokens may be absent
    (a per-token figure). Sums among a product's factors are multiplied out
    (`per_layer * (global * seq + local * window)`), and a product inside a division, a
    floor or a min counts as well: the KV size of a sequence dividing free memory is still
    the formula. A constant 2 beyond the K-and-V 2 stands only for 2-byte elements, so
    a TP all-reduce's traffic (2 x layers x tokens x hidden x 2 bytes x 2(p - 1)/p) is
    not the formula. A layer's latent vector (MLA) has no factor 2 and no KV heads, and
    attention FLOPs have no factor 2 for K and V: neither qualifies.
    """
    roles = template_roles(question)
    for factors in _terms(inlined_answer(question)):
        two = next((f for f in factors if _constant(f) == 2), None)
        if two is None:
            continue
        open_slots, constants, twos = set(KV_FACTORS), 0, 0
        for factor in factors:
            if factor is not two:
                slot = _slot(factor, roles)
                if slot == "constant" and _constant(factor) == 2:
                    twos += 1
                else:
                    constants += slot == "constant"
                open_slots.discard(slot or "")
        # a whole constant may fill any open slot, except that a further 2 is an element
        # size (2 bytes) at most: no model has heads 2 wide, and another factor 2 (a ring
        # all-reduce's 2(p - 1)/p) does not make the KV heads
        bytes_by_two = "dtype_bytes" in open_slots and twos > 0
        if len(open_slots) <= constants + bytes_by_two:
            return True
    return False


def _slot(factor: ast.expr, roles: Mapping[str, Role]) -> str | None:
    value = _constant(factor)
    if value is not None:
        return "constant" if value >= 1 and value.is_integer() else None
    if not isinstance(factor, ast.Name):
        return None
    if factor.id in _KV_HEAD_NAMES:
        return "kv_heads"
    role = roles.get(factor.id)
    return role.name if role is not None else None
