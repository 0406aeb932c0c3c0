"""Engine checks that need a GPU; each skips cleanly where there is none."""

import pytest

torch = pytest.importorskip("torch")

from drill.serving.kvmath import kv_cache_bytes  # noqa: E402
from engine_check import experiments  # noqa: E402
from engine_check.config import TINY_MODEL, plan_for  # noqa: E402
from engine_check.model import build_model, decode_step, forward_no_cache, prefill  # noqa: E402
from engine_check.run import mps_available, run_engine_check  # noqa: E402
from engine_check.timing import DeviceTimer  # noqa: E402

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
needs_mps = pytest.mark.skipif(not mps_available(), reason="needs an Apple GPU (MPS)")


def _bench(device: torch.device) -> experiments.Bench:
    plan = plan_for("cuda" if device.type == "cuda" else "cpu", "tiny", "float32")
    model = build_model(plan.model, plan.max_seq, torch.float32, device)
    return experiments.Bench(
        model=model,
        timer=DeviceTimer(device),
        plan=plan,
        dtype_bytes=4,
        peak_flops_per_s=1e12,
        peak_bytes_per_s=1e11,
        tick=lambda label: None,
    )


@needs_cuda
def test_cuda_cached_decode_equals_recompute_fp32():
    cuda = torch.device("cuda")
    model = build_model(TINY_MODEL, 16, torch.float32, cuda, seed=1)
    model.setup_cache(2)
    tokens = torch.randint(0, TINY_MODEL.vocab, (2, 5), device=cuda)
    logits = prefill(model, tokens)
    for step in range(4):
        nxt = logits.argmax(-1, keepdim=True)
        tokens = torch.cat([tokens, nxt], dim=1)
        logits = decode_step(model, nxt, 5 + step)
        torch.testing.assert_close(logits, forward_no_cache(model, tokens), rtol=1e-4, atol=1e-4)


@needs_cuda
def test_cuda_graph_replay_gives_the_eager_logits():
    bench = _bench(torch.device("cuda"))
    bench.model.setup_cache(1, 16)
    prefill(bench.model, torch.arange(7, device="cuda").view(1, 7))
    token = torch.tensor([[3]], device="cuda")
    eager = decode_step(bench.model, token, 7).clone()
    out = torch.empty_like(eager)
    replay = bench.step_fn(lambda: out.copy_(decode_step(bench.model, token, 7)))
    out.zero_()
    replay()
    torch.cuda.synchronize()
    assert bench.decode_runner == "cuda_graph"
    torch.testing.assert_close(out, eager)


@needs_cuda
def test_cuda_allocator_grows_by_exactly_the_formula():
    bench = _bench(torch.device("cuda"))
    kv = experiments.run_kv(bench)
    cfg, seq = bench.cfg, max(bench.plan.context_lens)
    formula = kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, seq, 4, requests=1)
    assert kv["measured_bytes"] == formula
    assert kv["allocator_delta_bytes"] == formula


@needs_cuda
def test_cuda_tiny_run_uses_graphs_and_names_the_gpu():
    result = run_engine_check(device="cuda", mode="tiny")
    assert result["device"] == "cuda"
    assert result["dtype"] == "bfloat16"
    assert result["device_name"] == torch.cuda.get_device_name()
    assert result["config"]["decode_runner"] == "cuda_graph"
    assert result["claims"]["kv_formula_exact"]["holds"] is True


@needs_mps
def test_mps_tiny_run():
    result = run_engine_check(device="mps", mode="tiny")
    assert result["device"] == "mps"
    assert result["kv"]["measured_bytes"] == result["kv"]["formula_bytes"]
