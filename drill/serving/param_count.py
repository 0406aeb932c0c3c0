"""A decoder-only model's parameter count from the shapes in its Hugging Face config.json.

What is counted, per layer, with h = hidden size:

    attention  q: h · q_heads · head_dim, k and v: h · kv_heads · head_dim each,
               o: q_heads · head_dim · h; under multi-head latent attention (DeepSeek):
               q (through q_lora_rank when set), the KV down-projection h · (kv_lora_rank +
               qk_rope_head_dim), its up-projection kv_lora_rank · heads · (qk_nope_head_dim
               + v_head_dim) and o: heads · v_head_dim · h
    MLP        3 · h · width when gated (SwiGLU, GeGLU: gate, up and down), else 2 · h · width
    experts    a mixture-of-experts layer holds its routed experts (num_local_experts,
               num_experts or n_routed_experts, each an MLP of moe_intermediate_size, else
               intermediate_size), its shared experts (n_shared_experts of that width, or one
               of shared_expert_intermediate_size with its h · 1 gate) and a router (h ·
               experts); the first first_k_dense_replace layers (DeepSeek), those in
               mlp_only_layers or off decoder_sparse_step / moe_layer_freq are dense MLPs

plus the token embeddings (vocab_size · h), the output head unless tie_word_embeddings (when
a config leaves it out, its family's default), and learned position embeddings where the
family has them (GPT-2, StarCoder, OPT). Norms, biases and DeepSeek's multi-token-prediction
layers are left out: well under 0.1 % of a model's weights.

Active parameters, those one token passes through: the embeddings, the attention, dense
MLPs, num_experts_per_tok routed experts, the shared experts and the router.
"""

from __future__ import annotations

from dataclasses import dataclass

from drill.errors import ConfigError
from drill.serving.kvmath import check_count

# families whose MLP is gated (three matrices) even where the activation's name does not say
GATED_FAMILIES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "deepseek_v2",
    "deepseek_v3", "gemma", "gemma2", "gemma3", "gemma3_text", "phi3", "chatglm", "olmo",
    "olmo2", "granite", "internlm2", "cohere",
})  # fmt: skip
GATED_ACTIVATIONS = frozenset({"silu", "swish", "swiglu"})
# families whose configs, without tie_word_embeddings, keep a separate output head
UNTIED_FAMILIES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "deepseek_v2",
    "deepseek_v3", "phi3", "olmo", "olmo2", "internlm2", "chatglm",
})  # fmt: skip
EXPERT_FIELDS = ("num_local_experts", "num_experts", "n_routed_experts")
TOP_K_FIELDS = ("num_experts_per_tok", "moe_topk", "num_experts_per_token")
WIDTH_FIELDS = ("intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size")
LEFT_OUT = "norms and biases left out"


@dataclass(frozen=True)
class ParamCount:
    total: int
    active: int | None  # None for a dense model: every parameter is active
    how: str  # how it was counted, in words


def _first(d: dict, names: tuple[str, ...]) -> tuple[int, str] | None:
    """(value, field) of the first of `names` the config sets to a count; 0 counts as unset
    (a dense config may write num_experts: 0)."""
    for name in names:
        value = d.get(name)
        if value is not None and value != 0:
            return check_count(value, name), name
    return None


def _attention(d: dict, h: int, q_heads: int, kv_heads: int, head_dim: int) -> int:
    if d.get("kv_lora_rank") is None:
        return 2 * h * q_heads * head_dim + 2 * h * kv_heads * head_dim
    need = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
    rank, rope, nope, v_dim = (_field(d, name) for name in need)
    q_width = q_heads * (nope + rope)
    q_rank = d.get("q_lora_rank")
    q = h * q_width if q_rank is None else check_count(q_rank, "q_lora_rank") * (h + q_width)
    return q + h * (rank + rope) + rank * q_heads * (nope + v_dim) + q_heads * v_dim * h


def _field(d: dict, name: str) -> int:
    if d.get(name) is None:
        raise ConfigError(f"missing field {name}")
    return check_count(d[name], name)


def _mlp_width(d: dict, h: int) -> tuple[int, bool]:
    """(the MLP's width, whether it was assumed: 4 · hidden where the config names none)."""
    found = _first(d, WIDTH_FIELDS)
    return (found[0], False) if found else (4 * h, True)


def _gated(d: dict, family: str) -> bool:
    activation = d.get("hidden_act") or d.get("hidden_activation") or d.get("activation_function")
    return family in GATED_FAMILIES or str(activation).lower() in GATED_ACTIVATIONS


def _tied(d: dict, family: str) -> bool:
    tied = d.get("tie_word_embeddings")
    if tied is None:
        return family not in UNTIED_FAMILIES  # transformers' default is to tie
    if not isinstance(tied, bool):
        raise ConfigError(f"tie_word_embeddings must be true or false, got {tied!r}")
    return tied


def _positions(d: dict, family: str, h: int) -> int:
    if family in ("gpt2", "gpt_bigcode") and d.get("n_positions") is not None:
        return check_count(d["n_positions"], "n_positions") * h
    if family == "opt" and d.get("max_position_embeddings") is not None:
        # OPT's learned positions start at an offset of 2
        return (check_count(d["max_position_embeddings"], "max_position_embeddings") + 2) * h
    return 0


def _moe_layers(d: dict, layers: int) -> list[bool]:
    """Which layers hold experts."""
    first_dense = d.get("first_k_dense_replace") or 0
    first_dense = check_count(first_dense, "first_k_dense_replace") if first_dense else 0
    every = _first(d, ("moe_layer_freq",))
    step = _first(d, ("decoder_sparse_step",))
    mlp_only = d.get("mlp_only_layers") or []
    if not isinstance(mlp_only, list) or not all(isinstance(i, int) for i in mlp_only):
        raise ConfigError("mlp_only_layers must list layer numbers")
    return [
        i >= first_dense
        and (every is None or i % every[0] == 0)
        and (step is None or (i + 1) % step[0] == 0)
        and i not in mlp_only
        for i in range(layers)
    ]


def count_params(
    d: dict, *, layers: int, q_heads: int, kv_heads: int, head_dim: int, hidden: int | None
) -> ParamCount:
    """The parameter count of the model a config's fields `d` describe (the language model's
    fields, the shape read already); ConfigError naming what is missing."""
    if hidden is None:
        raise ConfigError("missing the hidden size, which the parameter count needs")
    h = hidden
    family = str(d.get("model_type") or "")
    vocab = _first(d, ("vocab_size", "padded_vocab_size"))
    if vocab is None:
        raise ConfigError("missing field vocab_size, which the parameter count needs")
    attention = _attention(d, h, q_heads, kv_heads, head_dim)
    width, assumed = _mlp_width(d, h)
    left_out = LEFT_OUT + ("; MLP width 4 x hidden, the config names none" if assumed else "")
    matrices = 3 if _gated(d, family) else 2
    dense_mlp = matrices * h * width
    embeddings = vocab[0] * h * (1 if _tied(d, family) else 2) + _positions(d, family, h)

    experts = _first(d, EXPERT_FIELDS)
    if experts is None:
        total = embeddings + layers * (attention + dense_mlp)
        how = (
            f"counted from the config's shapes: {layers} layers x (attention {attention:,} + "
            f"MLP {dense_mlp:,}) + embeddings {embeddings:,}; {left_out}"
        )
        return ParamCount(total, None, how)

    top_k = _first(d, TOP_K_FIELDS)
    if top_k is None:
        raise ConfigError(f"{experts[1]} is set but num_experts_per_tok is not")
    if top_k[0] > experts[0]:
        raise ConfigError(f"{top_k[1]} ({top_k[0]}) is more than {experts[1]} ({experts[0]})")
    expert_width = _first(d, ("moe_intermediate_size",))
    expert = matrices * h * (expert_width[0] if expert_width else width)
    shared = 0
    if (n_shared := _first(d, ("n_shared_experts",))) is not None:
        shared = n_shared[0] * expert
    elif (shared_width := _first(d, ("shared_expert_intermediate_size",))) is not None:
        shared = matrices * h * shared_width[0] + h  # one shared expert and its gate
    router = h * experts[0]
    moe = _moe_layers(d, layers)
    sparse = sum(moe)
    dense = layers - sparse
    total = (
        embeddings
        + layers * attention
        + dense * dense_mlp
        + sparse * (experts[0] * expert + shared + router)
    )
    active = (
        embeddings
        + layers * attention
        + dense * dense_mlp
        + sparse * (top_k[0] * expert + shared + router)
    )
    how = (
        f"counted from the config's shapes: {sparse} of {layers} layers with {experts[0]} "
        f"experts of {expert:,}, {top_k[0]} per token"
        + (f", and shared experts of {shared:,}" if shared else "")
        + f"; {left_out}"
    )
    return ParamCount(total, active, how)
