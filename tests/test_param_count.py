"""A config.json sizes a deployment: the parameter count (total and active) worked out from its
shapes, --params to override it, the model named by the config, and the GPUs listed."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from drill.cli import cli
from drill.commands.kv_serving import parse_param_count
from drill.serving import kvmath
from drill.serving.hfconfig import shape_from_config, shape_from_config_dict

CONFIGS = Path(__file__).parent / "configs"
NOTE = "  (roofline times from the spec sheet's peaks; communication between GPUs, "
NOTE += "activations and allocator overhead are left out)"


def run(*args: str):
    return CliRunner().invoke(cli, ["kv", *args])


def serving_lines(output: str) -> list[str]:
    return output.split("\n\n")[1].splitlines()


# --- must show: kv --config FILE --gpu h100 --tp 4, worked by hand ------------------------


def test_a_dense_config_sizes_a_deployment():
    # Llama 3 8B: h = 4096, 32 layers, 32 query heads and 8 KV heads of 128, MLP 14336 gated,
    # vocabulary 128256, output head untied.
    #   attention  q 4096·4096 + k, v 2·4096·1024 + o 4096·4096       =    41,943,040
    #   MLP        3 · 4096 · 14336                                     =   176,160,768
    #   32 layers  32 · 218,103,808                                     = 6,979,321,856
    #   embeddings 2 · 128256 · 4096                                    = 1,050,673,152
    #   total                                                           = 8,029,995,008
    # weights per GPU 8,029,995,008 · 2 / 4 = 4,014,997,504; KV per GPU 2 heads: 2·32·2·128·2
    # = 32,768 bytes a token, 268,435,456 per 8,192 tokens; 90% of 80 GiB = 77,309,411,328,
    # less the weights 73,294,413,824, holds 273 sequences.
    # TTFT = (8192 · 2 · 8,029,995,008 + 4·32·32·128 · 8192·8193/2) / 4 / (989e12 · 0.5)
    #      = 75.4 ms; TPOT = (4,014,997,504 + 268,435,456) / (3.35e12 · 0.7) = 1.83 ms
    result = run(
        *("--config", str(CONFIGS / "llama-3-8b.json"), "--gpu", "h100", "--tp", "4"),
        *("--seq", "8192", "--latency"),
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == f"model        llama ({CONFIGS / 'llama-3-8b.json'})"
    assert serving_lines(result.output) == [
        "params      8,029,995,008 (8.03B), counted from the config's shapes: 32 layers x "
        "(attention 41,943,040 + MLP 176,160,768) + embeddings 1,050,673,152; norms and biases "
        "left out",
        "per GPU     H100 SXM (989 TFLOP/s bf16, 3.35 TB/s, 80 GiB) x 4, tensor parallel",
        "weights     4,014,997,504 bytes (3.74 GiB): 8,029,995,008 params x 2 bytes / 4",
        "KV cache    2 of 8 KV heads per GPU: 32,768 bytes per token, 268,435,456 bytes "
        "(256 MiB) per 8,192-token sequence",
        "memory      90% of it usable, 72 GiB; 68.3 GiB left for the KV cache",
        "fits        273 sequences of 8,192 tokens at once",
        "efficiency  MFU 50%, MBU 70% of the spec sheet, from defaults typical of a tuned "
        "server (no engine run stored)",
        "TTFT        75.4 ms for a prompt of 8,192 tokens (compute-bound)",
        "TPOT        1.83 ms at batch 1, 8,192 tokens each (memory-bound): 547 tokens/s",
        NOTE,
    ]


def test_a_mixture_of_experts_config_sizes_a_deployment():
    # Mixtral 8x7B: as Llama 3 8B's attention (41,943,040), 8 experts of 3 · 4096 · 14336 =
    # 176,160,768 in every one of 32 layers, 2 per token, a router of 4096 · 8 = 32,768;
    # vocabulary 32000, untied: embeddings 2 · 32000 · 4096 = 262,144,000.
    #   total  = 32 · (41,943,040 + 8 · 176,160,768 + 32,768) + 262,144,000 = 46,702,526,464
    #   active = 32 · (41,943,040 + 2 · 176,160,768 + 32,768) + 262,144,000 = 12,879,659,008
    # weights per GPU: all of them, 23,351,263,232; 77,309,411,328 - that = 53,958,148,096
    # holds 201 sequences of 268,435,456 bytes. Prefill and decode run the active ones:
    # TTFT = (8192 · 2 · 12,879,659,008 + 17,594,060,980,224) / 4 / 494.5e12 = 116 ms;
    # TPOT at batch 1 reads 12,879,659,008 · 2 / 4 + 268,435,456 bytes at 2.345e12 B/s = 2.86 ms
    result = run(
        *("--config", str(CONFIGS / "mixtral-8x7b.json"), "--gpu", "h100", "--tp", "4"),
        *("--seq", "8192", "--latency"),
    )
    assert result.exit_code == 0, result.output
    assert serving_lines(result.output) == [
        "params      46,702,526,464 (46.7B) in all, 12,879,659,008 (12.9B) active per token, "
        "counted from the config's shapes: 32 of 32 layers with 8 experts of 176,160,768, 2 per "
        "token; norms and biases left out",
        "per GPU     H100 SXM (989 TFLOP/s bf16, 3.35 TB/s, 80 GiB) x 4, tensor parallel",
        "weights     23,351,263,232 bytes (21.7 GiB): 46,702,526,464 params x 2 bytes / 4",
        "KV cache    2 of 8 KV heads per GPU: 32,768 bytes per token, 268,435,456 bytes "
        "(256 MiB) per 8,192-token sequence",
        "memory      90% of it usable, 72 GiB; 50.3 GiB left for the KV cache",
        "fits        201 sequences of 8,192 tokens at once",
        "efficiency  MFU 50%, MBU 70% of the spec sheet, from defaults typical of a tuned "
        "server (no engine run stored)",
        "TTFT        116 ms for a prompt of 8,192 tokens (compute-bound)",
        "TPOT        2.86 ms at batch 1, 8,192 tokens each (memory-bound): 350 tokens/s",
        NOTE,
    ]


# --- the count, against the presets' published figures ------------------------------------

# config fixture -> preset; the derivation leaves out norms and biases (and DeepSeek-V3's
# multi-token-prediction layer), so it lands within 0.1% of the published total
PUBLISHED = {
    "llama-3-8b.json": "llama-3-8b",
    "mistral-7b-v0.1.json": "mistral-7b-v0.1",
    "mixtral-8x7b.json": "mixtral-8x7b",
    "qwen2.5-7b.json": "qwen2.5-7b",
    "gemma-2-9b.json": "gemma-2-9b",
    "phi-3-mini-4k.json": "phi-3-mini",
    "deepseek-v3.json": "deepseek-v3",
    "opt-13b.json": "opt-13b",
}


@pytest.mark.parametrize("config, preset", PUBLISHED.items())
def test_the_count_matches_the_published_total_within_a_tenth_of_a_percent(config, preset):
    shape = shape_from_config(CONFIGS / config)
    published = kvmath.get_preset(preset).params
    assert shape.params is not None and published is not None
    assert abs(shape.params - published) / published < 0.001


def test_exact_counts_of_real_configs():
    counted = {
        name: (shape.params, shape.active_params)
        for name in ("deepseek-v3", "mixtral-8x7b", "gemma-2-9b", "opt-13b", "falcon-7b")
        for shape in [shape_from_config(CONFIGS / f"{name}.json")]
    }
    assert counted == {
        # 61 layers of MLA attention 187,105,280; 3 dense MLPs of 3·7168·18432; 58 layers of
        # 256 routed + 1 shared experts of 3·7168·2048 = 44,040,192 and a 7168·256 router;
        # untied embeddings 2 · 129280 · 7168. Active: 8 routed + 1 shared per token. DeepSeek
        # publishes 671B and "37B activated"; the 0.55B above is its convention for embeddings
        "deepseek-v3": (671_025_397_760, 37_551_276_032),
        "mixtral-8x7b": (46_702_526_464, 12_879_659_008),
        # tie_word_embeddings absent: Gemma's default ties them, so one 256000 · 3584 table
        "gemma-2-9b": (9_241_100_288, None),
        # relu MLP of 2 matrices; learned positions (2048 + 2) · 5120
        "opt-13b": (12_850_800_640, None),
        # MLP width unnamed: 4 · 4544; multi-query attention; tied embeddings
        "falcon-7b": (6_921_420_800, None),
    }


def test_shared_experts_and_dense_first_layers():
    config = {
        "model_type": "tiny_moe", "hidden_act": "silu", "hidden_size": 64,
        "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 16, "vocab_size": 1000, "intermediate_size": 256,
        "moe_intermediate_size": 32, "n_routed_experts": 8, "n_shared_experts": 2,
        "num_experts_per_tok": 2, "first_k_dense_replace": 1, "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
    }  # fmt: skip
    # attention 64·64 + 2·64·32 + 64·64 = 12,288; layer 0 a dense MLP 3·64·256 = 49,152;
    # layers 1-3: 8 experts of 3·64·32 = 6,144, 2 shared (12,288), a router 64·8 = 512;
    # one tied table 1000·64 = 64,000.
    # total  = 64,000 + 4·12,288 + 49,152 + 3·(8·6,144 + 12,288 + 512) = 348,160
    # active = 64,000 + 4·12,288 + 49,152 + 3·(2·6,144 + 12,288 + 512) = 237,568
    shape = shape_from_config_dict(config)
    assert (shape.params, shape.active_params) == (348_160, 237_568)


def test_one_shared_expert_with_its_gate_and_dense_only_layers():
    config = {
        "model_type": "qwen2_moe", "hidden_size": 64, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000,
        "intermediate_size": 128, "moe_intermediate_size": 32,
        "shared_expert_intermediate_size": 64, "num_experts": 4, "num_experts_per_tok": 1,
        "decoder_sparse_step": 1, "mlp_only_layers": [0], "tie_word_embeddings": False,
    }  # fmt: skip
    # attention 4·64·64 = 16,384; layer 0 dense 3·64·128 = 24,576; layers 1-3: 4 experts of
    # 3·64·32 = 6,144, a shared one of 3·64·64 = 12,288 with its gate 64, a router 256;
    # untied 2·1000·64 = 128,000.
    # total  = 128,000 + 65,536 + 24,576 + 3·(4·6,144 + 12,352 + 256) = 329,664
    # active = 128,000 + 65,536 + 24,576 + 3·(6,144 + 12,352 + 256)   = 274,368
    shape = shape_from_config_dict(config)
    assert (shape.params, shape.active_params) == (329_664, 274_368)


def test_a_config_without_a_vocabulary_says_why_it_has_no_count(tmp_path):
    config = json.loads((CONFIGS / "llama-3-8b.json").read_text())
    del config["vocab_size"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = run("--config", str(path), "--gpu", "h100", "--seq", "8192")
    assert (result.exit_code, result.output) == (
        1,
        "Error: llama has no parameter count (missing field vocab_size, which the parameter "
        "count needs); give it with --params N (e.g. 8.03B), or use a preset\n",
    )
    given = run("--config", str(path), "--gpu", "h100", "--seq", "8192", "--params", "8.03B")
    assert given.exit_code == 0, given.output
    assert "params    8,030,000,000 (8.03B), as --params said" in given.output.splitlines()


def test_moe_fields_that_do_not_fit_leave_no_count_and_say_why():
    base = {"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 8, "vocab_size": 10}
    no_top_k = shape_from_config_dict({**base, "num_local_experts": 4})
    assert (no_top_k.params, no_top_k.params_source) == (
        None,
        "num_local_experts is set but num_experts_per_tok is not",
    )
    too_many = shape_from_config_dict({**base, "num_experts": 2, "num_experts_per_tok": 3})
    assert (too_many.params, too_many.params_source) == (
        None,
        "num_experts_per_tok (3) is more than num_experts (2)",
    )


# --- naming, --params, --list-gpus -------------------------------------------------------


def test_the_model_is_named_by_its_config_not_its_folder(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "config.json").write_text((CONFIGS / "mixtral-8x7b.json").read_text())
    data = json.loads(run("--config", str(folder), "--seq", "1", "--json").output)
    assert (data["shape"]["name"], data["shape"]["display_name"]) == ("mixtral", "mixtral")
    named = json.loads(
        run("--config", str(CONFIGS / "opt-13b.json"), "--seq", "1", "--json").output
    )
    assert named["shape"]["name"] == "facebook/opt-13b"


def test_params_override_the_model_and_are_checked():
    mixtral = ("--preset", "mixtral-8x7b", "--gpu", "h100", "--seq", "8192", "--json")
    serving = json.loads(run(*mixtral, "--params", "47B").output)["serving"]
    # the published active count stays, being below the new total
    assert (serving["params"], serving["active_params"]) == (47_000_000_000, 12_900_000_000)
    assert serving["params_source"] == "as --params said"
    both = json.loads(run(*mixtral, "--params", "46,700M", "--active-params", "13e9").output)
    assert (both["serving"]["params"], both["serving"]["active_params"]) == (
        46_700_000_000,
        13_000_000_000,
    )
    small = json.loads(run(*mixtral, "--params", "10B").output)["serving"]
    assert (small["params"], small["active_params"]) == (10_000_000_000, 10_000_000_000)
    errors = {
        ("--params", "lots"): "Error: --params must be a parameter count such as 8.03B or "
        "7240000000, got 'lots'\n",
        ("--params", "0.4"): "Error: --params must be a parameter count such as 8.03B or "
        "7240000000, got '0.4'\n",
        ("--params", "1B", "--active-params", "2B"): "Error: --active-params "
        "(2,000,000,000) is more than the 1,000,000,000 parameters in all\n",
    }
    for extra, message in errors.items():
        result = run(*mixtral, *extra)
        assert (result.exit_code, result.output) == (1, message)
    no_gpu = run("--preset", "mixtral-8x7b", "--seq", "8192", "--params", "47B")
    assert (no_gpu.exit_code, no_gpu.output) == (
        2,
        "Error: --tp, --weights-dtype, --params and --latency size a deployment: add --gpu NAME\n",
    )


@given(st.integers(min_value=1, max_value=10**15))
def test_a_count_written_with_thousands_separators_reads_back(n):
    assert parse_param_count(f"{n:,}", "--params") == n
    assert parse_param_count(str(n), "--params") == n


def test_list_gpus_shows_their_figures():
    result = run("--list-gpus")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "name            GPU              memory   bandwidth     bf16 dense"
    assert "h100            H100 SXM         80 GiB   3.35 TB/s    989 TFLOP/s" in lines
    assert "rtx-4090        RTX 4090         24 GiB  1.008 TB/s  165.2 TFLOP/s" in lines
    assert len(lines) == 17  # header, 15 GPUs, the note on units
    data = json.loads(run("--list-gpus", "--json").output)
    assert data[5] == {
        "key": "h100",
        "name": "H100 SXM",
        "bf16_dense_flops_per_s": 989e12,
        "hbm_bytes_per_s": 3.35e12,
        "memory_bytes": 85_899_345_920,
    }
    mixed = run("--list-gpus", "--gpu", "h100")
    assert (mixed.exit_code, mixed.output) == (
        2,
        "Error: --list-gpus takes no other option except --json\n",
    )
