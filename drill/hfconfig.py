"""Reading a Hugging Face `config.json` into a `drill.kvmath.ModelShape`.

Fields read: num_hidden_layers, num_attention_heads, num_key_value_heads (defaults
to num_attention_heads), head_dim (wins over hidden_size / num_attention_heads),
hidden_size, torch_dtype (or dtype), sliding_window with the switches configs carry
(use_sliding_window, layer_types, sliding_window_pattern, max_window_layers), and
the MLA fields kv_lora_rank / qk_rope_head_dim. A missing or contradictory field is
a ConfigError naming it. A file over MAX_CONFIG_BYTES (4 MiB; real ones are a few
KiB) is refused without reading it all.
"""

from __future__ import annotations

from pathlib import Path

from drill.errors import ConfigError
from drill.json_input import JSONInputError, parse_json
from drill.kvmath import ModelShape, canonical_dtype, check_count
from drill.text import printable

MAX_CONFIG_BYTES = 4 * 1024 * 1024


def shape_from_config(path: str | Path) -> ModelShape:
    """Read a Hugging Face config.json (or a folder holding one) into a ModelShape."""
    path = Path(path)
    if path.is_dir():
        path = path / "config.json"
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"cannot read config file {path}: {reason}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path} is larger than 4 MiB; a config.json is a few KiB")
    try:
        data = parse_json(text)
    except JSONInputError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object, not a {type(data).__name__}")
    # the name is printed: a file may not put escape sequences on the user's terminal
    name = printable(str(data.get("_name_or_path") or path.parent.name or path.stem))
    try:
        return shape_from_config_dict(data, name=name, source=str(path))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _int_field(d: dict, key: str) -> int:
    """A required count field."""
    if d.get(key) is None:
        raise ConfigError(f"missing field {key}")
    return check_count(d[key], key)


def _optional_int_field(d: dict, key: str) -> int | None:
    return None if d.get(key) is None else check_count(d[key], key)


def shape_from_config_dict(
    d: dict, name: str = "config", source: str = "config.json"
) -> ModelShape:
    """The shape described by config.json fields (num_hidden_layers, head_dim...)."""
    if not isinstance(d, dict):
        raise ConfigError(f"a config must be a JSON object, not a {type(d).__name__}")
    # multimodal checkpoints nest the language model's fields under text_config
    if "num_hidden_layers" not in d and isinstance(d.get("text_config"), dict):
        outer_dtype = d.get("torch_dtype") or d.get("dtype")
        d = dict(d["text_config"])
        if d.get("torch_dtype") is None and d.get("dtype") is None:
            d["torch_dtype"] = outer_dtype
    layers = _int_field(d, "num_hidden_layers")
    q_heads = _int_field(d, "num_attention_heads")
    kv_heads = _optional_int_field(d, "num_key_value_heads") or q_heads
    if q_heads % kv_heads:
        raise ConfigError(
            f"num_attention_heads ({q_heads}) is not a multiple of num_key_value_heads ({kv_heads})"
        )
    hidden = _optional_int_field(d, "hidden_size")
    kv_lora_rank = _optional_int_field(d, "kv_lora_rank")
    qk_rope = None
    if kv_lora_rank is not None:
        qk_rope = _int_field(d, "qk_rope_head_dim")
        # MLA's per-head width d_h: the paper's MHA comparison uses it for K and V
        head_dim = _optional_int_field(d, "v_head_dim") or _optional_int_field(
            d, "qk_nope_head_dim"
        )
    else:
        head_dim = None
    # an explicit head_dim wins over hidden_size / heads (Gemma 2 9B: 256, not 3584/16 = 224)
    head_dim = head_dim or _optional_int_field(d, "head_dim")
    if head_dim is None:
        if hidden is None:
            raise ConfigError("missing field head_dim (and no hidden_size to derive it)")
        if hidden % q_heads:
            raise ConfigError(
                f"hidden_size ({hidden}) is not a multiple of num_attention_heads ({q_heads}) "
                "and there is no head_dim field"
            )
        head_dim = hidden // q_heads
    raw_dtype = d.get("torch_dtype") or d.get("dtype")
    dtype = None
    if raw_dtype is not None:
        try:
            dtype = canonical_dtype(raw_dtype)
        except ConfigError as exc:
            raise ConfigError(f"torch_dtype: {exc}") from None
    window, window_layers = _window_from_config(d, layers)
    return ModelShape(
        name=name,
        display_name=name,
        layers=layers,
        q_heads=q_heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        hidden=hidden,
        dtype=dtype,
        sliding_window=window,
        window_layers=window_layers,
        kv_lora_rank=kv_lora_rank,
        qk_rope_head_dim=qk_rope,
        source=source,
    )


def _window_from_config(d: dict, layers: int) -> tuple[int | None, int]:
    """(sliding_window, number of windowed layers), honouring the switches configs carry."""
    # Qwen2 configs carry a sliding_window value with use_sliding_window: false
    if d.get("sliding_window") is None or d.get("use_sliding_window") is False:
        return None, 0
    window = check_count(d["sliding_window"], "sliding_window")
    layer_types = d.get("layer_types")
    pattern = d.get("sliding_window_pattern", d.get("_sliding_window_pattern"))
    if layer_types is not None:
        if not isinstance(layer_types, list) or len(layer_types) != layers:
            raise ConfigError(f"layer_types must list one entry for each of the {layers} layers")
        windowed = sum(1 for t in layer_types if t == "sliding_attention")
    elif pattern is not None:
        pattern = check_count(pattern, "sliding_window_pattern")
        windowed = layers - layers // pattern  # every pattern-th layer is global
    elif d.get("model_type") == "gemma2":
        windowed = (layers + 1) // 2  # layers 0, 2, 4... are local, the others global
    elif d.get("use_sliding_window") is True and d.get("max_window_layers") is not None:
        # Qwen2: layers from max_window_layers on use the window
        windowed = max(0, layers - check_count(d["max_window_layers"], "max_window_layers"))
    else:
        windowed = layers
    return (window, windowed) if windowed else (None, 0)
