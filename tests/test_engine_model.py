"""The synthetic transformer: shapes, cache vs recompute, KV bytes vs the formula."""

import itertools

import pytest

torch = pytest.importorskip("torch")

from drill.serving.kvmath import kv_cache_bytes  # noqa: E402
from engine_check.config import TINY_MODEL, ModelConfig  # noqa: E402
from engine_check.model import (  # noqa: E402
    KVCache,
    _forward,
    build_model,
    decode_step,
    forward_no_cache,
    prefill,
)

CPU = torch.device("cpu")


def tiny(**overrides) -> ModelConfig:
    fields = TINY_MODEL.to_dict() | overrides
    return ModelConfig(**fields)


def test_output_and_cache_shapes():
    cfg = tiny()
    model = build_model(cfg, max_seq=32, dtype=torch.float32, device=CPU)
    cache = model.setup_cache(batch=3, max_seq=20)
    assert tuple(cache.kv.shape) == (2, 2, 3, 2, 20, 16)  # [L, K/V, B, Hkv, S, D]
    logits = prefill(model, torch.zeros(3, 7, dtype=torch.long))
    assert tuple(logits.shape) == (3, 256)
    logits = decode_step(model, torch.zeros(3, 1, dtype=torch.long), pos=7)
    assert tuple(logits.shape) == (3, 256)
    assert tuple(forward_no_cache(model, torch.zeros(3, 9, dtype=torch.long)).shape) == (3, 256)


def test_prefill_writes_k_and_v_only_for_prompt_positions():
    cfg = tiny()
    model = build_model(cfg, max_seq=16, dtype=torch.float32, device=CPU)
    cache = model.setup_cache(batch=1)
    prefill(model, torch.arange(5).view(1, 5))
    written = cache.kv.abs().sum(dim=(0, 1, 2, 3, 5))  # per position
    assert (written[:5] > 0).all()
    assert (written[5:] == 0).all()


def test_parameter_count_matches_config_formula():
    for cfg in (tiny(), tiny(kv_heads=1), tiny(kv_heads=4), tiny(layers=3, ffn=96)):
        model = build_model(cfg, max_seq=8, dtype=torch.float32, device=CPU)
        assert sum(p.numel() for p in model.parameters()) == cfg.params


def test_same_seed_same_weights_other_seed_different():
    a = build_model(TINY_MODEL, 8, torch.float32, CPU, seed=3)
    b = build_model(TINY_MODEL, 8, torch.float32, CPU, seed=3)
    c = build_model(TINY_MODEL, 8, torch.float32, CPU, seed=4)
    assert torch.equal(a.output.weight, b.output.weight)
    assert not torch.equal(a.output.weight, c.output.weight)


def _greedy_matches_recompute(cfg: ModelConfig, batch: int, prompt_len: int, steps: int) -> None:
    model = build_model(cfg, max_seq=prompt_len + steps, dtype=torch.float32, device=CPU, seed=1)
    model.setup_cache(batch)
    gen = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, cfg.vocab, (batch, prompt_len), generator=gen)
    cached = prefill(model, tokens)
    torch.testing.assert_close(cached, forward_no_cache(model, tokens), rtol=1e-5, atol=1e-5)
    for step in range(steps):
        nxt = cached.argmax(dim=-1, keepdim=True)  # [B, 1]
        tokens = torch.cat([tokens, nxt], dim=1)
        cached = decode_step(model, nxt, pos=prompt_len + step)
        recomputed = forward_no_cache(model, tokens)
        torch.testing.assert_close(cached, recomputed, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kv_heads", [1, 2, 4])  # MQA, GQA, plain multi-head
def test_cached_decode_equals_recompute_in_fp32(kv_heads):
    _greedy_matches_recompute(tiny(kv_heads=kv_heads), batch=2, prompt_len=5, steps=6)


def test_chunk_after_cached_positions_equals_recompute():
    cfg = tiny()
    model = build_model(cfg, max_seq=16, dtype=torch.float32, device=CPU, seed=2)
    model.setup_cache(1)
    tokens = torch.randint(0, cfg.vocab, (1, 9), generator=torch.Generator().manual_seed(5))
    prefill(model, tokens[:, :4])
    with torch.inference_mode():
        chunked = _forward(model, tokens[:, 4:], pos0=4, use_cache=True)
    torch.testing.assert_close(chunked, forward_no_cache(model, tokens), rtol=1e-5, atol=1e-5)


def test_decode_without_cache_or_past_its_end_is_refused():
    model = build_model(TINY_MODEL, max_seq=8, dtype=torch.float32, device=CPU)
    one = torch.zeros(1, 1, dtype=torch.long)
    with pytest.raises(ValueError, match="setup_cache"):
        decode_step(model, one, pos=0)
    model.setup_cache(1, max_seq=4)
    with pytest.raises(ValueError, match="setup_cache"):
        decode_step(model, one, pos=4)
    with pytest.raises(ValueError, match="exceed"):
        model.setup_cache(1, max_seq=9)


@pytest.mark.parametrize(
    "layers, kv_heads, head_dim, batch, seq, dtype, width",
    [
        (2, 2, 16, 1, 24, torch.float32, 4),
        (3, 1, 8, 4, 7, torch.bfloat16, 2),
        (1, 4, 32, 2, 100, torch.float16, 2),
    ],
)
def test_cache_bytes_equal_kvmath_formula_exactly(
    layers, kv_heads, head_dim, batch, seq, dtype, width
):
    cfg = tiny(layers=layers, kv_heads=kv_heads, heads=4, head_dim=head_dim)
    cache = KVCache(cfg, batch, seq, dtype, CPU)
    measured = cache.kv.numel() * cache.kv.element_size()
    assert measured == cache.nbytes
    assert measured == kv_cache_bytes(layers, kv_heads, head_dim, seq, width, requests=batch)
    assert measured == 2 * layers * kv_heads * head_dim * seq * width * batch


def twin_models(clock):
    """The tiny model twice, the second with prepacked linears (its one-row choice made
    with `clock`): (config, plain, packed, the fewest rows the packed weights serve)."""
    from engine_check import cpu_linear
    from engine_check.model import prepack_for_cpu

    if not cpu_linear.prepack_works(torch.float32):
        pytest.skip("this torch build has no oneDNN prepacked matmul")
    cfg = tiny()
    plain = build_model(cfg, max_seq=16, dtype=torch.float32, device=CPU, seed=7)
    packed = build_model(cfg, max_seq=16, dtype=torch.float32, device=CPU, seed=7)
    return cfg, plain, packed, prepack_for_cpu(packed, clock=clock)


def test_prepacked_cpu_linears_give_the_same_logits():
    from engine_check import cpu_linear

    cfg, plain, packed, min_rows = twin_models(steps(1, 3))
    assert min_rows == 2  # the default kernel wins one row
    assert packed.output.packed is not None and plain.output.packed is None
    tokens = torch.randint(0, cfg.vocab, (4, 6), generator=torch.Generator().manual_seed(1))
    for model in (plain, packed):
        model.setup_cache(4)
        prefill(model, tokens)
    step = torch.randint(0, cfg.vocab, (4, 1), generator=torch.Generator().manual_seed(2))
    # 4 rows: the packed path runs in `packed`, the default one in `plain`
    assert cpu_linear.uses_packed(4) and not cpu_linear.uses_packed(1)
    torch.testing.assert_close(
        decode_step(packed, step, 6), decode_step(plain, step, 6), rtol=1e-5, atol=1e-5
    )


def steps(default: float, packed: float):
    """A fake clock for faster_for_one_row: each default call takes `default` seconds and
    each packed call `packed` (the two alternate, default first)."""
    ticks = itertools.accumulate(itertools.cycle([0.0, default, 0.0, packed]))
    return lambda: next(ticks)


@pytest.mark.parametrize(
    "default, packed, packed_wins", [(3.0, 1.0, True), (1.0, 3.0, False), (2.0, 2.0, False)]
)
def test_one_row_goes_to_the_faster_kernel(default, packed, packed_wins):
    from engine_check import cpu_linear

    calls = []
    assert (
        cpu_linear.faster_for_one_row(
            lambda: calls.append("default"), lambda: calls.append("packed"),
            clock=steps(default, packed), repeats=3,
        )
        is packed_wins
    )  # fmt: skip
    assert calls == ["default", "packed"] * 4  # a warm-up each, then three timed each


def test_a_single_sequence_decodes_through_the_packed_weights_where_they_win():
    from engine_check import cpu_linear

    cfg, plain, packed, min_rows = twin_models(steps(3, 1))
    assert min_rows == 1
    assert {m.packed_min_rows for m in packed.modules() if hasattr(m, "packed_min_rows")} == {1}
    used = []
    real = cpu_linear.packed_linear
    tokens = torch.randint(0, cfg.vocab, (1, 6), generator=torch.Generator().manual_seed(1))
    for model in (plain, packed):
        model.setup_cache(1)
        prefill(model, tokens)
    step = torch.randint(0, cfg.vocab, (1, 1), generator=torch.Generator().manual_seed(2))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cpu_linear, "packed_linear", lambda x, w: used.append(1) or real(x, w))
        got = decode_step(packed, step, 6)
    assert used  # one row took the packed kernel
    torch.testing.assert_close(got, decode_step(plain, step, 6), rtol=1e-5, atol=1e-5)


def test_one_row_reads_a_copy_laid_out_for_one_row_and_the_logits_stay_the_same():
    """A batch-1 decode step goes through the one-row copies, a batch of 4 through the
    batch copies, and both give the default kernel's logits."""
    from engine_check import cpu_linear
    from engine_check.model import Linear

    cfg, plain, packed, min_rows = twin_models(steps(3, 1))
    linears = [m for m in packed.modules() if isinstance(m, Linear)]
    assert min_rows == 1 and len(linears) == 4 * cfg.layers + 1
    assert all(m.packed_row is not None and m.packed is not None for m in linears)
    assert all(m.packed_row is None for m in plain.modules() if isinstance(m, Linear))
    real = cpu_linear.packed_linear
    for batch, copy in ((1, "packed_row"), (4, "packed")):
        tokens = torch.randint(0, cfg.vocab, (batch, 6), generator=torch.Generator().manual_seed(1))
        for model in (plain, packed):
            model.setup_cache(batch)
            prefill(model, tokens)
        step = torch.randint(0, cfg.vocab, (batch, 1), generator=torch.Generator().manual_seed(2))
        wanted = {id(getattr(m, copy)) for m in linears}
        used = []
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(
                cpu_linear, "packed_linear", lambda x, w, u=used: u.append(id(w)) or real(x, w)
            )
            got = decode_step(packed, step, 6)
        assert len(used) == len(linears) and set(used) == wanted
        torch.testing.assert_close(got, decode_step(plain, step, 6), rtol=1e-5, atol=1e-5)


def test_where_the_default_kernel_wins_a_row_no_one_row_copy_is_kept():
    from engine_check.model import Linear

    _cfg, _plain, packed, min_rows = twin_models(steps(1, 3))
    assert min_rows == 2
    assert all(m.packed_row is None for m in packed.modules() if isinstance(m, Linear))


def test_cached_decode_equals_recompute_with_prepacked_linears():
    from engine_check import cpu_linear
    from engine_check.model import prepack_for_cpu

    if not cpu_linear.prepack_works(torch.float32):
        pytest.skip("this torch build has no oneDNN prepacked matmul")
    cfg = tiny()
    model = build_model(cfg, max_seq=12, dtype=torch.float32, device=CPU, seed=3)
    prepack_for_cpu(model)
    model.setup_cache(3)
    tokens = torch.randint(0, cfg.vocab, (3, 4), generator=torch.Generator().manual_seed(4))
    logits = prefill(model, tokens)
    for step in range(5):
        nxt = logits.argmax(dim=-1, keepdim=True)
        tokens = torch.cat([tokens, nxt], dim=1)
        logits = decode_step(model, nxt, pos=4 + step)
        torch.testing.assert_close(logits, forward_no_cache(model, tokens), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("default, packed, max_rows", [(3.0, 1.0, None), (1.0, 3.0, 64)])
def test_long_prompts_go_through_the_packed_weights_where_they_win(default, packed, max_rows):
    from engine_check import cpu_linear
    from engine_check.model import Linear, prepack_for_cpu

    if not cpu_linear.prepack_works(torch.float32):
        pytest.skip("this torch build has no oneDNN prepacked matmul")
    cfg = tiny()
    plain = build_model(cfg, max_seq=80, dtype=torch.float32, device=CPU, seed=7)
    model = build_model(cfg, max_seq=80, dtype=torch.float32, device=CPU, seed=7)
    prepack_for_cpu(model, clock=steps(default, packed), prompt_rows=80)
    linears = [m for m in model.modules() if isinstance(m, Linear)]
    assert {m.packed_max_rows for m in linears} == {max_rows}
    tokens = torch.randint(0, cfg.vocab, (1, 80), generator=torch.Generator().manual_seed(3))
    used = []
    real = cpu_linear.packed_linear
    for m in (plain, model):
        m.setup_cache(1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cpu_linear, "packed_linear", lambda x, w: used.append(x.shape[1]) or real(x, w))
        got = prefill(model, tokens)
    # 80 rows through every block's four matmuls and the head's one row (the last position),
    # or, where the default kernel won both, none
    assert used == ([80] * 4 * cfg.layers + [1] if max_rows is None else [])
    torch.testing.assert_close(got, prefill(plain, tokens), rtol=1e-4, atol=1e-4)
