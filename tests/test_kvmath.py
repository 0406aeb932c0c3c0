"""The KV byte formula, dtypes, presets and config.json reading, with hand-computed values."""

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from drill.errors import ConfigError
from drill.serving.hfconfig import shape_from_config, shape_from_config_dict
from drill.serving.kvmath import (
    DTYPE_BYTES,
    PRESETS_PATH,
    ModelShape,
    canonical_dtype,
    check_count,
    dtype_bytes,
    get_preset,
    kv_cache_bytes,
    kv_estimate,
    load_presets,
    parse_count,
    presets_from_mapping,
)

CONFIGS = Path(__file__).parent / "configs"


def _shape(layers=32, kv_heads=8, head_dim=128, dtype="fp16", **kw) -> ModelShape:
    return ModelShape("t", "test shape", layers, None, kv_heads, head_dim, dtype=dtype, **kw)


# --- the lesson's worked example ------------------------------------------------------


def test_lesson_example_one_request_is_half_a_gib():
    assert kv_cache_bytes(32, 8, 128, 4096, 2) == 536_870_912
    assert kv_cache_bytes(32, 8, 128, 4096, 2) == 2**29


def test_lesson_example_sixteen_requests_are_8_gib():
    assert kv_cache_bytes(32, 8, 128, 4096, 2, requests=16) == 8 * 2**30


def test_lesson_pitfall_two_kv_heads_one_byte():
    assert kv_cache_bytes(32, 2, 128, 4096, 1) == 2 * 32 * 2 * 128 * 4096 * 1
    assert kv_cache_bytes(32, 2, 128, 4096, 1) == 67_108_864


def test_reserving_8192_for_2048_live_wastes_three_quarters():
    e = kv_estimate(_shape(), 2048, requests=16, reserve=8192)
    assert e.waste_fraction == 0.75
    assert e.total_bytes == 16 * 2 * 32 * 8 * 128 * 2048 * 2  # 4 GiB live
    assert e.reserved_bytes == 17_179_869_184  # 16 GiB reserved
    # the waste does not depend on heads or dtype
    pitfall = kv_estimate(_shape(kv_heads=2, dtype="int8"), 2048, requests=16, reserve=8192)
    assert pitfall.waste_fraction == 0.75


def test_lesson_example_estimate_and_formula():
    e = kv_estimate(_shape(), 4096)
    assert (e.bytes_per_token, e.bytes_per_request, e.total_bytes) == (131_072, 2**29, 2**29)
    assert e.cached_tokens == 4096
    assert e.formula == (
        "2 · layers · kv_heads · head_dim · seq_len · dtype_bytes"
        " = 2 · 32 · 8 · 128 · 4096 · 2 = 536,870,912 bytes"
    )
    assert e.notes == ()
    assert e.reserved_bytes is None and e.waste_fraction is None


def test_estimate_with_requests_shows_them_in_the_formula():
    e = kv_estimate(_shape(), 4096, requests=16)
    assert e.total_bytes == 8_589_934_592
    assert e.bytes_per_request == 536_870_912
    assert e.formula.endswith("= 2 · 32 · 8 · 128 · 4096 · 2 · 16 = 8,589,934,592 bytes")


def test_reserve_below_live_length_is_an_error():
    with pytest.raises(ConfigError, match="reserve .* less than seq_len"):
        kv_estimate(_shape(), 4096, reserve=2048)


# --- dtypes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "width", "short"),
    [
        ("fp32", 4, "fp32"),
        ("float32", 4, "fp32"),
        ("FP16", 2, "fp16"),
        ("half", 2, "fp16"),
        ("torch.float16", 2, "fp16"),
        ("bf16", 2, "bf16"),
        ("bfloat16", 2, "bf16"),
        ("torch.bfloat16", 2, "bf16"),
        ("BFloat16", 2, "bf16"),
        ("fp8", 1, "fp8"),
        ("float8_e4m3fn", 1, "fp8"),
        ("float8_e5m2", 1, "fp8"),
        ("fp8_e4m3", 1, "fp8"),
        ("int8", 1, "int8"),
        ("int4", 0.5, "int4"),
        (" Int4 ", 0.5, "int4"),
    ],
)
def test_dtype_spellings(name, width, short):
    assert dtype_bytes(name) == width
    assert canonical_dtype(name) == short


def test_dtype_table_holds_the_documented_widths():
    assert DTYPE_BYTES["fp32"] == 4
    assert DTYPE_BYTES["bfloat16"] == 2
    assert DTYPE_BYTES["int8"] == 1
    assert DTYPE_BYTES["int4"] == 0.5


def test_unknown_dtype_lists_valid_names():
    with pytest.raises(ConfigError) as err:
        dtype_bytes("fp12")
    message = str(err.value)
    assert "'fp12'" in message
    assert "bf16" in message and "int4" in message and "float16" in message


# --- exact integers and validation ----------------------------------------------------


def test_int4_stays_exact():
    assert kv_cache_bytes(1, 1, 1, 1, 0.5) == 1
    assert kv_cache_bytes(32, 8, 128, 4096, 0.5) == 2**27
    assert isinstance(kv_cache_bytes(32, 8, 128, 4096, 0.5), int)


def test_a_fractional_byte_count_is_refused():
    with pytest.raises(ConfigError, match="not a whole number of bytes"):
        kv_cache_bytes(1, 1, 1, 1, 0.3)  # 2 · 0.3 = 0.6 bytes
    assert kv_cache_bytes(1, 1, 1, 5, 0.3) == 3  # 0.3 is read as 3/10, not its binary neighbour


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "seq_len must be at least 1, got 0"),
        (-4096, "seq_len must be at least 1, got -4096"),
        (4096.5, "seq_len must be a whole number, got 4096.5"),
        ("4096", "seq_len must be a whole number, got '4096'"),
        (True, "seq_len must be a whole number, got True"),
        (float("nan"), "seq_len must be a whole number, got nan"),
        (2**31 + 1, "seq_len = 2,147,483,649 is absurdly large"),
    ],
)
def test_bad_sizes_are_config_errors(value, message):
    with pytest.raises(ConfigError, match=message):
        kv_cache_bytes(32, 8, 128, value, 2)


def test_whole_floats_are_accepted_as_counts():
    assert check_count(4096.0, "seq_len") == 4096
    assert kv_cache_bytes(32.0, 8, 128, 4096, 2) == 536_870_912


def test_a_total_over_2_to_the_80_is_refused():
    with pytest.raises(ConfigError, match="absurdly large"):
        kv_cache_bytes(2**31, 2**31, 2**20, 2**31, 2)
    with pytest.raises(ConfigError, match="absurdly large"):
        kv_estimate(get_preset("llama-3.1-405b"), 2**31, requests=2**31)


@pytest.mark.parametrize("width", [0, -2, 17, float("inf"), "2", None])
def test_bad_dtype_widths_are_refused(width):
    with pytest.raises(ConfigError, match="dtype_bytes"):
        kv_cache_bytes(32, 8, 128, 4096, width)


@pytest.mark.parametrize(
    ("text", "value"), [("4096", 4096), ("4,096", 4096), ("1_000_000", 10**6), (" 16 ", 16)]
)
def test_parse_count_reads_typed_numbers(text, value):
    assert parse_count(text, "--seq") == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("4096.5", "--seq must be a whole number, got '4096.5'"),
        ("4k", "--seq must be a whole number, got '4k'"),
        ("", "--seq must be a whole number, got ''"),
        ("40,96", "--seq must be a whole number"),
        ("0", "--seq must be at least 1, got 0"),
        ("-5", "--seq must be at least 1, got -5"),
        ("99999999999", "--seq = 99,999,999,999 is absurdly large"),
    ],
)
def test_parse_count_refuses_what_is_not_a_count(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_count(text, "--seq")


# --- properties -----------------------------------------------------------------------

small = st.integers(min_value=1, max_value=4096)
widths = st.sampled_from([4, 2, 1, 0.5])


@given(small, small, small, small, widths, st.integers(min_value=1, max_value=512))
def test_kv_bytes_is_the_product(layers, kv_heads, head_dim, seq, width, requests):
    expected = layers * kv_heads * head_dim * seq * requests * int(2 * width)
    assert kv_cache_bytes(layers, kv_heads, head_dim, seq, width, requests) == expected


# the K+V factor times the element width, written out: 2 · 4, 2 · 2, 2 · 1, 2 · 0.5 bytes
KV_BYTES_PER_ELEMENT = {"fp32": 8, "bf16": 4, "fp8": 2, "int4": 1}


@given(small, small, small, small, st.sampled_from(sorted(KV_BYTES_PER_ELEMENT)))
def test_an_estimate_without_window_or_mla_is_the_formula(layers, kv_heads, head_dim, seq, dt):
    e = kv_estimate(_shape(layers, kv_heads, head_dim, dt), seq, requests=3)
    per_token = KV_BYTES_PER_ELEMENT[dt] * layers * kv_heads * head_dim
    assert e.bytes_per_token == per_token
    assert e.bytes_per_request == per_token * seq
    assert e.total_bytes == per_token * seq * 3
    assert e.cached_tokens == seq


@given(st.integers(min_value=1, max_value=2**31))
def test_parse_count_reads_back_any_count_with_separators(n):
    assert parse_count(f"{n:,}", "n") == n
    assert parse_count(f"{n:_}", "n") == n
    assert parse_count(str(n), "n") == n


# --- presets --------------------------------------------------------------------------

# bytes per token at each preset's own dtype, worked by hand:
# 2 · layers · kv_heads · head_dim · dtype_bytes, or layers · (latent + rope) · dtype_bytes
PRESET_BYTES_PER_TOKEN = {
    "llama-3-8b": 131_072,  # 2·32·8·128·2
    "llama-3-70b": 327_680,  # 2·80·8·128·2
    "llama-3.1-405b": 516_096,  # 2·126·8·128·2
    "mistral-7b-v0.1": 131_072,  # 2·32·8·128·2
    "mixtral-8x7b": 131_072,  # 2·32·8·128·2
    "qwen2.5-7b": 57_344,  # 2·28·4·128·2
    "qwen2.5-72b": 327_680,  # 2·80·8·128·2
    "gemma-2-9b": 344_064,  # 2·42·8·256·2
    "phi-3-mini": 393_216,  # 2·32·32·96·2
    "deepseek-v3": 70_272,  # 61·(512+64)·2
    "opt-13b": 819_200,  # 2·40·40·128·2, the PagedAttention paper's 800 KB
}

# layers, q_heads, kv_heads, head_dim, hidden, as in each model's public config.json
PRESET_SHAPES = {
    "llama-3-8b": (32, 32, 8, 128, 4096),
    "llama-3-70b": (80, 64, 8, 128, 8192),
    "llama-3.1-405b": (126, 128, 8, 128, 16384),
    "mistral-7b-v0.1": (32, 32, 8, 128, 4096),
    "mixtral-8x7b": (32, 32, 8, 128, 4096),
    "qwen2.5-7b": (28, 28, 4, 128, 3584),
    "qwen2.5-72b": (80, 64, 8, 128, 8192),
    "gemma-2-9b": (42, 16, 8, 256, 3584),
    "phi-3-mini": (32, 32, 32, 96, 3072),
    "deepseek-v3": (61, 128, 128, 128, 7168),
    "opt-13b": (40, 40, 40, 128, 5120),
}


def test_the_preset_list_is_the_documented_one():
    assert set(load_presets()) == set(PRESET_BYTES_PER_TOKEN)


@pytest.mark.parametrize(("name", "per_token"), sorted(PRESET_BYTES_PER_TOKEN.items()))
def test_preset_bytes_per_token(name, per_token):
    assert kv_estimate(get_preset(name), 1).bytes_per_token == per_token


@pytest.mark.parametrize(("name", "numbers"), sorted(PRESET_SHAPES.items()))
def test_preset_shapes_match_the_public_configs(name, numbers):
    s = get_preset(name)
    assert (s.layers, s.q_heads, s.kv_heads, s.head_dim, s.hidden) == numbers


def test_opt_13b_is_800_kib_per_token():
    assert kv_estimate(get_preset("opt-13b"), 1).bytes_per_token == 819_200
    assert get_preset("opt-13b").dtype == "fp16"


def test_every_preset_carries_what_question_banks_use():
    for name, s in load_presets().items():
        fields = (s.layers, s.kv_heads, s.q_heads, s.head_dim, s.hidden, s.dtype, s.params)
        assert None not in fields, name
        assert s.source, name
        assert dtype_bytes(s.dtype) in (1, 2, 4), name
        assert s.params > 10**9, name


def test_window_and_mla_presets():
    assert get_preset("mistral-7b-v0.1").sliding_window == 4096
    assert get_preset("mistral-7b-v0.1").window_layers == 32
    gemma = get_preset("gemma-2-9b")
    assert (gemma.sliding_window, gemma.window_layers, gemma.global_layers) == (4096, 21, 21)
    for name in ("mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b", "llama-3-8b"):
        assert get_preset(name).sliding_window is None, name
    ds = get_preset("deepseek-v3")
    assert (ds.kv_lora_rank, ds.qk_rope_head_dim, ds.is_mla) == (512, 64, True)


def test_get_preset_ignores_case():
    assert get_preset(" LLaMA-3-8B ").name == "llama-3-8b"


def test_unknown_preset_suggests_the_closest_names():
    with pytest.raises(ConfigError) as err:
        get_preset("lama-3-8b")
    assert str(err.value) == (
        "unknown preset 'lama-3-8b'; did you mean llama-3-8b, llama-3-70b, llama-3.1-405b?"
    )


def test_unknown_preset_with_nothing_close_lists_all():
    with pytest.raises(ConfigError, match="known: llama-3-8b, .*opt-13b"):
        get_preset("zzzz")


def test_load_presets_returns_a_fresh_dict():
    presets = load_presets()
    presets.pop("opt-13b")
    assert "opt-13b" in load_presets()


_GOOD_ENTRY = {
    "display_name": "X",
    "layers": 2,
    "q_heads": 4,
    "kv_heads": 2,
    "head_dim": 8,
    "hidden": 32,
    "dtype": "bfloat16",
    "params": 1000,
    "source": "made up",
}


def test_presets_from_mapping_reads_a_good_entry():
    shape = presets_from_mapping({"x": _GOOD_ENTRY})["x"]
    assert (shape.name, shape.dtype, shape.window_layers) == ("x", "bf16", 0)
    windowed = presets_from_mapping({"x": {**_GOOD_ENTRY, "sliding_window": 16}})["x"]
    assert windowed.window_layers == 2  # all layers unless said otherwise


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({k: v for k, v in _GOOD_ENTRY.items() if k != "hidden"}, "preset 'x': missing hidden"),
        ({**_GOOD_ENTRY, "heads": 4}, "preset 'x': unknown heads"),
        ({**_GOOD_ENTRY, "layers": -2}, "preset 'x': layers must be at least 1"),
        ({**_GOOD_ENTRY, "q_heads": 5}, r"preset 'x': q_heads \(5\) must be a multiple"),
        ({**_GOOD_ENTRY, "dtype": "fp12"}, "preset 'x': unknown dtype 'fp12'"),
        ({**_GOOD_ENTRY, "kv_lora_rank": 8}, "needs both kv_lora_rank and qk_rope_head_dim"),
        ({**_GOOD_ENTRY, "window_layers": 1}, "window_layers is set but sliding_window is not"),
        ("nope", "preset 'x': expected a mapping of fields"),
    ],
)
def test_presets_from_mapping_names_the_bad_entry(entry, message):
    with pytest.raises(ConfigError, match=message):
        presets_from_mapping({"x": entry})


def test_presets_file_must_be_a_mapping():
    with pytest.raises(ConfigError, match="expected a mapping of preset names"):
        presets_from_mapping(["llama"])


# --- Hugging Face config.json ---------------------------------------------------------


def test_llama_config():
    s = shape_from_config(CONFIGS / "llama-3-8b.json")
    assert (s.layers, s.q_heads, s.kv_heads, s.head_dim, s.hidden) == (32, 32, 8, 128, 4096)
    assert s.dtype == "bf16" and s.sliding_window is None
    assert kv_estimate(s, 4096).bytes_per_request == 536_870_912


def test_opt_config_gives_800_kib_per_token():
    s = shape_from_config(CONFIGS / "opt-13b.json")
    assert s.name == "facebook/opt-13b"
    assert kv_estimate(s, 1).bytes_per_token == 819_200


def test_mistral_v01_window_caps_the_cache():
    s = shape_from_config(CONFIGS / "mistral-7b-v0.1.json")
    assert (s.sliding_window, s.window_layers) == (4096, 32)
    long = kv_estimate(s, 8192)
    assert long.cached_tokens == 4096
    assert long.bytes_per_request == 536_870_912  # 2·32·8·128·4096·2, not 8192 tokens
    assert long.bytes_per_token == 131_072
    assert long.notes[-1] == "sliding window: every layer keeps only the last 4,096 tokens"
    assert "min(seq_len, window)" in long.formula
    full = kv_estimate(s, 8192, ignore_window=True)
    assert full.bytes_per_request == 1_073_741_824  # 2·32·8·128·8192·2
    assert full.cached_tokens == 8192
    assert "ignored" in full.notes[-1]


def test_mistral_window_not_reached():
    e = kv_estimate(shape_from_config(CONFIGS / "mistral-7b-v0.1.json"), 2048)
    assert e.bytes_per_request == 268_435_456  # 2·32·8·128·2048·2
    assert "not reached" in e.notes[-1]


def test_reservation_on_a_windowed_model_is_capped_too():
    e = kv_estimate(get_preset("mistral-7b-v0.1"), 2048, reserve=8192)
    assert e.reserved_bytes == 536_870_912  # 4096 tokens, the window, per layer
    assert e.waste_fraction == 0.5


def test_qwen2_config_with_sliding_window_switched_off():
    s = shape_from_config(CONFIGS / "qwen2.5-7b.json")
    assert s.sliding_window is None and s.window_layers == 0
    assert (s.layers, s.q_heads, s.kv_heads, s.head_dim) == (28, 28, 4, 128)
    assert kv_estimate(s, 1).bytes_per_token == 57_344  # 2·28·4·128·2
    assert kv_estimate(s, 32768).bytes_per_request == 1_879_048_192  # 57,344 · 32,768


def test_gemma2_explicit_head_dim_and_alternating_window():
    s = shape_from_config(CONFIGS / "gemma-2-9b.json")
    assert s.head_dim == 256  # not 3584 / 16 = 224
    assert (s.sliding_window, s.window_layers, s.global_layers) == (4096, 21, 21)
    assert kv_estimate(s, 1).bytes_per_token == 344_064  # 2·42·8·256·2
    assert kv_estimate(s, 4096).bytes_per_request == 1_409_286_144  # 344,064 · 4,096
    e = kv_estimate(s, 8192)
    assert e.bytes_per_request == 2_113_929_216  # 2·8·256·2 · (21·4096 + 21·8192)
    assert e.formula == (
        "2 · kv_heads · head_dim · (window_layers · min(seq_len, window) + global_layers · "
        "seq_len) · dtype_bytes = 2 · 8 · 256 · (21 · 4096 + 21 · 8192) · 2 = 2,113,929,216 bytes"
    )
    assert e.notes[-1] == (
        "sliding window: 21 of 42 layers keep only the last 4,096 tokens; "
        "the other 21 attend globally and keep all 8,192"
    )


def test_deepseek_v3_mla_config():
    s = shape_from_config(CONFIGS / "deepseek-v3.json")
    assert (s.kv_lora_rank, s.qk_rope_head_dim, s.layers) == (512, 64, 61)
    e = kv_estimate(s, 4096)
    assert e.bytes_per_token == 61 * (512 + 64) * 2
    assert e.bytes_per_token == 70_272
    assert e.bytes_per_request == 287_834_112  # 70,272 · 4,096
    assert e.formula == (
        "layers · (kv_lora_rank + qk_rope_head_dim) · seq_len · dtype_bytes"
        " = 61 · (512 + 64) · 4096 · 2 = 287,834,112 bytes"
    )
    assert "no factor 2" in e.notes[0]
    assert kv_estimate(s, 1, dtype_bytes="fp8").bytes_per_token == 35_136  # 61·576·1


def test_phi3_and_mixtral_configs():
    phi = shape_from_config(CONFIGS / "phi-3-mini-4k.json")
    assert (phi.head_dim, phi.sliding_window, phi.window_layers) == (96, 2047, 32)
    mixtral = shape_from_config(CONFIGS / "mixtral-8x7b.json")
    assert mixtral.sliding_window is None


_SHAPE_FIELDS = (
    "layers q_heads kv_heads head_dim hidden dtype sliding_window window_layers "
    "kv_lora_rank qk_rope_head_dim"
).split()

# Read by hand from each tests/configs file: num_hidden_layers, num_attention_heads,
# num_key_value_heads (absent: as many as query heads), head_dim (absent: hidden_size /
# heads; MLA: v_head_dim), hidden_size, torch_dtype, the sliding window where the config
# turns it on, how many layers it covers, and the MLA latent widths.
CONFIG_SHAPES = {
    "llama-3-8b": ("llama-3-8b.json", (32, 32, 8, 128, 4096, "bf16", None, 0, None, None)),
    "mistral-7b-v0.1": (
        "mistral-7b-v0.1.json",
        (32, 32, 8, 128, 4096, "bf16", 4096, 32, None, None),
    ),
    "mixtral-8x7b": ("mixtral-8x7b.json", (32, 32, 8, 128, 4096, "bf16", None, 0, None, None)),
    # sliding_window 131072 is in the file, but use_sliding_window is false
    "qwen2.5-7b": ("qwen2.5-7b.json", (28, 28, 4, 128, 3584, "bf16", None, 0, None, None)),
    # every other layer is windowed: 21 of 42
    "gemma-2-9b": ("gemma-2-9b.json", (42, 16, 8, 256, 3584, "bf16", 4096, 21, None, None)),
    "phi-3-mini": ("phi-3-mini-4k.json", (32, 32, 32, 96, 3072, "bf16", 2047, 32, None, None)),
    "deepseek-v3": ("deepseek-v3.json", (61, 128, 128, 128, 7168, "bf16", None, 0, 512, 64)),
    "opt-13b": ("opt-13b.json", (40, 40, 40, 128, 5120, "fp16", None, 0, None, None)),
}


@pytest.mark.parametrize(
    ("preset", "config", "fields"), [(p, *v) for p, v in CONFIG_SHAPES.items()]
)
def test_a_config_and_its_preset_give_the_shape_the_config_states(preset, config, fields):
    for shape in (shape_from_config(CONFIGS / config), get_preset(preset)):
        assert tuple(getattr(shape, name) for name in _SHAPE_FIELDS) == fields, shape.name


_BASE = {
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "hidden_size": 512,
    "torch_dtype": "float16",
}


def test_config_defaults_kv_heads_to_query_heads_and_derives_head_dim():
    s = shape_from_config_dict({k: v for k, v in _BASE.items() if k != "num_key_value_heads"})
    assert (s.kv_heads, s.head_dim) == (8, 64)


def test_config_reads_the_newer_dtype_key_and_nested_text_config():
    s = shape_from_config_dict({"dtype": "bfloat16", "text_config": {**_BASE, "torch_dtype": None}})
    assert (s.layers, s.dtype) == (4, "bf16")


def test_config_without_dtype_needs_one_for_an_estimate():
    s = shape_from_config_dict({k: v for k, v in _BASE.items() if k != "torch_dtype"})
    assert s.dtype is None
    with pytest.raises(ConfigError, match="names no dtype"):
        kv_estimate(s, 16)
    assert kv_estimate(s, 16, dtype_bytes="fp16").total_bytes == 2 * 4 * 2 * 64 * 16 * 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"num_hidden_layers": None},
            r"^missing the layer count \(looked for num_hidden_layers, n_layer, num_layers and"
            r" n_layers\)$",
        ),
        (
            {"num_attention_heads": None},
            r"^missing the attention head count \(looked for num_attention_heads, n_head,"
            r" num_heads and n_heads\)$",
        ),
        ({"num_key_value_heads": 3}, r"num_attention_heads \(8\) is not a multiple of num_key"),
        ({"num_key_value_heads": -2}, "num_key_value_heads must be at least 1, got -2"),
        ({"num_hidden_layers": 0}, "num_hidden_layers must be at least 1, got 0"),
        ({"num_hidden_layers": 4.5}, "num_hidden_layers must be a whole number"),
        ({"num_hidden_layers": "4"}, "num_hidden_layers must be a whole number"),
        ({"hidden_size": 500}, r"hidden_size \(500\) is not a multiple of num_attention_heads"),
        ({"hidden_size": None}, "missing field head_dim"),
        ({"head_dim": -64}, "head_dim must be at least 1"),
        ({"torch_dtype": "float12"}, "torch_dtype: unknown dtype 'float12'"),
        ({"sliding_window": 0}, "sliding_window must be at least 1"),
        ({"kv_lora_rank": 512}, "missing field qk_rope_head_dim"),
    ],
)
def test_bad_config_fields_are_named(change, message):
    with pytest.raises(ConfigError, match=message):
        shape_from_config_dict({**_BASE, **change})


def test_explicit_head_dim_wins_over_hidden_size():
    assert shape_from_config_dict({**_BASE, "head_dim": 128}).head_dim == 128


def test_layer_types_say_which_layers_are_windowed():
    layer_types = ["sliding_attention", "full_attention", "sliding_attention", "sliding_attention"]
    s = shape_from_config_dict({**_BASE, "sliding_window": 16, "layer_types": layer_types})
    assert (s.sliding_window, s.window_layers) == (16, 3)
    with pytest.raises(ConfigError, match="layer_types must list one entry"):
        shape_from_config_dict({**_BASE, "sliding_window": 16, "layer_types": ["full_attention"]})
    none = shape_from_config_dict(
        {**_BASE, "sliding_window": 16, "layer_types": ["full_attention"] * 4}
    )
    assert none.sliding_window is None


def test_sliding_window_pattern_makes_every_nth_layer_global():
    # Gemma 3 style: 12 layers, pattern 6 -> layers 6 and 12 global, 10 windowed
    s = shape_from_config_dict(
        {**_BASE, "num_hidden_layers": 12, "sliding_window": 1024, "sliding_window_pattern": 6}
    )
    assert (s.window_layers, s.global_layers) == (10, 2)


def test_qwen2_max_window_layers_when_the_window_is_on():
    s = shape_from_config_dict(
        {**_BASE, "sliding_window": 32, "use_sliding_window": True, "max_window_layers": 1}
    )
    assert s.window_layers == 3
    off = shape_from_config_dict(
        {**_BASE, "sliding_window": 32, "use_sliding_window": True, "max_window_layers": 4}
    )
    assert off.sliding_window is None


def test_config_folder_is_read_through_its_config_json(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(_BASE))
    assert shape_from_config(tmp_path).layers == 4


def test_missing_config_file_names_the_path(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(ConfigError, match=f"config file not found: {path}"):
        shape_from_config(path)


def test_config_that_is_not_json_names_the_path(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"num_hidden_layers": 32,')
    with pytest.raises(ConfigError) as err:
        shape_from_config(path)
    assert str(err.value).startswith(f"{path} is not valid JSON (line 1")


def test_config_that_is_not_utf8_names_the_path(tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match=f"cannot read config file {path}"):
        shape_from_config(path)


def test_config_that_is_not_an_object_names_the_path(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("[1, 2, 3]")
    with pytest.raises(ConfigError, match=f"{path} must hold a JSON object, not a list"):
        shape_from_config(path)


def test_bad_field_in_a_file_names_file_and_field(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**_BASE, "num_key_value_heads": 3}))
    with pytest.raises(ConfigError, match=f"^{path}: num_attention_heads .* num_key_value_heads"):
        shape_from_config(path)


# --- what a user is told, word for word, and the edges of each limit -------------------


def _refusal(call, *args, **kwargs) -> str:
    with pytest.raises(ConfigError) as refused:
        call(*args, **kwargs)
    return str(refused.value)


def test_a_dtype_that_is_not_a_name_is_refused_with_what_was_given():
    assert _refusal(dtype_bytes, 2) == "dtype must be a name such as bf16, got 2"


def test_an_unknown_dtype_lists_every_valid_name():
    assert _refusal(dtype_bytes, "fp12") == (
        "unknown dtype 'fp12'; valid names: bf16, bfloat16, float16, float32, float8, "
        "float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, fp16, fp32, fp8, half, "
        "int4, int8 (any float8_* too)"
    )


def test_any_float8_spelling_is_one_byte_fp8():
    assert (dtype_bytes("float8_e3m4"), canonical_dtype("Float8_E8M0FNU")) == (1.0, "fp8")


def test_a_long_bad_count_is_shown_cut_at_40_characters():
    assert _refusal(parse_count, "x" * 40, "n") == f"n must be a whole number, got '{'x' * 40}'"
    assert _refusal(parse_count, "x" * 41, "n") == f"n must be a whole number, got '{'x' * 37}...'"


def test_a_count_of_over_100_digits_is_refused_by_its_length():
    assert _refusal(parse_count, "1" + "0" * 100, "n") == (
        "n has 101 digits: absurdly large (the limit is 2,147,483,648)"
    )
    assert _refusal(parse_count, "-" + "9" * 101, "n") == (
        f"n must be at least 1, got '-{'9' * 36}...'"
    )


def test_a_count_of_100_digits_is_read_and_refused_as_too_large():
    too_large = "n = 1" + ",000" * 33 + " is absurdly large (the limit is 2,147,483,648)"
    assert _refusal(parse_count, "1" + "0" * 99, "n") == too_large
    # separators and leading zeros are not digits of the number
    assert _refusal(parse_count, "1" + ",000" * 33, "n") == too_large
    assert _refusal(parse_count, "1" + "_000" * 33, "n") == too_large
    assert parse_count("+" + "0" * 200 + "5", "n") == 5


def test_a_count_over_the_callers_limit_names_the_limit():
    assert _refusal(parse_count, "5000", "--blocks", maximum=4096) == (
        "--blocks = 5,000 is absurdly large (the limit is 4,096)"
    )


def test_sixteen_bytes_per_element_is_the_widest_dtype_accepted():
    assert kv_cache_bytes(1, 1, 1, 1, 16) == 32


def test_a_cache_of_exactly_2_to_the_80_bytes_is_accepted():
    assert kv_cache_bytes(2**17, 2**31, 2**31, 1, 1) == 2**80


def test_the_kv_cache_refusals_name_the_field():
    assert _refusal(kv_cache_bytes, 0, 8, 128, 1, 2) == "layers must be at least 1, got 0"
    assert _refusal(kv_cache_bytes, 32, 0, 128, 1, 2) == "kv_heads must be at least 1, got 0"
    assert _refusal(kv_cache_bytes, 32, 8, 0, 1, 2) == "head_dim must be at least 1, got 0"
    assert _refusal(kv_cache_bytes, 32, 8, 128, 1, 2, 0) == "requests must be at least 1, got 0"
    assert _refusal(kv_cache_bytes, 1, 1, 1, 1, 0.3) == (
        "the KV cache comes to 0.6 bytes, not a whole number of bytes"
    )


def test_a_model_shape_names_the_bad_field():
    assert _refusal(_shape, hidden=0) == "hidden must be at least 1, got 0"
    assert _refusal(_shape, dtype="bfloat16") == "dtype 'bfloat16' should be written 'bf16'"
    assert _refusal(_shape, window_layers=3) == "window_layers is set but sliding_window is not"
    assert _refusal(_shape, sliding_window=4096, window_layers=33) == (
        "window_layers must be between 1 and layers (32), got 33"
    )
    assert _refusal(_shape, kv_lora_rank=512) == (
        "an MLA model needs both kv_lora_rank and qk_rope_head_dim"
    )


def test_parameters_are_capped_at_a_quadrillion():
    assert _shape(params=10**15).params == 10**15
    assert _refusal(_shape, params=10**15 + 1) == (
        "params = 1,000,000,000,000,001 is absurdly large (the limit is 1,000,000,000,000,000)"
    )


def test_active_parameters_are_at_most_all_of_them():
    assert _shape(params=1000, active_params=1000).active == 1000
    assert _refusal(_shape, params=1000, active_params=1001) == (
        "active_params = 1,001 is absurdly large (the limit is 1,000)"
    )
    assert _shape(active_params=10**15).active == 10**15
    assert _refusal(_shape, active_params=10**15 + 1) == (
        "active_params = 1,000,000,000,000,001 is absurdly large "
        "(the limit is 1,000,000,000,000,000)"
    )


def test_a_single_windowed_layer_is_allowed():
    assert _shape(sliding_window=4096, window_layers=1).global_layers == 31


def test_preset_refusals_name_the_presets_file_and_the_preset():
    assert _refusal(presets_from_mapping, {}) == (
        "presets.yaml: expected a mapping of preset names to model shapes"
    )
    for name, shown in (("Llama", "'Llama'"), ("  ", "'  '"), (7, "7")):
        assert _refusal(presets_from_mapping, {name: _GOOD_ENTRY}) == (
            f"presets.yaml: preset {shown}: preset names are lower-case strings"
        )
    two_missing = {k: v for k, v in _GOOD_ENTRY.items() if k not in ("hidden", "layers")}
    assert _refusal(presets_from_mapping, {"x": two_missing}) == (
        "presets.yaml: preset 'x': missing layers, hidden"
    )
    assert _refusal(presets_from_mapping, {"x": {**_GOOD_ENTRY, "zeta": 1, "alpha": 2}}) == (
        "presets.yaml: preset 'x': unknown alpha, zeta"
    )


def test_a_presets_own_window_layers_are_kept():
    entry = {**_GOOD_ENTRY, "sliding_window": 16, "window_layers": 1}
    assert presets_from_mapping({"x": entry})["x"].window_layers == 1


def test_the_presets_file_reads_as_the_documented_shapes():
    # read past load_presets' cache, so every line of the reading is what this test runs
    shapes = presets_from_mapping(yaml.safe_load(PRESETS_PATH.read_text(encoding="utf-8")))
    assert set(shapes) == set(PRESET_BYTES_PER_TOKEN)
    llama = shapes["llama-3-70b"]
    assert (llama.layers, llama.q_heads, llama.kv_heads, llama.head_dim) == (80, 64, 8, 128)
    assert (llama.dtype, llama.params, llama.window_layers) == ("bf16", 70_600_000_000, 0)
    mistral = shapes["mistral-7b-v0.1"]
    assert (mistral.sliding_window, mistral.window_layers) == (4096, 32)


def test_estimate_refusals_name_the_field():
    assert _refusal(kv_estimate, _shape(), 0) == "seq_len must be at least 1, got 0"
    assert _refusal(kv_estimate, _shape(), 1, requests=0) == "requests must be at least 1, got 0"
    assert _refusal(kv_estimate, _shape(), 1, reserve=0) == "reserve must be at least 1, got 0"
    assert _refusal(kv_estimate, _shape(), 4096, reserve=2048) == (
        "reserve (2,048 tokens) is less than seq_len (4,096 tokens); "
        "a request cannot hold more than it reserved"
    )


def test_a_fractional_or_huge_estimate_names_the_part_that_is():
    one_element = _shape(layers=1, kv_heads=1, head_dim=1)
    assert _refusal(kv_estimate, one_element, 1, 0.3) == (
        "one token's cache comes to 0.6 bytes, not a whole number of bytes"
    )
    # 1 byte per token, but 9 token-layers (1 windowed at 1 token, 4 global at 2) of 0.2
    windowed = _shape(layers=5, kv_heads=1, head_dim=1, sliding_window=1, window_layers=1)
    assert _refusal(kv_estimate, windowed, 2, 0.1) == (
        "one request comes to 1.8 bytes, not a whole number of bytes"
    )
    huge = _shape(layers=1, kv_heads=2**31, head_dim=2**31, dtype="fp8")  # 2**63 bytes a token
    assert kv_estimate(huge, 2**17).total_bytes == 2**80
    assert _refusal(kv_estimate, huge, 2**17, requests=2) == (
        "the total comes to 2.42e+24 bytes, absurdly large (over 2**80)"
    )
    assert _refusal(kv_estimate, huge, 2**16, reserve=2**18) == (
        "the reservation comes to 2.42e+24 bytes, absurdly large (over 2**80)"
    )


def test_reserving_exactly_the_live_length_wastes_nothing():
    e = kv_estimate(_shape(), 4096, reserve=4096)
    assert (e.reserve_tokens, e.reserved_bytes, e.waste_fraction) == (4096, 536_870_912, 0.0)


def test_an_estimate_carries_what_it_was_asked():
    shape = _shape()
    e = kv_estimate(shape, 4096, "int8", requests=2, reserve=8192)
    assert e.shape is shape
    assert (e.dtype, e.dtype_bytes, e.seq_len, e.requests, e.reserve_tokens) == (
        "int8", 1.0, 4096, 2, 8192,
    )  # fmt: skip


def test_two_requests_are_shown_in_the_formula():
    assert kv_estimate(_shape(), 4096, requests=2).formula == (
        "2 · layers · kv_heads · head_dim · seq_len · dtype_bytes · requests"
        " = 2 · 32 · 8 · 128 · 4096 · 2 · 2 = 1,073,741,824 bytes"
    )


def test_an_ignored_window_counts_every_layer_at_full_length():
    e = kv_estimate(_shape(sliding_window=4096, window_layers=16), 8192, ignore_window=True)
    assert e.formula == (
        "2 · layers · kv_heads · head_dim · seq_len · dtype_bytes"
        " = 2 · 32 · 8 · 128 · 8192 · 2 = 1,073,741,824 bytes"
    )
    assert e.notes == ("sliding window of 4,096 tokens ignored: every layer counted at all 8,192 tokens",)


def test_a_window_on_every_layer_caps_the_formulas_tokens():
    every = _shape(sliding_window=4096, window_layers=32)
    e = kv_estimate(every, 8192)
    assert e.formula == (
        "2 · layers · kv_heads · head_dim · min(seq_len, window) · dtype_bytes"
        " = 2 · 32 · 8 · 128 · 4096 · 2 = 536,870,912 bytes"
    )
    assert e.notes == ("sliding window: every layer keeps only the last 4,096 tokens",)
    assert kv_estimate(every, 4096).notes == (
        "sliding window of 4,096 tokens not reached at 4,096 tokens: nothing is dropped",
    )


def _heads(q_heads, kv_heads) -> ModelShape:
    return ModelShape("t", "test shape", 32, q_heads, kv_heads, 128, dtype="fp16")


def test_the_notes_say_how_heads_are_shared():
    assert kv_estimate(_heads(32, 8), 16).notes == (
        "grouped-query attention: 32 query heads share 8 KV heads, "
        "and only the 8 KV heads are cached",
    )
    assert kv_estimate(_heads(8, 1), 16).notes == (
        "multi-query attention: 8 query heads share one KV head, "
        "and only that one KV head is cached",
    )
    assert kv_estimate(_heads(8, 8), 16).notes == ()  # as many KV heads as query heads
    mla = ModelShape("d", "mla", 2, 16, 16, 128, dtype="bf16", kv_lora_rank=512, qk_rope_head_dim=64)
    assert kv_estimate(mla, 16).notes == (
        "multi-head latent attention: each layer caches one 512-element compressed KV latent "
        "plus a 64-element rotary key per token, shared by all heads; no separate K and V, "
        "so no factor 2",
    )
