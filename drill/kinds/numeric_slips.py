"""The slips of a numeric template: wrong answers its own formula makes likely.

They are derived mechanically from the answer expression, with every derived
value the prompt does not show written out in place, so that a product spread
over derived names (`kv: per_token * seq`, `per_token: 2 * layers * ...`) is
seen whole. A number the prompt shows (a param, or a derived value such as
`q_heads` or `e2e_ms`) is a given: it is never written out. The families, in the
order they are derived:

  count N -> N-1, count N -> N+1   an integer param written next to a literal 1 in
                                   a sum, `(n_tokens - 1) * tpot_ms`: a fencepost
                                   slip; every use of the param moves
  drop term T                      each term of each sum (`drop term queue_ms / 1000`)
  drop factor F                    each factor of each product, and each group of
                                   factors that a derived value or parentheses make
                                   (`rate`, `(mfu_pct / 100)`); never a sum, a
                                   literal 1, or all that is above the line
  double P, halve P                each product as a whole: one of its factors
                                   counted twice or half (which one is all the same)
  swap A and B                     two givens of the same kind: names that end in
                                   the same word (ttft_ms and tpot_ms, kv_heads and
                                   q_heads), or start with the same word before a
                                   qualifier such as _small or _before
  read P as GiB                    a param in decimal byte units, named *_kb, *_mb,
                                   *_gb, *_tb (or *_gbs, *_tbs for a rate), read with
                                   the binary prefix: x1.024^k
  answer xR, answer /R             the unit slips of the answer's dimension: bytes
                                   8, 1024, 1000 and 1.024^1..4; seconds 1000;
                                   fractions 100

Where two slips would have one name (a 1 in two sums), each gets " in " and the
text of its sum or product ("drop term 1 in cached"). Every slip is an expression
over the givens, compiled once and evaluated per draw. Slips that give the same value on every draw are one slip, known by the
first name (the others are its aliases); a slip that gives the answer on every
draw is no slip (dropping a literal 1, swapping two factors of one product), and
a draw where a slip is not a finite positive number does not count for it.
"""

from __future__ import annotations

import ast
import copy
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from drill.bank.schema import ChoiceParam, NumericQuestion, RangeParam
from drill.kinds.numeric_draw import NumericDraw
from drill.kinds.params import param_fields
from drill.quantities.expr import SharedTrees

# words after which a name's first word says its kind: b_small and b_large are both b
QUALIFIERS = frozenset(
    {"small", "large", "before", "after", "old", "new", "lo", "hi", "min", "max", "true"}
)
# a decimal byte unit at the end of a param name: its power of 1000, and the binary name
_BYTE_SUFFIXES = {
    "kb": (1, "KiB"), "mb": (2, "MiB"), "gb": (3, "GiB"), "tb": (4, "TiB"),
    "kbs": (1, "KiB/s"), "mbs": (2, "MiB/s"), "gbs": (3, "GiB/s"), "tbs": (4, "TiB/s"),
}  # fmt: skip
# the unit slips of an answer's dimension: the ratios, as written in the slips' names
_UNIT_RATIOS: dict[str, tuple[str, ...]] = {
    "bytes": ("8", "1024", "1000", "1.024", "1.024^2", "1.024^3", "1.024^4"),
    "bytes_per_s": ("8", "1024", "1000", "1.024", "1.024^2", "1.024^3", "1.024^4"),
    "seconds": ("1000",),
    "fraction": ("100",),
}
# two values closer than this (relative) are the same number
SAME = 1e-9


@dataclass(frozen=True)
class Slip:
    """One derived wrong answer: `name`, and other names for the same values."""

    name: str
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


@dataclass(frozen=True)
class SlipDraws:
    """A slip's value on each draw (None where it is not a finite positive number)."""

    slip: Slip
    values: tuple[float | None, ...]


def same(a: float, b: float) -> bool:
    """Whether two values are the same number, up to float rounding."""
    return abs(a - b) <= SAME * max(abs(a), abs(b))


# --------------------------------------------------------------------------- the formula


class _Formula:
    """The answer as one tree, derived values the prompt does not show written out.

    `labels` maps a node (by id) to the text it was written as: a derived name
    where one was written out, else its own source text.
    """

    def __init__(self, question: NumericQuestion, shown: set[str]) -> None:
        self.derived = {
            name: ast.parse(text, mode="eval").body
            for name, text in question.derived.items()
            if name not in shown
        }
        self.labels: dict[int, str] = {}
        self.parents: dict[int, ast.AST] = {}
        answer = ast.parse(question.answer, mode="eval").body
        self.root = self._inline(answer)
        if not isinstance(answer, ast.Name):
            self.labels[id(self.root)] = "answer"
        for node in ast.walk(self.root):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node

    def _inline(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Name) and node.id in self.derived:
            copied = self._inline(self.derived[node.id])
            if not isinstance(copied, ast.Name):
                self.labels[id(copied)] = node.id
            return copied
        label = ast.unparse(node)
        copied = copy.copy(node)
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                setattr(copied, field, self._inline(value))
            elif isinstance(value, list):
                setattr(copied, field, [self._inline(v) for v in value])
        self.labels.setdefault(id(copied), label)
        return copied

    def label(self, node: ast.AST) -> str:
        return self.labels.get(id(node)) or ast.unparse(node)

    def chains(self, ops: tuple[type, ...]) -> Iterator[tuple[ast.BinOp, list[_Part]]]:
        """Each maximal chain of `ops` (a sum, a product) with its parts.

        A part is a leaf (an operand that is no node of the chain) or a group: an
        inner node of the chain that a derived value or parentheses made (the
        right operand of its parent). Its sign is -1 below the line (a divisor, a
        subtracted term).
        """
        for node in ast.walk(self.root):
            parent = self.parents.get(id(node))
            if not _is_op(node, ops) or (parent is not None and _is_op(parent, ops)):
                continue
            assert isinstance(node, ast.BinOp)
            parts: list[_Part] = []
            stack: list[tuple[ast.expr, int, tuple[int, ...]]] = [(node, 1, ())]
            while stack:
                item, sign, within = stack.pop()
                if not isinstance(item, ast.BinOp) or not _is_op(item, ops):
                    parts.append(_Part(item, sign, leaf=True, within=within))
                    continue
                if item is not node and (
                    item is getattr(self.parents[id(item)], "right", None)
                    or self.labels.get(id(item)) in self.derived
                ):
                    parts.append(_Part(item, sign, leaf=False, within=within))
                    within = (*within, id(item))
                below = -sign if isinstance(item.op, (ast.Sub, ast.Div)) else sign
                stack += [(item.right, below, within), (item.left, sign, within)]
            yield node, parts

    def names(self) -> set[str]:
        return {n.id for n in ast.walk(self.root) if isinstance(n, ast.Name)}


@dataclass(frozen=True)
class _Part:
    """A term of a sum or a factor of a product (see `_Formula.chains`)."""

    node: ast.expr
    sign: int  # 1 above the line, -1 below it (a divisor, a subtracted term)
    leaf: bool  # False for a group of leaves
    within: tuple[int, ...]  # the groups (by node id) this part is inside


def _is_op(node: ast.AST, ops: tuple[type, ...]) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ops)


def _replaced(node: ast.expr, replace: Mapping[int, ast.expr]) -> ast.expr:
    """`node` with the nodes in `replace` (by id) replaced; what is unchanged is shared,
    not copied (drill.quantities.expr.SharedTrees evaluates a shared node once per draw)."""
    if id(node) in replace:
        return replace[id(node)]
    changed = False
    copied = copy.copy(node)
    for field, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            new = _replaced(value, replace)
            changed |= new is not value
            setattr(copied, field, new)
        elif isinstance(value, list):
            items = [_replaced(v, replace) if isinstance(v, ast.expr) else v for v in value]
            changed |= any(a is not b for a, b in zip(items, value, strict=True))
            setattr(copied, field, items)
    return copied if changed else node


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _wrap(node: ast.expr, template: str) -> ast.expr:
    """`template` with X standing for `node`: "(X) * 2"."""
    wrapped = _expr(template.replace("X", "__x__"))
    return _replaced_name(wrapped, "__x__", node)


def _replaced_name(tree: ast.expr, name: str, node: ast.expr) -> ast.expr:
    targets = {id(n): node for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name}
    return _replaced(tree, targets)


def _is_constant(node: ast.AST, value: float) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


# --------------------------------------------------------------------------- the givens


def givens(question: NumericQuestion, shown: set[str]) -> dict[str, bool]:
    """The numbers the prompt gives, name -> whether they are whole counts."""
    found: dict[str, bool] = {}
    for name, param in question.params.items():
        if param_fields(param):
            found.update((f"{name}_{f}", False) for f in param_fields(param))
        elif isinstance(param, RangeParam):
            lo, step = param.range[0], param.step
            found[name] = float(lo).is_integer() and float(step).is_integer()
        elif isinstance(param, ChoiceParam) and not any(isinstance(c, str) for c in param.choices):
            found[name] = all(float(c).is_integer() for c in param.choices)
    for name in question.derived:
        if name in shown:
            found[name] = False
    return found


def kind_word(name: str, params: Mapping[str, object]) -> str:
    """The word of a given's name that says what it measures (see the module docstring)."""
    for param in params:  # a preset or gpu field: its own name, not the param's
        if param_fields(params[param]) and name.startswith(param + "_"):
            name = name[len(param) + 1 :]
    words = name.split("_")
    if len(words) > 1 and words[-1] in QUALIFIERS:
        return words[0] + "_"  # a stem, never equal to a last word
    return words[-1]


# --------------------------------------------------------------------------- derivation


def derive(
    question: NumericQuestion, shown: set[str]
) -> tuple[ast.expr, list[tuple[str, ast.expr]]]:
    """The answer's tree and every slip of `question` as (name, tree), in the documented
    order; `shown` are the names the prompt shows. A slip's tree shares the answer's
    nodes where it does not change them."""
    formula = _Formula(question, shown)
    found: list[tuple[str, str, ast.expr]] = []  # (name, where, tree)
    given = givens(question, shown)
    used = formula.names()

    def add(name: str, replace: Mapping[int, ast.expr], where: ast.AST | None = None) -> None:
        place = formula.label(where) if where is not None else ""
        found.append((name, place, _replaced(formula.root, replace)))

    def substitute(templates: Mapping[str, str]) -> dict[int, ast.expr]:
        """Each use of a name replaced by its template (X stands for the name)."""
        return {
            id(n): _wrap(n, templates[n.id])
            for n in ast.walk(formula.root)
            if isinstance(n, ast.Name) and n.id in templates
        }

    sums = list(formula.chains((ast.Add, ast.Sub)))
    products = list(formula.chains((ast.Mult, ast.Div)))
    counts = sorted(
        {
            part.node.id
            for _, parts in sums
            if any(_is_constant(p.node, 1) for p in parts)
            for part in parts
            if isinstance(part.node, ast.Name) and given.get(part.node.id)
        }
    )
    for name in counts:
        for sign in "-+":
            fence = substitute({name: f"(X {sign} 1)"})
            add(f"count {name} -> {name}{sign}1", fence)
    for top, parts in sums:
        for term in parts:
            if not _is_constant(term.node, 0):
                drop = {id(term.node): _expr("0")}
                add(f"drop term {formula.label(term.node)}", drop, top)
    for top, parts in products:
        for factor in parts:
            if _droppable(factor, parts):
                drop = {id(factor.node): _expr("1")}
                add(f"drop factor {formula.label(factor.node)}", drop, top)
        add(f"double {formula.label(top)}", {id(top): _wrap(top, "(X) * 2")})
        add(f"halve {formula.label(top)}", {id(top): _wrap(top, "(X) / 2")})
    names = sorted(given)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if (a in used or b in used) and kind_word(a, question.params) == kind_word(
                b, question.params
            ):
                add(f"swap {a} and {b}", substitute({a: b, b: a}))
    for name in sorted(used & set(given)):
        suffix = name.rsplit("_", 1)[-1]
        if "_" in name and suffix in _BYTE_SUFFIXES:
            power, binary = _BYTE_SUFFIXES[suffix]
            add(
                f"read {name} as {binary}",
                substitute({name: f"(X * 1.024 ** {power})"}),
            )
    for ratio in _UNIT_RATIOS.get(question.unit, ()):
        number = ratio.replace("^", " ** ")
        root = formula.root
        add(f"answer x{ratio}", {id(root): _wrap(root, f"(X) * {number}")})
        add(f"answer /{ratio}", {id(root): _wrap(root, f"(X) / ({number})")})
    return formula.root, _unique_names(found)


def _unique_names(found: Sequence[tuple[str, str, ast.expr]]) -> list[tuple[str, ast.expr]]:
    """Names that tell slips apart: "drop term 1 in cached" where two sums hold a 1."""
    counts = Counter(name for name, _, _ in found)
    named = [(f"{n} in {where}" if counts[n] > 1 and where else n, t) for n, where, t in found]
    seen: Counter[str] = Counter()
    unique = []
    for name, tree in named:
        seen[name] += 1
        unique.append((name if seen[name] == 1 else f"{name} ({seen[name]})", tree))
    return unique


def _droppable(factor: _Part, parts: Sequence[_Part]) -> bool:
    """Whether leaving `factor` out of its product is a slip: not for a sum, a literal
    1, or the whole of what is above the line (the quantity would be gone)."""
    node = factor.node
    if _is_op(node, (ast.Add, ast.Sub)) or _is_constant(node, 1):
        return False
    if isinstance(node, ast.Constant):
        return True
    covered = {id(node)} | {id(p.node) for p in parts if p.leaf and id(node) in p.within}
    above = {
        id(p.node) for p in parts if p.leaf and p.sign > 0 and not isinstance(p.node, ast.Constant)
    }
    return not above <= covered


# --------------------------------------------------------------------------- evaluation


def _positive(value: float | None) -> float | None:
    return value if value is not None and value > 0 else None


def _key(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.12g}")


def slip_draws(
    question: NumericQuestion, shown: set[str], draws: Sequence[NumericDraw]
) -> tuple[list[SlipDraws], list[str]]:
    """The slips of `question` with their values on each of `draws` (see the module
    docstring for what counts as one slip), and the name of every slip derived, whatever
    the draws."""
    root, derived = derive(question, shown)
    trees = SharedTrees(root)
    for _, tree in derived:
        trees.add(tree)
    by_draw = [trees.evaluate(draw.values) for draw in draws]
    answers = [float(d.expected) for d in draws]
    kept: dict[tuple, tuple[list[str], tuple[float | None, ...]]] = {}
    for k, (name, _) in enumerate(derived):
        values = tuple(_positive(v[k]) for v in by_draw)
        if all(v is None or same(v, a) for v, a in zip(values, answers, strict=True)):
            continue  # no slip: it never gives anything but the answer
        key = tuple(_key(v) for v in values)
        if key in kept:
            kept[key][0].append(name)
            continue
        kept[key] = ([name], values)
    found = [SlipDraws(Slip(names[0], tuple(names[1:])), values) for names, values in kept.values()]
    return found, [name for name, _ in derived]
