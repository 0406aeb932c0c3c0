"""A small decoder-only transformer with a static KV cache, for timing only.

Random weights; RMSNorm, rotary embeddings, grouped-query attention (fewer KV
heads than query heads) and a SwiGLU MLP. QKV and gate/up projections are fused,
so a decode step reads each weight matrix in one long matmul.

Three ways to run it, kept apart so each can be timed on its own:

* `prefill(model, tokens)`: one causal forward over the prompt, writing K and V
  for every position into the cache.
* `decode_step(model, token, pos)`: one new token per sequence, attending to the
  cached positions 0..pos.
* `forward_no_cache(model, tokens)`: the teaching-toy baseline that recomputes the
  whole prefix for every generated token.

Shape letters: B batch, T new tokens, S cached positions, d model width,
H query heads, Hkv KV heads, G = H / Hkv, D head_dim, V vocab.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engine_check import cpu_linear
from engine_check.config import ModelConfig

# Fill weights by tiling one random block: drawing a gigabyte of random numbers
# costs seconds on a small CPU, copying a block costs a fraction of that, and
# timing does not care that rows repeat with a long period.
_RANDOM_BLOCK_ELEMS = 1 << 20
_SDPA_HAS_GQA = tuple(int(p) for p in torch.__version__.split(".")[:2] if p.isdigit()) >= (2, 5)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float, dtype: torch.dtype) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(dim, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if hasattr(F, "rms_norm"):  # fused where torch has it (2.4+)
            return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return x32.type_as(x) * self.weight


class Linear(nn.Module):
    """y = x @ Wᵀ with W: [out, in]. On a CPU it may also hold prepacked copies of W: one
    for decode steps of a few sequences and, where it wins, one laid out for a single
    row (see engine_check.cpu_linear)."""

    def __init__(self, in_features: int, out_features: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=dtype))
        self.packed: torch.Tensor | None = None
        self.packed_row: torch.Tensor | None = None  # the one-row layout
        self.packed_min_rows = cpu_linear.PACKED_MIN_ROWS  # 1 where packed wins a GEMV
        # None where packed wins a prompt's matmul too
        self.packed_max_rows: int | None = cpu_linear.PACKED_MAX_ROWS

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.numel() // x.shape[-1]
        if self.packed is not None and cpu_linear.uses_packed(
            rows, self.packed_min_rows, self.packed_max_rows
        ):
            one_row = rows == 1 and self.packed_row is not None
            return cpu_linear.packed_linear(x, self.packed_row if one_row else self.packed)
        return F.linear(x, self.weight)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, dtype: torch.dtype) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = cfg.heads, cfg.kv_heads, cfg.head_dim
        self.wqkv = Linear(cfg.d_model, cfg.q_dim + 2 * cfg.kv_dim, dtype)
        self.wo = Linear(cfg.q_dim, cfg.d_model, dtype)


class FeedForward(nn.Module):
    def __init__(self, cfg: ModelConfig, dtype: torch.dtype) -> None:
        super().__init__()
        self.w13 = Linear(cfg.d_model, 2 * cfg.ffn, dtype)  # gate | up
        self.w2 = Linear(cfg.ffn, cfg.d_model, dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.w13(x).chunk(2, dim=-1)  # [B, T, ffn] each
        return self.w2(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, dtype: torch.dtype) -> None:
        super().__init__()
        self.attention_norm = RMSNorm(cfg.d_model, cfg.norm_eps, dtype)
        self.attention = Attention(cfg, dtype)
        self.ffn_norm = RMSNorm(cfg.d_model, cfg.norm_eps, dtype)
        self.feed_forward = FeedForward(cfg, dtype)


class KVCache:
    """Static cache, allocated once: kv[layer, 0 = K / 1 = V, B, Hkv, max_seq, D]."""

    def __init__(self, cfg: ModelConfig, batch: int, max_seq: int, dtype, device) -> None:
        # zeros, not empty: the pages are touched now rather than inside a timed step
        self.kv = torch.zeros(
            cfg.layers, 2, batch, cfg.kv_heads, max_seq, cfg.head_dim, dtype=dtype, device=device
        )

    @property
    def batch(self) -> int:
        return self.kv.shape[2]

    @property
    def max_seq(self) -> int:
        return self.kv.shape[4]

    @property
    def nbytes(self) -> int:
        return self.kv.numel() * self.kv.element_size()


class Transformer(nn.Module):
    def __init__(self, cfg: ModelConfig, max_seq: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.cfg = cfg
        self.max_seq = max_seq
        self.tok_embeddings = nn.Embedding(cfg.vocab, cfg.d_model, dtype=dtype)
        self.layers = nn.ModuleList(Block(cfg, dtype) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps, dtype)
        self.output = Linear(cfg.d_model, cfg.vocab, dtype)
        self.register_buffer("rope_cos", torch.empty(max_seq, cfg.head_dim, dtype=dtype))
        self.register_buffer("rope_sin", torch.empty(max_seq, cfg.head_dim, dtype=dtype))
        self.cache: KVCache | None = None

    def setup_cache(self, batch: int, max_seq: int | None = None) -> KVCache:
        """Allocate (replacing any previous one) the static KV cache the model writes to."""
        max_seq = self.max_seq if max_seq is None else max_seq
        if max_seq > self.max_seq:
            raise ValueError(
                f"cache of {max_seq} positions exceeds the rotary table ({self.max_seq})"
            )
        self.cache = None  # free the old cache before allocating the new one
        self.cache = KVCache(
            self.cfg, batch, max_seq, self.output.weight.dtype, self.output.weight.device
        )
        return self.cache


def build_model(
    cfg: ModelConfig, max_seq: int, dtype: torch.dtype, device: torch.device, seed: int = 0
) -> Transformer:
    """A model with random weights on `device`, in eval mode. Built on the meta device
    first so nothing runs torch's default (slow) initialisers."""
    with torch.device("meta"):
        model = Transformer(cfg, max_seq, dtype)
    model = model.to_empty(device=device)
    gen = torch.Generator(device=device).manual_seed(seed)
    block = torch.rand(_RANDOM_BLOCK_ELEMS, generator=gen, device=device, dtype=torch.float32)
    block = (block * 2 - 1).to(dtype)  # uniform in [-1, 1)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.fill_(1.0)
            elif name == "tok_embeddings.weight":
                _fill_tiled_(param, block, scale=1.0)
            else:
                # uniform(-a, a) has std a/sqrt(3): a = sqrt(3 / fan_in) keeps activations O(1)
                _fill_tiled_(param, block, scale=(3.0 / param.shape[1]) ** 0.5)
        cos, sin = _rope_tables(cfg, max_seq, device)
        model.rope_cos.copy_(cos)
        model.rope_sin.copy_(sin)
    return model.eval().requires_grad_(False)


def prepack_for_cpu(model: Transformer, *, clock=None, prompt_rows: int | None = None) -> int:
    """Give every Linear a prepacked copy of its weight for few-row matmuls, if this torch
    can (CPU only; costs a second copy of the weights). Single rows get a third copy, laid
    out for one row, where that beats the default kernel on the model's largest weight
    (timed with `clock`). With `prompt_rows`, a matmul of that many rows is timed too, and
    where the packed copy wins it, it serves prompts of any length (`packed_max_rows`
    None). Returns the fewest rows the packed copies serve (1 or 2), 0 when there are
    none."""
    weight = model.output.weight
    if weight.device.type != "cpu" or not cpu_linear.prepack_works(weight.dtype):
        return 0
    linears = [module for module in model.modules() if isinstance(module, Linear)]
    with torch.inference_mode():
        for module in linears:
            module.packed = cpu_linear.pack_weight(module.weight)
        largest = max(linears, key=lambda module: module.weight.numel())
        one_row = cpu_linear.pack_weight(largest.weight, cpu_linear.ONE_ROW_LAYOUT_ROWS)
        row = torch.ones(1, 1, largest.weight.shape[1], dtype=weight.dtype)
        packed_wins = cpu_linear.faster_for_one_row(
            lambda: F.linear(row, largest.weight),
            lambda: cpu_linear.packed_linear(row, one_row),
            **({} if clock is None else {"clock": clock}),
        )
        for module in linears if packed_wins else []:
            module.packed_row = (
                one_row
                if module is largest
                else cpu_linear.pack_weight(module.weight, cpu_linear.ONE_ROW_LAYOUT_ROWS)
            )
        max_rows: int | None = cpu_linear.PACKED_MAX_ROWS
        if prompt_rows is not None and prompt_rows > cpu_linear.PACKED_MAX_ROWS:
            rows = torch.ones(1, prompt_rows, largest.weight.shape[1], dtype=weight.dtype)
            if cpu_linear.faster_for_one_row(
                lambda: F.linear(rows, largest.weight),
                lambda: cpu_linear.packed_linear(rows, largest.packed),
                **({} if clock is None else {"clock": clock}),
            ):
                max_rows = None
    min_rows = 1 if packed_wins else cpu_linear.PACKED_MIN_ROWS
    for module in linears:
        module.packed_min_rows = min_rows
        module.packed_max_rows = max_rows
    return min_rows


def _fill_tiled_(param: torch.Tensor, block: torch.Tensor, scale: float) -> None:
    flat = param.view(-1)
    step = block.numel()
    for start in range(0, flat.numel(), step):
        chunk = flat[start : start + step]
        torch.mul(block[: chunk.numel()], scale, out=chunk)


def _rope_tables(cfg: ModelConfig, max_seq: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    half = cfg.head_dim // 2
    inv_freq = cfg.rope_base ** (-torch.arange(half, device=device, dtype=torch.float32) / half)
    angles = torch.outer(torch.arange(max_seq, device=device, dtype=torch.float32), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)  # [max_seq, D], halves rotate together
    return angles.cos(), angles.sin()


def _apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # x: [B, heads, T, D]; cos, sin: [T, D]
    x1, x2 = x.chunk(2, dim=-1)
    rotated = torch.cat([-x2, x1], dim=-1)
    return x * cos + rotated * sin


def _attend(
    block: Block, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
    layer_kv: torch.Tensor | None, pos0: int,
) -> torch.Tensor:  # fmt: skip
    """Self-attention for new tokens at positions pos0..pos0+T-1.

    x: [B, T, d]. layer_kv: this layer's [2, B, Hkv, S_max, D] cache slab, or None for the
    no-cache baseline (then pos0 must be 0 and the tokens are the whole sequence).
    """
    attn = block.attention
    B, T, _ = x.shape
    H, Hkv, D = attn.heads, attn.kv_heads, attn.head_dim
    q, k, v = attn.wqkv(x).split([H * D, Hkv * D, Hkv * D], dim=-1)
    q = _apply_rope(q.view(B, T, H, D).transpose(1, 2), cos, sin)  # [B, H, T, D]
    k = _apply_rope(k.view(B, T, Hkv, D).transpose(1, 2), cos, sin)  # [B, Hkv, T, D]
    v = v.view(B, T, Hkv, D).transpose(1, 2)  # [B, Hkv, T, D]
    end = pos0 + T
    if layer_kv is not None:
        layer_kv[0, :, :, pos0:end] = k
        layer_kv[1, :, :, pos0:end] = v
        k, v = layer_kv[0, :, :, :end], layer_kv[1, :, :, :end]  # [B, Hkv, S, D], S = end
    if T == 1:
        # Decode: every cached position is visible, so no mask. Fold each KV head's G
        # query heads into the query-length axis: q [B, Hkv, G, D] against k [B, Hkv, S, D],
        # which shares K and V between heads without copying them.
        out = F.scaled_dot_product_attention(q.view(B, Hkv, H // Hkv, D), k, v)
        out = out.view(B, H, 1, D)
    else:
        mask = None
        if pos0:  # a chunk after cached positions: query i sees keys 0..pos0+i
            keys = torch.arange(end, device=x.device)
            mask = keys[None, :] <= (pos0 + torch.arange(T, device=x.device))[:, None]
        out = _sdpa_gqa(q, k, v, mask, causal=mask is None)  # [B, H, T, D]
    return attn.wo(out.transpose(1, 2).reshape(B, T, H * D))


def _sdpa_gqa(q, k, v, mask, causal: bool) -> torch.Tensor:
    # q: [B, H, T, D]; k, v: [B, Hkv, S, D]
    if _SDPA_HAS_GQA:
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=causal, enable_gqa=True
        )
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)


def _forward(
    model: Transformer, tokens: torch.Tensor, pos0: int, use_cache: bool, depth: int | None = None
) -> torch.Tensor:
    """tokens: [B, T] at positions pos0..pos0+T-1 -> logits of the last position [B, V],
    through the first `depth` blocks (all of them when None)."""
    T = tokens.shape[1]
    if pos0 + T > model.max_seq:
        raise ValueError(f"positions up to {pos0 + T} exceed the model's {model.max_seq}")
    cache = model.cache if use_cache else None
    if use_cache and (cache is None or pos0 + T > cache.max_seq):
        raise ValueError("no KV cache large enough: call model.setup_cache(batch, max_seq) first")
    cos, sin = model.rope_cos[pos0 : pos0 + T], model.rope_sin[pos0 : pos0 + T]  # [T, D]
    x = model.tok_embeddings(tokens)  # [B, T, d]
    blocks = model.layers if depth is None else model.layers[:depth]
    for i, block in enumerate(blocks):
        layer_kv = cache.kv[i] if cache is not None else None
        x = x + _attend(block, block.attention_norm(x), cos, sin, layer_kv, pos0)
        x = x + block.feed_forward(block.ffn_norm(x))
    x = model.norm(x[:, -1:, :])  # only the last position's logits are needed
    return model.output(x)[:, 0, :]  # [B, V]


@torch.inference_mode()
def prefill(model: Transformer, tokens: torch.Tensor) -> torch.Tensor:
    """tokens: [B, T] prompt -> logits for the token after it, [B, V]; fills cache 0..T-1."""
    return _forward(model, tokens, pos0=0, use_cache=True)


@torch.inference_mode()
def decode_step(
    model: Transformer, token: torch.Tensor, pos: int, depth: int | None = None
) -> torch.Tensor:
    """token: [B, 1] at position `pos` -> logits [B, V]; reads cache 0..pos-1, writes pos.
    `depth` runs only the first blocks: a shallower model with the same layers."""
    return _forward(model, token, pos0=pos, use_cache=True, depth=depth)


@torch.inference_mode()
def forward_no_cache(model: Transformer, tokens: torch.Tensor) -> torch.Tensor:
    """tokens: [B, T], the whole sequence so far -> logits for the next token, [B, V].
    Recomputes every position's K and V: the cost of generating without a cache."""
    return _forward(model, tokens, pos0=0, use_cache=False)
