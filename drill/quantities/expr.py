"""A small, safe arithmetic evaluator shared by bank templates and typed answers.

Text is parsed with `ast.parse(mode="eval")` and only a whitelist of nodes is
accepted: int and float literals, `+ - * / // % **`, unary `+ -`, parentheses,
names looked up in an environment, and calls to min, max, ceil, floor, log2,
sqrt, round and abs. Nothing is ever handed to eval, exec or compile.

An accepted tree is turned into nested closures once (`compile_expr`), so a
template drawn hundreds of times is parsed once. The work is bounded: text
length and nesting depth are capped before parsing, and every power and
product is checked before it is computed, so `9**9**9**9` is refused at once.

Integers stay exact: `2*32*8*128*4096*2` is the int 536870912, and `/` between
ints that divide evenly gives an int.
"""

from __future__ import annotations

import ast
import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import cast

from drill.errors import ExprError

MAX_CHARS = 2_000
MAX_DEPTH = 100
# Intermediate integers may have at most this many bits (about 1e1233); a final
# result must also fit in a float.
MAX_INT_BITS = 4_096

Number = int | float
Env = Mapping[str, object]
_Node = Callable[[Env], Number]
_Reuse = Callable[[ast.AST], "_Node | None"]

FUNCTIONS = ("abs", "ceil", "floor", "log2", "max", "min", "round", "sqrt")
_ALLOWED_TEXT = "numbers, + - * / // % **, parentheses, names and " + ", ".join(FUNCTIONS)


def _too_large() -> ExprError:
    return ExprError("the number is too large to work with")


def _check_int(value: int) -> int:
    if value.bit_length() > MAX_INT_BITS:
        raise _too_large()
    return value


def _finite(value: Number) -> Number:
    if isinstance(value, float) and not math.isfinite(value):
        raise ExprError("the result is not a finite number (overflow or inf/nan)")
    return value


# --- operators, each guarded so no step can run away ------------------------


def _add(a: Number, b: Number) -> Number:
    return _finite(a + b)


def _sub(a: Number, b: Number) -> Number:
    return _finite(a - b)


def _mul(a: Number, b: Number) -> Number:
    if type(a) is int and type(b) is int:
        if a.bit_length() + b.bit_length() > MAX_INT_BITS + 1:
            raise _too_large()
        return a * b
    try:
        return _finite(a * b)
    except OverflowError:  # int too big to become a float
        raise _too_large() from None


def _div(a: Number, b: Number) -> Number:
    if b == 0:
        raise ExprError("division by zero")
    if type(a) is int and type(b) is int and a % b == 0:
        return a // b
    try:
        return _finite(a / b)
    except OverflowError:
        raise _too_large() from None


def _floordiv(a: Number, b: Number) -> Number:
    if b == 0:
        raise ExprError("division by zero")
    try:
        return _finite(a // b)
    except OverflowError:
        raise _too_large() from None


def _mod(a: Number, b: Number) -> Number:
    if b == 0:
        raise ExprError("division by zero (in %)")
    try:
        return _finite(a % b)
    except OverflowError:
        raise _too_large() from None


def _pow(base: Number, exponent: Number) -> Number:
    if base == 0 and exponent < 0:
        raise ExprError("division by zero (0 to a negative power)")
    if base < 0 and type(exponent) is not int and exponent != int(exponent):
        raise ExprError("a negative number to a fractional power is not a real number")
    magnitude = abs(base)
    if magnitude > 1 and exponent > 0:
        # estimate the result's size in bits before computing it
        if type(exponent) is int and exponent.bit_length() > 64:
            raise _too_large()
        if float(exponent) * math.log2(magnitude) > MAX_INT_BITS:
            raise _too_large()
    elif 0 < magnitude < 1 and exponent < 0:
        if type(exponent) is int and exponent.bit_length() > 64:
            raise _too_large()
        if -float(exponent) * -math.log2(magnitude) > MAX_INT_BITS:
            raise _too_large()
    try:
        if type(exponent) is float and exponent.is_integer() and type(base) is int:
            exponent = int(exponent)
            if exponent >= 0:
                return float(base**exponent)
        return _finite(base**exponent)
    except (OverflowError, ZeroDivisionError):
        raise _too_large() from None


_BINOPS: dict[type, Callable[[Number, Number], Number]] = {
    ast.Add: _add,
    ast.Sub: _sub,
    ast.Mult: _mul,
    ast.Div: _div,
    ast.FloorDiv: _floordiv,
    ast.Mod: _mod,
    ast.Pow: _pow,
}
_BINOP_TEXT = {ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|"}
_BINOP_TEXT.update({ast.BitAnd: "&", ast.BitXor: "^ (use ** for powers)"})


# --- functions ---------------------------------------------------------------


def _to_int(value: float, name: str) -> int:
    try:
        return int(value)
    except (OverflowError, ValueError):
        raise ExprError(f"{name}() of a non-finite number") from None


def _ceil(x: Number) -> int:
    return x if type(x) is int else _to_int(math.ceil(x), "ceil")


def _floor(x: Number) -> int:
    return x if type(x) is int else _to_int(math.floor(x), "floor")


def _log2(x: Number) -> Number:
    if x <= 0:
        raise ExprError("log2() needs a positive number")
    if type(x) is int and x & (x - 1) == 0:
        return x.bit_length() - 1  # exact for powers of two
    return math.log2(x)


def _sqrt(x: Number) -> Number:
    if x < 0:
        raise ExprError("sqrt() of a negative number")
    if type(x) is int:
        root = math.isqrt(x)
        if root * root == x:
            return root
    return math.sqrt(x)


_ROUND_CONTEXT = Context(prec=800)  # enough for 1e308 with 400 decimals


def _round(x: Number, ndigits: Number | None = None) -> Number:
    """Halves round away from zero (2.5 -> 3), as people expect, not to even."""
    if ndigits is None:
        if type(x) is int:
            return x
        whole = _to_int(math.floor(abs(x) + 0.5), "round")
        return whole if x >= 0 else -whole
    if type(ndigits) is not int or abs(ndigits) > 400:
        raise ExprError("round(x, n) needs a whole number n between -400 and 400")
    # round the decimal the user sees (repr), so 2.675 -> 2.68
    rounded = Decimal(repr(x)).quantize(
        Decimal(1).scaleb(-ndigits), rounding=ROUND_HALF_UP, context=_ROUND_CONTEXT
    )
    return int(rounded) if type(x) is int else float(rounded)


def _abs(x: Number) -> Number:
    return abs(x)


def _min(*args: Number) -> Number:
    return min(args)


def _max(*args: Number) -> Number:
    return max(args)


# name -> (function, least args, most args)
_FUNCTIONS: dict[str, tuple[Callable[..., Number], int, int]] = {
    "abs": (_abs, 1, 1),
    "ceil": (_ceil, 1, 1),
    "floor": (_floor, 1, 1),
    "log2": (_log2, 1, 1),
    "max": (_max, 1, 64),
    "min": (_min, 1, 64),
    "round": (_round, 1, 2),
    "sqrt": (_sqrt, 1, 1),
}


_SYNTAX_TEXT: dict[type, str] = {
    ast.Attribute: "attribute access (.)",
    ast.Subscript: "indexing ([])",
    ast.Compare: "a comparison",
    ast.BoolOp: "and/or",
    ast.Tuple: "a list of values (a comma outside a function call)",
    ast.List: "a list",
    ast.Lambda: "lambda",
    ast.IfExp: "if/else",
    ast.JoinedStr: "a string",
}

# --- compiling -----------------------------------------------------------------


def _depth(tree: ast.AST) -> int:
    """Nesting depth of a tree, without recursion (the tree may be deep)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return depth
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _bracket_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth -= 1
    return deepest


def _compile_node(node: ast.AST, names: set[str], reuse: _Reuse | None = None) -> _Node:
    """The closure of `node`; `reuse` may supply one for a node compiled before."""
    if reuse is not None:
        found = reuse(node)
        if found is not None:
            return found
    if isinstance(node, ast.Constant):
        value = node.value
        number: int | float
        if type(value) is int:
            number = _check_int(value)
        elif type(value) is float:
            number = _finite(value)
        else:
            raise ExprError(f"{value!r} is not a number; only {_ALLOWED_TEXT} are allowed")
        return lambda env: number
    if isinstance(node, ast.Name):
        name = node.id
        names.add(name)
        # presence and type checked in Expr.evaluate
        return lambda env: cast("int | float", env[name])
    if isinstance(node, ast.BinOp):
        op = _BINOPS.get(type(node.op))
        if op is None:
            symbol = _BINOP_TEXT.get(type(node.op), type(node.op).__name__)
            raise ExprError(f"the operator {symbol} is not allowed; only {_ALLOWED_TEXT}")
        left = _compile_node(node.left, names, reuse)
        right = _compile_node(node.right, names, reuse)
        return lambda env: op(left(env), right(env))
    if isinstance(node, ast.UnaryOp):
        operand = _compile_node(node.operand, names, reuse)
        if isinstance(node.op, ast.USub):
            return lambda env: -operand(env)
        if isinstance(node.op, ast.UAdd):
            return operand
        raise ExprError(f"that unary operator is not allowed; only {_ALLOWED_TEXT}")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
            called = node.func.id if isinstance(node.func, ast.Name) else "that"
            raise ExprError(
                f"{called}() is not an allowed function; allowed: {', '.join(FUNCTIONS)}"
            )
        name = node.func.id
        function, least, most = _FUNCTIONS[name]
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise ExprError(f"{name}() takes plain positional arguments only")
        if not least <= len(node.args) <= most:
            wanted = str(least) if least == most else f"{least} to {most}"
            raise ExprError(f"{name}() takes {wanted} argument(s), got {len(node.args)}")
        args = tuple(_compile_node(a, names, reuse) for a in node.args)
        if len(args) == 1:
            (only,) = args
            return lambda env: function(only(env))
        return lambda env: function(*(a(env) for a in args))
    what = _SYNTAX_TEXT.get(type(node), type(node).__name__)
    raise ExprError(f"{what} is not allowed in an expression; only {_ALLOWED_TEXT}")


def _names_list(names: Iterable[str]) -> str:
    listed = sorted(names)
    if not listed:
        return "none"
    if len(listed) > 30:
        return ", ".join(listed[:30]) + f", ... ({len(listed)} in all)"
    return ", ".join(listed)


@dataclass(frozen=True, eq=False)
class Expr:
    """A checked expression: evaluate it against any environment, as often as needed."""

    text: str
    names: frozenset[str]
    _root: _Node
    _ordered_names: tuple[str, ...] = ()

    def evaluate(self, env: Env | None = None) -> Number:
        """The value for `env` (name -> number); ExprError names any problem."""
        env = env or {}
        for name in self._ordered_names:
            if name not in env:
                raise ExprError(
                    f"unknown name {name!r} in {self.text!r}; allowed names: {_names_list(env)}"
                )
            value = env[name]
            if not isinstance(value, int | float):
                raise ExprError(f"{name!r} is {value!r}, not a number")
            if isinstance(value, float) and not math.isfinite(value):
                raise ExprError(f"{name!r} is {value!r}, not a finite number")
        try:
            result = self._root(env)
        except ExprError:
            raise
        except RecursionError:
            raise ExprError("the expression is nested too deeply") from None
        except (ArithmeticError, ValueError, TypeError, InvalidOperation) as exc:
            raise ExprError(f"cannot evaluate {self.text!r}: {exc}") from None
        if isinstance(result, bool):
            return int(result)
        if isinstance(result, int):
            if result.bit_length() > 1023:
                raise _too_large()
            return result
        return _finite(float(result))


def compile_expr(
    text: str, *, allowed_names: Iterable[str] | None = None, max_chars: int = MAX_CHARS
) -> Expr:
    """Parse and check `text` once. With `allowed_names`, any other name is an error now."""
    if not isinstance(text, str):
        raise ExprError("an expression must be text")
    if len(text) > max_chars:
        raise ExprError(
            f"the expression is too long ({len(text):,} characters; at most {max_chars:,})"
        )
    stripped = text.strip()
    if not stripped:
        raise ExprError("the expression is empty")
    if _bracket_depth(stripped) > MAX_DEPTH:
        raise ExprError("the expression is nested too deeply")
    try:
        with warnings.catch_warnings():
            # "1if 2" or "5x" warn before failing; the user gets our message instead
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(stripped, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise ExprError(f"cannot read {stripped!r} as arithmetic") from None
    if _depth(tree) > MAX_DEPTH:
        raise ExprError("the expression is nested too deeply")
    names: set[str] = set()
    root = _compile_node(tree.body, names)
    if allowed_names is not None:
        allowed = set(allowed_names)
        unknown = sorted(names - allowed)
        if unknown:
            raise ExprError(
                f"unknown name {unknown[0]!r} in {stripped!r}; allowed names: {_names_list(allowed)}"
            )
    return Expr(stripped, frozenset(names), root, tuple(sorted(names)))


def evaluate(text: str, env: Env | None = None) -> Number:
    """Compile and evaluate in one step; names must all be in `env`."""
    env = env or {}
    return compile_expr(text, allowed_names=env.keys()).evaluate(env)


class SharedTrees:
    """Many expression trees that share a base tree's nodes, evaluated together.

    A template's slips (drill.kinds.numeric_slips) are its answer with one part
    changed: each slip's tree holds the answer's own node objects wherever it
    is unchanged. Compiled here, a base node is evaluated once per environment
    however many trees hold it, so a slip costs only the nodes it changes. The
    trees come from `ast` (already checked, e.g. by `compile_expr`) and are
    compiled once; nothing is parsed per evaluation.
    """

    def __init__(self, base: ast.AST) -> None:
        self._cache: dict[int, Number] = {}
        self._base: dict[int, _Node] = {}
        self._base_nodes = list(ast.walk(base))  # keeps their ids valid
        names: set[str] = set()
        self._base_ids = {id(node) for node in self._base_nodes}
        _compile_node(base, names, self._reuse)
        self._roots: list[_Node] = []

    def _reuse(self, node: ast.AST) -> _Node | None:
        key = id(node)
        if key not in self._base_ids:
            return None
        if key in self._base:
            return self._base[key]
        self._base_ids.discard(key)  # compile it plainly, then remember it memoised
        plain = _compile_node(node, set(), self._reuse)
        self._base_ids.add(key)
        cache = self._cache

        def memoised(env: Env) -> Number:
            try:
                return cache[key]
            except KeyError:
                value = cache[key] = plain(env)
                return value

        self._base[key] = memoised
        return memoised

    def add(self, tree: ast.AST) -> None:
        """Compile one more tree; `evaluate` gives its value at this position."""
        self._roots.append(_compile_node(tree, set(), self._reuse))

    def evaluate(self, env: Env) -> list[float | None]:
        """Every tree's value for `env`, as a float; None where it cannot be evaluated."""
        self._cache.clear()
        values: list[float | None] = []
        for root in self._roots:
            try:
                value = float(root(env))
            except (ExprError, ArithmeticError, ValueError, TypeError, KeyError, RecursionError):
                values.append(None)
                continue
            values.append(value if math.isfinite(value) else None)
        return values
