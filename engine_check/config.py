"""Model shapes, run plans and device/dtype choices for an engine check (no torch here).

A run is described by a `RunPlan`: the synthetic model's `ModelConfig` plus the
points each experiment sweeps and how many times each point is timed. The plans
are sized per device kind so that

* decode streams far more weight bytes than any cache holds (on the CPU the
  weights are over 1 GiB in fp32), so a decode step measures memory bandwidth;
* prefill matmuls are large enough to run near the matmul peak;
* `--quick` on a 2-core CPU finishes well inside a minute.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from drill.errors import ConfigError, EngineError

DEVICE_CHOICES = ("auto", "cuda", "mps", "cpu")
MODES = ("quick", "full", "tiny")

# accepted spelling -> canonical torch dtype name
_DTYPE_ALIASES = {
    "float32": "float32",
    "fp32": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
# What a device runs when no --dtype is given: fp32 on the CPU (its matmuls are
# fp32-native), bf16 where tensor cores want it, fp16 on Apple GPUs.
DEFAULT_DTYPE = {"cpu": "float32", "cuda": "bfloat16", "mps": "float16"}


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer: RMSNorm, GQA attention with RoPE, SwiGLU MLP."""

    layers: int
    d_model: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int  # hidden width of the gated MLP
    vocab: int
    rope_base: float = 10_000.0
    norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        for name in ("layers", "d_model", "heads", "kv_heads", "head_dim", "ffn", "vocab"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"model {name} must be a positive whole number, got {value!r}")
        if self.heads % self.kv_heads:
            raise ConfigError(
                f"heads ({self.heads}) must be a multiple of kv_heads ({self.kv_heads})"
            )
        if self.head_dim % 2:
            raise ConfigError(f"head_dim must be even for rotary embeddings, got {self.head_dim}")

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def linear_params_per_layer(self) -> int:
        """Weights of one block's matmuls: fused QKV, output, fused gate+up, down."""
        d = self.d_model
        return d * (self.q_dim + 2 * self.kv_dim) + self.q_dim * d + d * 2 * self.ffn + self.ffn * d

    @property
    def norm_params_per_layer(self) -> int:
        return 2 * self.d_model

    @property
    def params(self) -> int:
        """Every parameter: embedding, blocks, final norm and the (untied) output head."""
        per_layer = self.linear_params_per_layer + self.norm_params_per_layer
        return 2 * self.vocab * self.d_model + self.layers * per_layer + self.d_model

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RunPlan:
    """What one engine check measures, and how hard."""

    mode: str  # "quick", "full" or "tiny"
    model: ModelConfig
    prompt_lens: tuple[int, ...]  # (a) TTFT sweep
    context_lens: tuple[int, ...]  # (b) TPOT at batch 1
    batch_sizes: tuple[int, ...]  # (c) TPOT vs batch
    batch_context_len: int  # context length used for the batch sweep
    recompute_positions: tuple[int, ...]  # (d) cached step vs recompute
    warmups: int
    repeats: int
    slow_repeats: int  # repeats for the multi-second points (long prefill, recompute)
    matmul_size: int  # n of the square n x n x n matmul among the FLOP/s peak's shapes
    stream_bytes: int  # size of each tensor the bandwidth streams read and write
    peak_repeats: int  # each peak kernel: at least this many timed calls
    peak_seconds: float  # ... and at least this much timed work
    cuda_graphs: bool = True  # capture decode steps as CUDA graphs on NVIDIA GPUs
    # seconds of timed work that repeats of points other programs disturbed may spend
    retry_seconds: float = 10.0

    @property
    def depth_layers(self) -> tuple[int, ...]:
        """Blocks a batch-1 decode step runs through in the weight sweep: the bytes read
        grow with the depth while the batch stays 1."""
        layers = self.model.layers
        return tuple(sorted({max(1, layers // 3), max(1, 2 * layers // 3), layers}))

    @property
    def matmul_shapes(self) -> tuple[tuple[int, int, int], ...]:
        """(m, k, n) of the matmuls that measure the FLOP/s peak: the square one and the
        model's two largest at the longest prompt (gate+up, then down)."""
        n, t, cfg = self.matmul_size, max(self.prompt_lens), self.model
        return ((n, n, n), (t, cfg.d_model, 2 * cfg.ffn), (t, cfg.ffn, cfg.d_model))

    @property
    def max_seq(self) -> int:
        """Positions the model's rotary table must cover."""
        return max(
            *self.prompt_lens,
            *self.context_lens,
            self.batch_context_len,
            *(p + 1 for p in self.recompute_positions),
        )

    def to_dict(self) -> dict:
        out = asdict(self)
        out["model"] = self.model.to_dict()
        for key, value in out.items():
            if isinstance(value, tuple):
                out[key] = list(value)
        return out


MiB = 2**20
GiB = 2**30

# A 2-core CPU: 6 blocks at d=2048 are 1.09 GB of fp32 weights, several times any
# last-level cache, so a batch-1 decode step streams them from DRAM; the prefill
# matmuls ([T, 2048] x [2048, 11264] and friends) are big enough to run near peak.
CPU_MODEL = ModelConfig(
    layers=6, d_model=2048, heads=16, kv_heads=4, head_dim=128, ffn=5632, vocab=8192
)
# NVIDIA: a Llama-3-8B-like block (d=4096, 32 heads, 8 KV heads, ffn 14336). Each block
# is 436 MB in bf16, ~0.1 ms of HBM time on an H100, so each decode step is long
# enough next to kernel launches, which CUDA graphs remove anyway.
CUDA_BLOCK = ModelConfig(
    layers=1, d_model=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, vocab=32000
)
# Apple GPUs: a ~1B model; unified memory is shared with everything else.
MPS_MODEL = ModelConfig(
    layers=16, d_model=2048, heads=32, kv_heads=8, head_dim=64, ffn=8192, vocab=32000
)
TINY_MODEL = ModelConfig(layers=2, d_model=64, heads=4, kv_heads=2, head_dim=16, ffn=128, vocab=256)


def _cuda_layers(mode: str, device_memory_bytes: int | None, dtype_bytes: int) -> int:
    wanted = 8 if mode == "quick" else 16
    if not device_memory_bytes:
        return wanted
    per_layer = (CUDA_BLOCK.linear_params_per_layer + CUDA_BLOCK.norm_params_per_layer) * (
        dtype_bytes
    )
    # leave room for the KV caches, the peak-measurement buffers and activations
    fits = int(0.4 * device_memory_bytes // per_layer)
    return max(1, min(wanted, fits))


def plan_for(
    device_kind: str,
    mode: str,
    dtype: str,
    device_memory_bytes: int | None = None,
) -> RunPlan:
    """The default plan for a device kind ("cpu", "cuda", "mps") and mode."""
    if mode not in MODES:
        raise EngineError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if mode == "tiny":
        # for tests: every code path in seconds, numbers meaningless
        return RunPlan(
            mode="tiny",
            model=TINY_MODEL,
            prompt_lens=(8, 16),
            context_lens=(8, 24),
            batch_sizes=(1, 2, 4),
            batch_context_len=8,
            recompute_positions=(4, 12),
            warmups=1,
            repeats=2,
            slow_repeats=2,
            matmul_size=128,
            stream_bytes=1 * MiB,
            peak_repeats=2,
            peak_seconds=0.0,
            retry_seconds=0.2,
        )
    quick = mode == "quick"
    if device_kind == "cuda":
        model = replace(
            CUDA_BLOCK, layers=_cuda_layers(mode, device_memory_bytes, DTYPE_BYTES[dtype])
        )
        return RunPlan(
            mode=mode,
            model=model,
            prompt_lens=(512, 2048) if quick else (256, 512, 1024, 2048, 4096),
            context_lens=(128, 2048) if quick else (128, 1024, 4096, 8192),
            batch_sizes=(1, 4, 16, 64, 256) if quick else (1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
            batch_context_len=128,
            recompute_positions=(128, 1024) if quick else (128, 512, 2048),
            warmups=3,
            repeats=10 if quick else 30,
            slow_repeats=5 if quick else 10,
            matmul_size=8192,
            stream_bytes=(1 if quick else 2) * GiB,
            peak_repeats=10 if quick else 30,
            peak_seconds=0.2 if quick else 0.5,
            retry_seconds=5.0 if quick else 15.0,
        )
    if device_kind == "mps":
        return RunPlan(
            mode=mode,
            model=replace(MPS_MODEL, layers=8 if quick else 16),
            prompt_lens=(256, 1024) if quick else (128, 256, 512, 1024, 2048),
            context_lens=(128, 1024) if quick else (128, 512, 1024, 2048, 4096),
            batch_sizes=(1, 4, 16, 64) if quick else (1, 2, 4, 8, 16, 32, 64, 128),
            batch_context_len=128,
            recompute_positions=(64, 512) if quick else (64, 256, 1024),
            warmups=2,
            repeats=5 if quick else 15,
            slow_repeats=3 if quick else 5,
            matmul_size=4096,
            stream_bytes=512 * MiB,
            peak_repeats=5 if quick else 15,
            peak_seconds=0.3 if quick else 0.8,
            retry_seconds=8.0 if quick else 25.0,
        )
    if device_kind != "cpu":
        raise EngineError(f"unknown device kind {device_kind!r}")
    return RunPlan(
        mode=mode,
        model=CPU_MODEL,
        # three prompt lengths at least, so the prefill trend is a fit, not a ratio
        prompt_lens=(128, 256, 512) if quick else (64, 128, 256, 512, 1024),
        context_lens=(128, 1024) if quick else (128, 512, 1024, 2048),
        batch_sizes=(1, 2, 4, 8, 16, 32) if quick else (1, 2, 4, 8, 16, 32, 64),
        batch_context_len=128,
        recompute_positions=(32, 256) if quick else (32, 128, 512),
        warmups=1 if quick else 2,
        repeats=5 if quick else 9,
        slow_repeats=2 if quick else 3,
        matmul_size=3072 if quick else 4096,
        stream_bytes=512 * MiB,
        peak_repeats=3 if quick else 9,
        peak_seconds=0.4 if quick else 1.5,
        retry_seconds=12.0 if quick else 40.0,
    )


def canonical_dtype(name: str | None, device_kind: str) -> str:
    """A torch dtype name for `--dtype` ("bf16" -> "bfloat16"); None picks the device default."""
    if name is None or name.strip().lower() in ("", "auto"):
        return DEFAULT_DTYPE[device_kind]
    key = name.strip().lower().removeprefix("torch.")
    if key not in _DTYPE_ALIASES:
        raise EngineError(f"unknown dtype {name!r}; choose float32, bfloat16 or float16 (or auto)")
    return _DTYPE_ALIASES[key]


def check_device_name(name: str) -> str:
    """The lower-cased `--device` value, or EngineError naming the choices."""
    key = (name or "").strip().lower()
    if key not in DEVICE_CHOICES:
        raise EngineError(f"unknown device {name!r}; choose {', '.join(DEVICE_CHOICES)}")
    return key


def resolve_device(requested: str, cuda_available: bool, mps_available: bool) -> str:
    """The device kind to run on: CUDA, then MPS, then CPU for "auto"; an explicit choice
    that this machine lacks is an EngineError rather than a silent fallback."""
    key = check_device_name(requested)
    if key == "auto":
        return "cuda" if cuda_available else "mps" if mps_available else "cpu"
    if key == "cuda" and not cuda_available:
        raise EngineError(
            "--device cuda asked for, but torch sees no CUDA GPU (a CPU-only torch build, "
            "or no driver); use --device auto or cpu"
        )
    if key == "mps" and not mps_available:
        raise EngineError("--device mps asked for, but this torch has no usable Apple GPU")
    return key
