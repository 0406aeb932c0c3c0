"""How many KV heads a Hugging Face config.json means, in every spelling configs use, with
the bytes worked out by hand: 2 (K and V) · layers · KV heads · head_dim · dtype bytes ·
tokens."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from drill.cli import cli
from drill.errors import ConfigError
from drill.serving.hfconfig import shape_from_config, shape_from_config_dict
from drill.serving.kvmath import kv_estimate

CONFIGS = Path(__file__).parent / "configs"


# file, tokens: (layers, query heads, KV heads, head_dim, dtype, bytes per token, bytes)
REAL_CONFIGS = {
    # RefinedWebModel: n_layer, n_head, hidden_size 4544 / 71 = 64, multi_query: 1 KV head.
    # 2 · 32 · 1 · 64 · 2 = 8,192 bytes a token; · 2,048 = 16,777,216 = 16 MiB
    # (71 KV heads would be 1,191,182,336 bytes, 1.11 GiB)
    ("falcon-7b.json", 2048): (32, 71, 1, 64, "bf16", 8_192, 16_777_216),
    # as transformers saves a Falcon-7B: num_kv_heads 71 beside multi_query true (ignored,
    # new_decoder_architecture false); float16
    ("falcon-7b-saved.json", 2048): (32, 71, 1, 64, "fp16", 8_192, 16_777_216),
    # new_decoder_architecture: num_kv_heads 8; 8192 / 128 = 64.
    # 2 · 60 · 8 · 64 · 2 = 122,880 a token; · 2,048 = 251,658,240 = 240 MiB
    ("falcon-40b.json", 2048): (60, 128, 8, 64, "bf16", 122_880, 251_658_240),
    # the first Falcon-40B config (RefinedWeb): n_head_kv 8
    ("falcon-40b-rw.json", 2048): (60, 128, 8, 64, "bf16", 122_880, 251_658_240),
    # GPT-BigCode: n_embd 6144 / n_head 48 = 128, multi_query: 1 KV head.
    # 2 · 40 · 1 · 128 · 2 = 20,480 a token; · 8,192 = 167,772,160 = 160 MiB
    ("starcoder.json", 8192): (40, 48, 1, 128, "fp16", 20_480, 167_772_160),
    # Llava-NeXT 34B: the language model under text_config, the dtype outside it.
    # 7168 / 56 = 128; 2 · 60 · 8 · 128 · 2 = 245,760 a token; · 4,096 = 1,006,632,960
    ("llava-v1.6-34b.json", 4096): (60, 56, 8, 128, "bf16", 245_760, 1_006_632_960),
}


@pytest.mark.parametrize(("config", "tokens"), list(REAL_CONFIGS))
def test_real_configs_give_the_kv_heads_their_models_cache(config, tokens):
    layers, q_heads, kv_heads, head_dim, dtype, per_token, total = REAL_CONFIGS[config, tokens]
    shape = shape_from_config(CONFIGS / config)
    assert (shape.layers, shape.q_heads, shape.kv_heads, shape.head_dim, shape.dtype) == (
        layers,
        q_heads,
        kv_heads,
        head_dim,
        dtype,
    )
    estimate = kv_estimate(shape, tokens)
    assert estimate.bytes_per_token == per_token
    assert estimate.bytes_per_request == total


def test_kv_config_for_falcon_7b_through_the_cli():
    result = CliRunner().invoke(
        cli, ["kv", "--config", str(CONFIGS / "falcon-7b.json"), "--seq", "2048", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["bytes_per_request"] == 16_777_216
    assert (data["shape"]["kv_heads"], data["shape"]["q_heads"]) == (1, 71)


def test_a_llava_config_that_leaves_the_counts_to_defaults_says_what_it_looked_for():
    """Llava 1.5's text_config leaves out what equals LlamaConfig's defaults."""
    path = CONFIGS / "llava-1.5-7b.json"
    with pytest.raises(ConfigError) as caught:
        shape_from_config(path)
    assert str(caught.value) == (
        f"{path}: text_config: missing the layer count (looked for num_hidden_layers, n_layer,"
        " num_layers and n_layers); transformers would fill it in with the default for"
        " model_type llama, which this reader does not guess"
    )


# --------------------------------------------------------------------- other spellings

CHATGLM3 = {  # ChatGLM3-6B: num_layers, kv_channels, multi_query_group_num
    "model_type": "chatglm",
    "num_layers": 28,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "kv_channels": 128,
    "multi_query_attention": True,
    "multi_query_group_num": 2,
    "torch_dtype": "float16",
}
DBRX = {  # DBRX: n_layers, n_heads, d_model, attn_config.kv_n_heads
    "model_type": "dbrx",
    "d_model": 6144,
    "n_heads": 48,
    "n_layers": 40,
    "attn_config": {"clip_qkv": 8, "kv_n_heads": 8, "rope_theta": 500000},
    "torch_dtype": "bfloat16",
}
MPT_7B = {  # MPT-7B: attn_config.attn_type multihead_attention
    "model_type": "mpt",
    "d_model": 4096,
    "n_heads": 32,
    "n_layers": 32,
    "attn_config": {"alibi": True, "attn_type": "multihead_attention", "prefix_lm": False},
    "torch_dtype": "bfloat16",
}
GPT_NEO = {"num_layers": 24, "num_heads": 16, "hidden_size": 2048, "torch_dtype": "float32"}
GPT2 = {"n_layer": 12, "n_head": 12, "n_embd": 768, "torch_dtype": "float32"}


@pytest.mark.parametrize(
    ("config", "tokens", "kv_heads", "head_dim", "total"),
    [
        # 2 · 28 · 2 · 128 · 2 = 28,672 a token; · 8,192 = 234,881,024
        (CHATGLM3, 8192, 2, 128, 234_881_024),
        # 6144 / 48 = 128; 2 · 40 · 8 · 128 · 2 = 163,840 a token; · 32,768 = 5,368,709,120
        (DBRX, 32768, 8, 128, 5_368_709_120),
        # 2 · 32 · 32 · 128 · 2 = 524,288 a token; · 2,048 = 1,073,741,824
        (MPT_7B, 2048, 32, 128, 1_073_741_824),
        (
            {**MPT_7B, "attn_config": {"attn_type": "multiquery_attention"}},
            2048,
            1,
            128,
            33_554_432,  # 2 · 32 · 1 · 128 · 2 · 2,048
        ),
        # 2048 / 16 = 128; 2 · 24 · 16 · 128 · 4 = 393,216 a token; · 2,048 = 805,306,368
        (GPT_NEO, 2048, 16, 128, 805_306_368),
        # 768 / 12 = 64; 2 · 12 · 12 · 64 · 4 = 73,728 a token; · 1,024 = 75,497,472
        (GPT2, 1024, 12, 64, 75_497_472),
        # GPT-BigCode without multi-query (SantaCoder's MHA variant): as many as query heads
        ({**GPT2, "multi_query": False}, 1024, 12, 64, 75_497_472),
        # Gemma 3 style: everything under text_config, the dtype only outside
        (
            {
                "model_type": "gemma3",
                "torch_dtype": "bfloat16",
                "text_config": {
                    "model_type": "gemma3_text",
                    "num_hidden_layers": 34,
                    "num_attention_heads": 8,
                    "num_key_value_heads": 4,
                    "head_dim": 256,
                    "hidden_size": 2560,
                },
            },
            1024,
            4,
            256,
            142_606_336,  # 2 · 34 · 4 · 256 · 2 = 139,264 a token; · 1,024
        ),
    ],
)
def test_every_spelling_gives_its_kv_heads(config, tokens, kv_heads, head_dim, total):
    shape = shape_from_config_dict(config)
    assert (shape.kv_heads, shape.head_dim) == (kv_heads, head_dim)
    assert kv_estimate(shape, tokens).bytes_per_request == total


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {**GPT2, "num_hidden_layers": 24},
            "num_hidden_layers (24) and n_layer (12) disagree",
        ),
        (
            {**GPT2, "num_attention_heads": 16},
            "num_attention_heads (16) and n_head (12) disagree",
        ),
        ({**GPT2, "hidden_size": 1024}, "hidden_size (1024) and n_embd (768) disagree"),
        (
            {**GPT2, "num_key_value_heads": 4, "num_kv_heads": 6},
            "num_key_value_heads (4) and num_kv_heads (6) disagree",
        ),
        (
            {**GPT2, "multi_query": True, "num_kv_heads": 4},
            "multi_query (1 KV head) and num_kv_heads (4) disagree",
        ),
        (
            {**CHATGLM3, "num_key_value_heads": 4},
            "num_key_value_heads (4) and multi_query_group_num (2) disagree",
        ),
        ({**CHATGLM3, "head_dim": 64}, "head_dim (64) and kv_channels (128) disagree"),
        (
            {**DBRX, "num_key_value_heads": 4},
            "num_key_value_heads (4) and attn_config.kv_n_heads (8) disagree",
        ),
        (
            {**GPT2, "multi_query": "yes"},
            "multi_query must be true or false, got 'yes'",
        ),
        (
            {**GPT2, "new_decoder_architecture": True},
            "new_decoder_architecture is true but the config has no KV head count"
            " (looked for num_key_value_heads, num_kv_heads and n_head_kv)",
        ),
        (
            {k: v for k, v in CHATGLM3.items() if k != "multi_query_group_num"},
            "missing the KV head count of multi_query_attention (looked for multi_query_group_num)",
        ),
        (
            {**MPT_7B, "attn_config": {"attn_type": "grouped_query_attention"}},
            "attn_config.attn_type is grouped_query_attention but has no kv_n_heads",
        ),
        (
            {**MPT_7B, "attn_config": {"attn_type": "sparse"}},
            "attn_config.attn_type 'sparse' is not one this reader knows",
        ),
        # an unknown architecture: the counts under names this reader does not know
        (
            {"model_type": "mystery", "layer_count": 32, "heads": 32, "hidden_size": 4096},
            "missing the layer count (looked for num_hidden_layers, n_layer, num_layers"
            " and n_layers)",
        ),
        (
            {"model_type": "mystery", "n_layer": 32, "heads": 32, "hidden_size": 4096},
            "missing the attention head count (looked for num_attention_heads, n_head,"
            " num_heads and n_heads)",
        ),
        (
            {"model_type": "t5", "is_encoder_decoder": True, "num_layers": 6, "num_heads": 8},
            "an encoder-decoder model (is_encoder_decoder is true): this calculator sizes"
            " the cache of a decoder-only one",
        ),
        (
            {"text_config": {**GPT2, "n_head": 11}},
            "text_config: n_embd (768) is not a multiple of n_head (11) and there is no"
            " head_dim field",
        ),
    ],
)
def test_contradictions_and_missing_counts_are_one_line_naming_the_fields(config, message):
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        shape_from_config_dict(config)


def test_a_contradiction_in_a_file_is_one_line_on_the_command_line(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**GPT2, "num_attention_heads": 16}))
    result = CliRunner().invoke(cli, ["kv", "--config", str(path), "--seq", "16"])
    assert result.exit_code == 1
    assert result.output == (f"Error: {path}: num_attention_heads (16) and n_head (12) disagree\n")


def test_kv_config_for_falcon_7b_says_one_kv_head_in_words():
    result = CliRunner().invoke(
        cli, ["kv", "--config", str(CONFIGS / "falcon-7b.json"), "--seq", "2048"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1] == "shape        32 layers · 1 KV head (71 query heads) · head_dim 64"
    assert lines[-1] == (
        "  - multi-query attention: 71 query heads share one KV head, and only that one KV "
        "head is cached"
    )
