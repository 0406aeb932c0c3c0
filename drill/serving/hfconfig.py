"""Reading a Hugging Face `config.json` into a `drill.serving.kvmath.ModelShape`.

Fields read, each in every spelling configs use (LAYER_FIELDS, HEAD_FIELDS...; two
spellings that disagree are a ConfigError naming both): the layers
(num_hidden_layers, n_layer, num_layers, n_layers), the query heads
(num_attention_heads, n_head, num_heads, n_heads), the KV heads (num_key_value_heads,
num_kv_heads, n_head_kv; multi_query true is one, unless new_decoder_architecture is
true; ChatGLM's multi_query_group_num; MPT's and DBRX's attn_config; none of them: as
many as the query heads), head_dim or kv_channels (wins over width / heads), the width
(hidden_size, n_embd, n_embed, d_model), torch_dtype (or dtype), sliding_window with the
switches configs carry (use_sliding_window, layer_types, sliding_window_pattern,
max_window_layers), and the MLA fields kv_lora_rank / qk_rope_head_dim; the parameter count
from the shapes (drill.serving.param_count), or why there is none. A multimodal
config's language model is read from text_config. A missing count names the fields
looked for; an encoder-decoder model is refused. A file over MAX_CONFIG_BYTES (4 MiB;
real ones are a few KiB) is refused without reading it all.
"""

from __future__ import annotations

from pathlib import Path

from drill.errors import ConfigError
from drill.json_input import JSONInputError, parse_json
from drill.serving.kvmath import ModelShape, canonical_dtype, check_count
from drill.serving.param_count import count_params
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
    # named by the config itself (its folder is often just "configs" or a snapshot hash);
    # the name is printed: a file may not put escape sequences on the user's terminal
    name = printable(str(data.get("_name_or_path") or data.get("model_type") or path.stem))
    try:
        return shape_from_config_dict(data, name=name, source=str(path))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


# The spellings of each count, as Hugging Face configs write them: Llama-style first, then
# GPT-2 / GPT-BigCode / Falcon's first configs (n_*), GPT-Neo and ChatGLM (num_*), MPT and
# DBRX (n_heads, n_layers, d_model). Two spellings in one config must agree.
LAYER_FIELDS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
HEAD_FIELDS = ("num_attention_heads", "n_head", "num_heads", "n_heads")
HIDDEN_FIELDS = ("hidden_size", "n_embd", "n_embed", "d_model")
HEAD_DIM_FIELDS = ("head_dim", "kv_channels")  # kv_channels: ChatGLM, Qwen (1)
KV_HEAD_FIELDS = ("num_key_value_heads", "num_kv_heads", "n_head_kv")
# what puts a config's language model under a key of its own (Llava, Gemma 3, Qwen2-VL...)
_TEXT_CONFIG = "text_config"


def _int_field(d: dict, key: str) -> int:
    """A required count field."""
    if d.get(key) is None:
        raise ConfigError(f"missing field {key}")
    return check_count(d[key], key)


def _optional_int_field(d: dict, key: str) -> int | None:
    return None if d.get(key) is None else check_count(d[key], key)


def _spelled(d: dict, names: tuple[str, ...]) -> tuple[int, str] | None:
    """(value, the field it came from) of the first of `names` the config sets, after
    checking that every other one it sets agrees; None when it sets none."""
    found = [(check_count(d[name], name), name) for name in names if d.get(name) is not None]
    for value, name in found[1:]:
        if value != found[0][0]:
            raise ConfigError(f"{found[0][1]} ({found[0][0]}) and {name} ({value}) disagree")
    return found[0] if found else None


def _required(d: dict, names: tuple[str, ...], what: str) -> tuple[int, str]:
    found = _spelled(d, names)
    if found is None:
        raise ConfigError(f"missing the {what} (looked for {_listed(names)})")
    return found


def _listed(names: tuple[str, ...]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def _switch(d: dict, key: str) -> bool | None:
    """A true/false field, None when absent."""
    value = d.get(key)
    if value is not None and not isinstance(value, bool):
        raise ConfigError(f"{key} must be true or false, got {value!r}")
    return value


def _kv_heads(d: dict, q_heads: int, q_name: str) -> tuple[int, str]:
    """(KV heads, what said so), from every way a config says it.

    * num_key_value_heads, num_kv_heads, n_head_kv: the count (they must agree);
    * multi_query true (Falcon-7B, GPT-BigCode/StarCoder): one KV head, except where
      new_decoder_architecture is true (Falcon-40B/180B), which takes num_kv_heads. A
      count beside multi_query that is neither 1 nor the query heads (transformers saves
      Falcon's num_kv_heads as the query heads, and ignores it) contradicts it;
    * multi_query_attention true (ChatGLM): multi_query_group_num KV heads;
    * attn_config (MPT, DBRX): attn_type multiquery_attention is one KV head,
      grouped_query_attention (or no attn_type, as DBRX writes it) kv_n_heads,
      multihead_attention as many as the query heads;
    * none of these: as many as the query heads.
    """
    explicit = _spelled(d, KV_HEAD_FIELDS)
    said: list[tuple[int, str]] = [explicit] if explicit else []
    new_arch = _switch(d, "new_decoder_architecture")
    if new_arch:
        if explicit is None:
            raise ConfigError(
                "new_decoder_architecture is true but the config has no KV head count"
                f" (looked for {_listed(KV_HEAD_FIELDS)})"
            )
    elif _switch(d, "multi_query"):
        if explicit is not None and explicit[0] not in (1, q_heads):
            raise ConfigError(f"multi_query (1 KV head) and {explicit[1]} ({explicit[0]}) disagree")
        said = [(1, "multi_query")]
    if _switch(d, "multi_query_attention"):
        said.append(
            _required(d, ("multi_query_group_num",), "KV head count of multi_query_attention")
        )
    attn = d.get("attn_config")
    if isinstance(attn, dict) and (found := _attn_config_kv(attn, q_heads)) is not None:
        said.append(found)
    for value, name in said[1:]:
        if value != said[0][0]:
            raise ConfigError(f"{said[0][1]} ({said[0][0]}) and {name} ({value}) disagree")
    return said[0] if said else (q_heads, q_name)


def _attn_config_kv(attn: dict, q_heads: int) -> tuple[int, str] | None:
    """The KV heads MPT's or DBRX's attn_config gives, None when it gives none."""
    kind = attn.get("attn_type")
    if kind == "multiquery_attention":
        return 1, "attn_config.attn_type"
    if kind == "multihead_attention":
        return q_heads, "attn_config.attn_type"
    if kind not in (None, "grouped_query_attention"):
        raise ConfigError(
            f"attn_config.attn_type {printable(str(kind))!r} is not one this reader knows"
        )
    if attn.get("kv_n_heads") is None:
        if kind is None:
            return None
        raise ConfigError("attn_config.attn_type is grouped_query_attention but has no kv_n_heads")
    return check_count(attn["kv_n_heads"], "attn_config.kv_n_heads"), "attn_config.kv_n_heads"


def _language_model(d: dict) -> dict:
    """The fields of the language model: multimodal checkpoints (Llava, Gemma 3, Qwen2-VL's
    newer configs) nest them under text_config, with the dtype often only outside."""
    nested = d.get(_TEXT_CONFIG)
    if not isinstance(nested, dict) or any(d.get(name) is not None for name in LAYER_FIELDS):
        return d
    outer_dtype = d.get("torch_dtype") or d.get("dtype")
    outer_tie = d.get("tie_word_embeddings")
    d = dict(nested)
    if d.get("torch_dtype") is None and d.get("dtype") is None:
        d["torch_dtype"] = outer_dtype
    if d.get("tie_word_embeddings") is None:
        d["tie_word_embeddings"] = outer_tie
    return d


def shape_from_config_dict(
    d: dict, name: str = "config", source: str = "config.json"
) -> ModelShape:
    """The shape described by config.json fields (num_hidden_layers, head_dim...)."""
    if not isinstance(d, dict):
        raise ConfigError(f"a config must be a JSON object, not a {type(d).__name__}")
    if d.get("is_encoder_decoder") is True:
        raise ConfigError(
            "an encoder-decoder model (is_encoder_decoder is true): this calculator sizes"
            " the cache of a decoder-only one"
        )
    inner = _language_model(d)
    if inner is d:
        return _shape(d, name, source)
    try:
        return _shape(inner, name, source)
    except ConfigError as exc:
        message = f"{_TEXT_CONFIG}: {exc}"
        if str(exc).startswith("missing") and isinstance(inner.get("model_type"), str):
            # transformers fills a field the nested config leaves out with its class default
            kind = printable(inner["model_type"])
            message += (
                f"; transformers would fill it in with the default for model_type {kind},"
                " which this reader does not guess"
            )
        raise ConfigError(message) from None


def _shape(d: dict, name: str, source: str) -> ModelShape:
    layers, _ = _required(d, LAYER_FIELDS, "layer count")
    q_heads, q_name = _required(d, HEAD_FIELDS, "attention head count")
    kv_heads, kv_name = _kv_heads(d, q_heads, q_name)
    if q_heads % kv_heads:
        raise ConfigError(f"{q_name} ({q_heads}) is not a multiple of {kv_name} ({kv_heads})")
    hidden_found = _spelled(d, HIDDEN_FIELDS)
    hidden = hidden_found[0] if hidden_found else None
    kv_lora_rank = _optional_int_field(d, "kv_lora_rank")
    qk_rope = None
    head_dim: int | None = None
    if kv_lora_rank is not None:
        qk_rope = _int_field(d, "qk_rope_head_dim")
        # MLA's per-head width d_h: the paper's MHA comparison uses it for K and V
        head_dim = _optional_int_field(d, "v_head_dim") or _optional_int_field(
            d, "qk_nope_head_dim"
        )
    # an explicit head_dim wins over hidden_size / heads (Gemma 2 9B: 256, not 3584/16 = 224)
    if head_dim is None:
        found = _spelled(d, HEAD_DIM_FIELDS)
        head_dim = found[0] if found else None
    if head_dim is None:
        if hidden is None or hidden_found is None:
            raise ConfigError(
                f"missing field head_dim (and no {_listed(HIDDEN_FIELDS)} to derive it)"
            )
        if hidden % q_heads:
            raise ConfigError(
                f"{hidden_found[1]} ({hidden}) is not a multiple of {q_name} ({q_heads}) "
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
    try:
        count = count_params(
            d, layers=layers, q_heads=q_heads, kv_heads=kv_heads, head_dim=head_dim, hidden=hidden
        )
        params, active, how = count.total, count.active, count.how
    except ConfigError as exc:  # the KV cache does not need it; --gpu says why it is missing
        params, active, how = None, None, str(exc)
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
        params=params,
        active_params=active,
        params_source=how,
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
