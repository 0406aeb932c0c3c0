"""KV-cache byte math: the formula, dtypes, model shapes, presets and config.json.

This module is the one home of the formula::

    bytes = 2 · layers · kv_heads · head_dim · seq_len · dtype_bytes   (× requests)

The 2 is one Key and one Value vector per layer, per KV head, per cached token.
Under grouped-query or multi-query attention `kv_heads` is the number of KV heads,
not of query heads. Two architecture features change what is cached:

* sliding-window attention: a windowed layer keeps at most `sliding_window` tokens;
  some models (Gemma 2) alternate windowed and global layers;
* multi-head latent attention (MLA, DeepSeek-V2/V3): every layer caches one
  compressed latent of `kv_lora_rank + qk_rope_head_dim` elements per token,
  shared by all heads; there is no separate K and V, so no factor 2.

Allocator overhead, block rounding and kernel workspace are not counted. Byte
counts are exact integers (a half-byte int4 element is kept as a fraction).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from drill.errors import ConfigError, unknown_name_error
from drill.quantities.units import format_number

PRESETS_PATH = Path(__file__).with_name("presets.yaml")

# Sanity caps: nothing real comes near them, typos and overflow do.
MAX_COUNT = 2**31  # layers, heads, head_dim, seq_len, requests
MAX_TOTAL_BYTES = 2**80

# Bytes per element of the cache. Keys are lower case; see dtype_bytes() for lookup.
DTYPE_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "float32": 4.0,
    "fp16": 2.0,
    "float16": 2.0,
    "half": 2.0,
    "bf16": 2.0,
    "bfloat16": 2.0,
    "fp8": 1.0,
    "float8": 1.0,
    "float8_e4m3fn": 1.0,
    "float8_e4m3fnuz": 1.0,
    "float8_e5m2": 1.0,
    "float8_e5m2fnuz": 1.0,
    "int8": 1.0,
    "int4": 0.5,
}

# Every spelling above maps to one short name, used in output and presets.
_CANONICAL_DTYPE = {
    **{k: "fp32" for k in ("fp32", "float32")},
    **{k: "fp16" for k in ("fp16", "float16", "half")},
    **{k: "bf16" for k in ("bf16", "bfloat16")},
    "int8": "int8",
    "int4": "int4",
}


def _dtype_key(name: str) -> str:
    if not isinstance(name, str):
        raise ConfigError(f"dtype must be a name such as bf16, got {name!r}")
    key = name.strip().lower()
    return key.removeprefix("torch.")


def _lookup_dtype(name: str) -> tuple[str, float]:
    key = _dtype_key(name)
    if key in DTYPE_BYTES:
        return _CANONICAL_DTYPE.get(key, "fp8"), DTYPE_BYTES[key]
    if key.startswith(("float8", "fp8")):  # float8_e4m3fn and the other fp8 spellings
        return "fp8", 1.0
    valid = ", ".join(sorted(DTYPE_BYTES))
    raise ConfigError(f"unknown dtype {name!r}; valid names: {valid} (any float8_* too)")


def dtype_bytes(name: str) -> float:
    """Bytes per element of a dtype name: 'bf16', 'bfloat16', 'torch.float16', 'int4'..."""
    return _lookup_dtype(name)[1]


def canonical_dtype(name: str) -> str:
    """The short name of a dtype: 'bfloat16' -> 'bf16', 'torch.float16' -> 'fp16'."""
    return _lookup_dtype(name)[0]


# --- validation -------------------------------------------------------------------


def check_count(value: Any, name: str, *, maximum: int = MAX_COUNT) -> int:
    """A positive whole number no larger than `maximum`, or ConfigError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ConfigError(f"{name} must be a whole number, got {value!r}")
        value = int(value)
    if value < 1:
        raise ConfigError(f"{name} must be at least 1, got {value}")
    if value > maximum:
        raise ConfigError(f"{name} = {value:,} is absurdly large (the limit is {maximum:,})")
    return value


_COUNT_TEXT = re.compile(r"[+-]?\d+(?:[,_]\d{3})*")


def parse_count(text: str, name: str, *, maximum: int = MAX_COUNT) -> int:
    """Read a count typed by a user: '4096', '4,096' or '4_096'; checked by check_count."""
    cleaned = text.strip()
    shown = text if len(text) <= 40 else text[:37] + "..."
    if not _COUNT_TEXT.fullmatch(cleaned):
        raise ConfigError(f"{name} must be a whole number, got {shown!r}")
    digits = cleaned.replace(",", "").replace("_", "").lstrip("+-").lstrip("0")
    if len(digits) > 100:  # int() refuses thousands of digits, and no count needs 100
        if cleaned.startswith("-"):
            raise ConfigError(f"{name} must be at least 1, got {shown!r}")
        raise ConfigError(
            f"{name} has {len(digits):,} digits: absurdly large (the limit is {maximum:,})"
        )
    return check_count(int(cleaned.replace(",", "").replace("_", "")), name, maximum=maximum)


def _exact_dtype_bytes(value: Any) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise ConfigError(f"dtype_bytes must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"dtype_bytes must be a finite number, got {value!r}")
    # str() keeps a typed 0.3 as 3/10 rather than its nearest binary fraction
    exact = Fraction(str(value)) if isinstance(value, float) else Fraction(value)
    if exact <= 0 or exact > 16:
        raise ConfigError(f"dtype_bytes must be above 0 and at most 16, got {value}")
    return exact


def _whole_bytes(exact: Fraction, what: str) -> int:
    if exact.denominator != 1:
        raise ConfigError(f"{what} comes to {float(exact):,} bytes, not a whole number of bytes")
    if exact > MAX_TOTAL_BYTES:
        raise ConfigError(f"{what} comes to {float(exact):.3g} bytes, absurdly large (over 2**80)")
    return int(exact)


# --- the formula ------------------------------------------------------------------


def cache_bytes(per_token_layer: int, token_layers: int, dtype_bytes: Any, what: str) -> int:
    """The KV formula: elements per token per layer × token-layers × bytes per element.

    Every layer caches, for every token it holds, a K and a V vector per KV head
    (`per_token_layer` = 2 · kv_heads · head_dim), or one MLA latent of
    kv_lora_rank + qk_rope_head_dim elements. `token_layers` sums the tokens each layer
    holds over the layers and requests (seq_len · layers · requests without a window).
    Exact: int4's half byte gives whole bytes or a ConfigError naming `what`.
    """
    return _whole_bytes(per_token_layer * token_layers * _exact_dtype_bytes(dtype_bytes), what)


def kv_cache_bytes(
    layers: int,
    kv_heads: int,
    head_dim: int,
    seq_len: int,
    dtype_bytes: float,
    requests: int = 1,
) -> int:
    """2 · layers · kv_heads · head_dim · seq_len · dtype_bytes · requests, exactly."""
    per_token_layer = 2 * check_count(kv_heads, "kv_heads") * check_count(head_dim, "head_dim")
    token_layers = (
        check_count(layers, "layers")
        * check_count(seq_len, "seq_len")
        * check_count(requests, "requests")
    )
    return cache_bytes(per_token_layer, token_layers, dtype_bytes, "the KV cache")


# --- model shapes -----------------------------------------------------------------


@dataclass(frozen=True)
class ModelShape:
    """What the KV cache of one model depends on.

    `window_layers` of the `layers` use a sliding window of `sliding_window` tokens
    (0 when the model has no window); the rest attend globally. `kv_lora_rank` and
    `qk_rope_head_dim` are set only for MLA models. `params` is the approximate total
    parameter count; `q_heads`, `hidden` and `params` may be None for a shape typed
    by hand or read from a config that lacks them. `active_params`, set only for a
    mixture-of-experts model, is what one token passes through (`active` gives it for
    any model). `params_source` says where the count came from (a config's shapes, --params),
    or why there is none.
    """

    name: str
    display_name: str
    layers: int
    q_heads: int | None
    kv_heads: int
    head_dim: int
    hidden: int | None = None
    dtype: str | None = None  # canonical short name, e.g. "bf16"
    params: int | None = None
    sliding_window: int | None = None
    window_layers: int = 0
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    source: str = ""
    active_params: int | None = None
    params_source: str = ""  # how `params` was found, in words ("" for a preset: published)

    def __post_init__(self) -> None:
        for field in ("layers", "kv_heads", "head_dim"):
            check_count(getattr(self, field), field)
        for field in ("q_heads", "hidden", "sliding_window", "kv_lora_rank", "qk_rope_head_dim"):
            if getattr(self, field) is not None:
                check_count(getattr(self, field), field)
        if self.params is not None:
            check_count(self.params, "params", maximum=10**15)
        if self.active_params is not None:
            check_count(self.active_params, "active_params", maximum=self.params or 10**15)
        if self.q_heads is not None and self.q_heads % self.kv_heads:
            raise ConfigError(
                f"q_heads ({self.q_heads}) must be a multiple of kv_heads ({self.kv_heads})"
            )
        if self.dtype is not None and canonical_dtype(self.dtype) != self.dtype:
            raise ConfigError(
                f"dtype {self.dtype!r} should be written {canonical_dtype(self.dtype)!r}"
            )
        if self.sliding_window is None and self.window_layers:
            raise ConfigError("window_layers is set but sliding_window is not")
        if self.sliding_window is not None and not 1 <= self.window_layers <= self.layers:
            raise ConfigError(
                f"window_layers must be between 1 and layers ({self.layers}), "
                f"got {self.window_layers}"
            )
        if (self.kv_lora_rank is None) != (self.qk_rope_head_dim is None):
            raise ConfigError("an MLA model needs both kv_lora_rank and qk_rope_head_dim")

    @property
    def active(self) -> int | None:
        """Parameters one token passes through: all of them, unless a mixture of experts."""
        return self.active_params if self.active_params is not None else self.params

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def global_layers(self) -> int:
        """Layers that attend to (and cache) every token."""
        return self.layers - self.window_layers


# --- presets ----------------------------------------------------------------------

PUBLISHED = "as its authors publish it"
_PRESET_REQUIRED = (
    "display_name", "layers", "q_heads", "kv_heads", "head_dim", "hidden", "dtype", "params",
    "source",
)  # fmt: skip
_PRESET_OPTIONAL = (
    "sliding_window", "window_layers", "kv_lora_rank", "qk_rope_head_dim", "active_params",
)  # fmt: skip


def presets_from_mapping(data: Any, origin: str = "presets.yaml") -> dict[str, ModelShape]:
    """Turn the parsed presets file into shapes; a bad entry is a ConfigError naming it."""
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"{origin}: expected a mapping of preset names to model shapes")
    shapes: dict[str, ModelShape] = {}
    for name, entry in data.items():
        where = f"{origin}: preset {name!r}"
        if not isinstance(name, str) or name != name.lower() or not name.strip():
            raise ConfigError(f"{where}: preset names are lower-case strings")
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: expected a mapping of fields")
        missing = [k for k in _PRESET_REQUIRED if k not in entry]
        unknown = sorted(set(entry) - set(_PRESET_REQUIRED) - set(_PRESET_OPTIONAL))
        if missing or unknown:
            problem = (
                f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}"
            )
            raise ConfigError(f"{where}: {problem}")
        fields = dict(entry)
        if fields.get("sliding_window") is not None and "window_layers" not in fields:
            fields["window_layers"] = fields["layers"]
        try:
            fields["dtype"] = canonical_dtype(fields["dtype"])
            shapes[name] = ModelShape(name=name, params_source=PUBLISHED, **fields)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return shapes


@functools.lru_cache(maxsize=1)
def _cached_presets() -> tuple[tuple[str, ModelShape], ...]:
    try:
        data = yaml.safe_load(PRESETS_PATH.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the model presets {PRESETS_PATH.name}: {exc}") from None
    return tuple(presets_from_mapping(data, PRESETS_PATH.name).items())


def load_presets() -> dict[str, ModelShape]:
    """All presets from drill/serving/presets.yaml (read once), by name."""
    return dict(_cached_presets())


def get_preset(name: str) -> ModelShape:
    """A preset by name, ignoring case; unknown names suggest the closest ones."""
    presets = load_presets()
    key = name.strip().lower()
    if key in presets:
        return presets[key]
    raise unknown_name_error("preset", name, key, list(presets))


# --- estimates --------------------------------------------------------------------


@dataclass(frozen=True)
class KvEstimate:
    """The cache of `requests` requests of `seq_len` live tokens each, in bytes.

    `bytes_per_token` is one token's entries across all layers; `cached_tokens` is how
    many tokens a windowed layer holds per request (`seq_len` when no window applies).
    With a reservation, `reserved_bytes` is what `reserve_tokens` per request occupy and
    `waste_fraction` = 1 − total_bytes / reserved_bytes.
    """

    shape: ModelShape
    dtype: str | None
    dtype_bytes: float
    seq_len: int
    requests: int
    bytes_per_token: int
    cached_tokens: int
    bytes_per_request: int
    total_bytes: int
    formula: str  # symbols, then "=", the numbers and the result
    notes: tuple[str, ...]
    reserve_tokens: int | None = None
    reserved_bytes: int | None = None
    waste_fraction: float | None = None


def kv_estimate(
    shape: ModelShape,
    seq_len: int,
    dtype_bytes: float | str | None = None,
    requests: int = 1,
    reserve: int | None = None,
    ignore_window: bool = False,
) -> KvEstimate:
    """Bytes of KV cache for `shape`; `dtype_bytes` is a width, a dtype name or None.

    None uses the shape's own dtype. `reserve` is the tokens reserved per request
    while `seq_len` are live. `ignore_window` counts every layer at full length.
    """
    seq_len = check_count(seq_len, "seq_len")
    requests = check_count(requests, "requests")
    dtype, width = _resolve_dtype(shape, dtype_bytes)
    exact_width = _exact_dtype_bytes(width)

    window = None if ignore_window else shape.sliding_window
    window_layers = shape.window_layers if window is not None else 0
    global_layers = shape.layers - window_layers
    cached = min(seq_len, window) if window is not None else seq_len

    if shape.kv_lora_rank is not None and shape.qk_rope_head_dim is not None:  # MLA
        per_layer = shape.kv_lora_rank + shape.qk_rope_head_dim  # one latent, no K/V pair
    else:
        per_layer = 2 * shape.kv_heads * shape.head_dim

    def token_layers(tokens: int) -> int:
        capped = min(tokens, window) if window is not None else tokens
        return window_layers * capped + global_layers * tokens

    per_token = cache_bytes(per_layer, shape.layers, exact_width, "one token's cache")
    per_request = cache_bytes(per_layer, token_layers(seq_len), exact_width, "one request")
    total = cache_bytes(per_layer, token_layers(seq_len) * requests, exact_width, "the total")

    reserved = waste = reserve_tokens = None
    if reserve is not None:
        reserve_tokens = check_count(reserve, "reserve")
        if reserve_tokens < seq_len:
            raise ConfigError(
                f"reserve ({reserve_tokens:,} tokens) is less than seq_len ({seq_len:,} tokens); "
                "a request cannot hold more than it reserved"
            )
        reserved = cache_bytes(
            per_layer, token_layers(reserve_tokens) * requests, exact_width, "the reservation"
        )
        waste = float(1 - Fraction(total, reserved))

    formula = _formula(shape, seq_len, cached, window_layers, width, requests)
    formula += f" = {total:,} bytes"
    notes = _notes(shape, seq_len, window, window_layers, ignore_window)
    return KvEstimate(
        shape=shape,
        dtype=dtype,
        dtype_bytes=float(exact_width),
        seq_len=seq_len,
        requests=requests,
        bytes_per_token=per_token,
        cached_tokens=cached,
        bytes_per_request=per_request,
        total_bytes=total,
        formula=formula,
        notes=notes,
        reserve_tokens=reserve_tokens,
        reserved_bytes=reserved,
        waste_fraction=waste,
    )


def _resolve_dtype(shape: ModelShape, given: float | str | None) -> tuple[str | None, float]:
    if given is None:
        if shape.dtype is None:
            raise ConfigError(f"{shape.display_name} names no dtype; choose one (e.g. fp16)")
        return shape.dtype, dtype_bytes(shape.dtype)
    if isinstance(given, str):
        return canonical_dtype(given), dtype_bytes(given)
    return None, given


def _formula(shape, seq_len, cached, window_layers, width, requests) -> str:
    """The formula in symbols, then with this estimate's numbers (result not included)."""
    if shape.is_mla:
        head_sym, head = (
            "(kv_lora_rank + qk_rope_head_dim)",
            (f"({shape.kv_lora_rank} + {shape.qk_rope_head_dim})"),
        )
    else:
        head_sym, head = "kv_heads · head_dim", f"{shape.kv_heads} · {shape.head_dim}"
    lead_sym, lead = ("", "") if shape.is_mla else ("2 · ", "2 · ")
    global_layers = shape.layers - window_layers
    if window_layers and global_layers:
        tokens_sym = "(window_layers · min(seq_len, window) + global_layers · seq_len)"
        tokens = f"({window_layers} · {cached} + {global_layers} · {seq_len})"
        sym, nums = f"{lead_sym}{head_sym} · {tokens_sym}", f"{lead}{head} · {tokens}"
    else:
        seq_sym = "min(seq_len, window)" if window_layers else "seq_len"
        sym = f"{lead_sym}layers · {head_sym} · {seq_sym}"
        nums = f"{lead}{shape.layers} · {head} · {cached}"
    sym += " · dtype_bytes" + (" · requests" if requests > 1 else "")
    nums += f" · {format_number(width)}" + (f" · {requests}" if requests > 1 else "")
    return f"{sym} = {nums}"


def _notes(shape, seq_len, window, window_layers, ignore_window) -> tuple[str, ...]:
    notes: list[str] = []
    if shape.is_mla:
        notes.append(
            f"multi-head latent attention: each layer caches one {shape.kv_lora_rank}-element "
            f"compressed KV latent plus a {shape.qk_rope_head_dim}-element rotary key per token, "
            "shared by all heads; no separate K and V, so no factor 2"
        )
    elif shape.q_heads is not None and shape.q_heads > shape.kv_heads:
        if shape.kv_heads == 1:
            shared = f"multi-query attention: {shape.q_heads} query heads share one KV head"
            cached = "only that one KV head is cached"
        else:
            shared = (
                f"grouped-query attention: {shape.q_heads} query heads share "
                f"{shape.kv_heads} KV heads"
            )
            cached = f"only the {shape.kv_heads} KV heads are cached"
        notes.append(f"{shared}, and {cached}")
    if ignore_window and shape.sliding_window is not None:
        notes.append(
            f"sliding window of {shape.sliding_window:,} tokens ignored: "
            f"every layer counted at all {seq_len:,} tokens"
        )
    elif window is not None:
        if window_layers == shape.layers:
            which, rest = "every layer keeps", ""
        else:
            others = shape.layers - window_layers
            which = f"{window_layers} of {shape.layers} layers keep"
            rest = f"; the other {others} attend globally and keep all {seq_len:,}"
        if seq_len > window:
            notes.append(f"sliding window: {which} only the last {window:,} tokens{rest}")
        else:
            notes.append(
                f"sliding window of {window:,} tokens not reached at {seq_len:,} tokens: "
                "nothing is dropped"
            )
    return tuple(notes)
