"""The safe evaluator: what it computes, what it refuses, and that it never crashes."""

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drill.errors import ExprError
from drill.quantities.expr import MAX_CHARS, SharedTrees, compile_expr, evaluate

KV_ENV = {"layers": 32, "kv_heads": 8, "head_dim": 128, "seq": 4096, "dtype_bytes": 2}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2*32*8*128*4096*2", 536870912),
        ("536870912 / 2", 268435456),
        ("3/4", 0.75),
        ("7 // 2", 3),
        ("7 % 4", 3),
        ("2**29", 536870912),
        ("2 ** -1", 0.5),
        ("-(3 - 5)", 2),
        ("+4", 4),
        ("1e3 * 2", 2000.0),
        ("536_870_912", 536870912),
        ("ceil(3.2) + floor(2.7)", 6),
        ("ceil(8192 / 16)", 512),
        ("log2(4096)", 12),
        ("log2(10)", 3.321928094887362),
        ("sqrt(16)", 4),
        ("sqrt(2)", 1.4142135623730951),
        ("round(2.5)", 3),
        ("round(-2.5)", -3),
        ("round(2.675, 2)", 2.68),
        ("round(1234, -2)", 1200),
        ("min(4, 2, 3)", 2),
        ("max(7)", 7),
        ("abs(-3.5)", 3.5),
        ("2 ** 3.0", 8.0),
        ("(-2) ** 3", -8),
        ("1 ** (10 ** 100)", 1),
    ],
)
def test_evaluates(text, value):
    result = evaluate(text)
    assert result == value
    assert type(result) is type(value)


def test_ints_stay_exact():
    assert evaluate("2**62 + 1") == 4611686018427387905


def test_compile_once_evaluate_many():
    expr = compile_expr("2 * layers * kv_heads * head_dim * seq * dtype_bytes")
    assert expr.names == frozenset(KV_ENV)
    assert expr.evaluate(KV_ENV) == 536870912
    assert expr.evaluate({**KV_ENV, "dtype_bytes": 1}) == 268435456
    assert expr.evaluate({**KV_ENV, "seq": 8192.0}) == 1073741824.0


def test_function_names_are_not_free_names():
    assert compile_expr("ceil(x / b)").names == frozenset({"x", "b"})


def test_unknown_name_lists_the_allowed_names():
    with pytest.raises(ExprError, match=r"unknown name 'heads'.*allowed names: a, layers"):
        compile_expr("layers * heads", allowed_names=["layers", "a"])
    expr = compile_expr("layers * heads")
    with pytest.raises(ExprError, match=r"unknown name 'heads'.*allowed names: layers"):
        expr.evaluate({"layers": 2})
    with pytest.raises(ExprError, match=r"unknown name 'x'.*allowed names: none"):
        evaluate("x + 1")


def test_non_numeric_env_value():
    with pytest.raises(ExprError, match="'model' is 'llama', not a number"):
        compile_expr("model * 2").evaluate({"model": "llama"})
    with pytest.raises(ExprError, match="not a finite number"):
        compile_expr("x * 2").evaluate({"x": float("inf")})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1/0", "division by zero"),
        ("1//0", "division by zero"),
        ("1 % 0", "division by zero"),
        ("0 ** -1", "division by zero"),
        ("9**9**9**9", "too large"),
        ("10**400", "too large"),
        ("2**4096 * 2**4096", "too large"),
        ("0.5 ** -10000", "too large"),
        ("2.0 ** 5000", "too large"),
        ("1e999", "not a finite number"),
        ("1e308 * 10", "not a finite number"),
        ("ceil(1e308 * 10)", "not a finite number"),
        ("(-8) ** 0.5", "fractional power"),
        ("sqrt(-1)", "negative"),
        ("log2(0)", "positive"),
        ("round(1.5, 0.5)", "whole number"),
        ("__import__('os')", "not an allowed function"),
        ("open('x')", "not an allowed function"),
        ("(1).real", "attribute access"),
        ("[1][0]", "not allowed"),
        ("1 < 2", "comparison"),
        ("1 and 2", "and/or"),
        ("1, 5", "comma"),
        ("1 if 1 else 2", "if/else"),
        ("'a'", "not a number"),
        ("True", "not a number"),
        ("1j", "not a number"),
        ("3 ^ 2", r"use \*\* for powers"),
        ("1 << 2", "operator << is not allowed"),
        ("~1", "unary operator"),
        ("min()", "takes 1 to 64 argument"),
        ("sqrt(1, 2)", "takes 1 argument"),
        ("min(x=1)", "positional arguments only"),
        ("lambda: 1", "lambda"),
        ("", "empty"),
        ("   ", "empty"),
        ("2 +", "cannot read"),
        ("1\x002", "cannot read"),
        ("(" * 150 + "1" + ")" * 150, "nested too deeply"),
        ("-" * 1500 + "1", "nested too deeply"),
        ("9" * 5000, "too long"),
    ],
)
def test_refuses(text, message):
    with pytest.raises(ExprError, match=message):
        evaluate(text)


def test_huge_input_is_refused_by_length():
    with pytest.raises(ExprError, match=r"too long \(200,001 characters; at most 2,000\)"):
        evaluate("1+" * 100_000 + "1")
    assert MAX_CHARS == 2_000
    assert evaluate("1+" * 50 + "1") == 51


_ARITH = st.text(alphabet="0123456789+-*/%().e_ ,abcxminaxceilsqrtlog2round", max_size=60)


@settings(max_examples=400)
@given(st.one_of(st.text(max_size=80), _ARITH))
def test_arbitrary_text_only_raises_expr_error(text):
    try:
        result = evaluate(text, {"a": 3, "b": 0.5, "c": 0})
    except ExprError:
        return
    assert isinstance(result, int | float)


_INTS = st.integers(min_value=-(10**6), max_value=10**6)


@given(_INTS, _INTS, _INTS)
def test_integer_arithmetic_matches_python(a, b, c):
    expr = compile_expr("a * b + c - (a - b) * 3")
    assert expr.evaluate({"a": a, "b": b, "c": c}) == a * b + c - (a - b) * 3


def test_no_warning_escapes_for_odd_literals(recwarn):
    with pytest.raises(ExprError):
        evaluate("1if 2")
    assert not [w for w in recwarn if issubclass(w.category, SyntaxWarning)]


class CountingEnv(dict):
    """An environment that counts how often each name is looked up."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lookups: dict[str, int] = {}

    def __getitem__(self, key):
        self.lookups[key] = self.lookups.get(key, 0) + 1
        return super().__getitem__(key)


def test_shared_trees_evaluate_a_shared_node_once_per_environment():
    base = ast.parse("a * b + c", mode="eval").body
    product = base.left  # a * b, shared by both trees below
    trees = SharedTrees(base)
    trees.add(ast.BinOp(product, ast.Mult(), ast.Constant(2)))  # (a * b) * 2
    trees.add(ast.BinOp(product, ast.Sub(), ast.Name("c")))  # a * b - c
    trees.add(ast.BinOp(ast.Name("a"), ast.Div(), ast.Constant(0)))  # fails: None
    env = CountingEnv(a=3, b=4, c=5)
    assert trees.evaluate(env) == [24.0, 7.0, None]
    # a * b and its names once; c once more in the second tree's own node; a for the third
    assert env.lookups == {"a": 2, "b": 1, "c": 1}
    env = CountingEnv(a=1, b=2, c=3)
    assert trees.evaluate(env) == [4.0, -1.0, None]
