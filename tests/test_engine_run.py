"""A whole engine check with the tiny plan: result keys and types, timing helpers."""

import json
import math

import pytest

torch = pytest.importorskip("torch")

from drill.serving.kvmath import kv_cache_bytes  # noqa: E402
from engine_check.claims import CLAIM_NAMES  # noqa: E402
from engine_check.report import render_text  # noqa: E402
from engine_check.run import run_engine_check  # noqa: E402
from engine_check.timing import DeviceTimer, Timing, measure, percentile  # noqa: E402

ROW_KEYS = {
    "prefill": {"prompt_len": int, "ms": float, "p90_ms": float, "flops_per_s": float,
                "mfu": float, "predicted_ms": float},
    "decode": {"context_len": int, "ms": float, "p90_ms": float, "bytes_per_s": float,
               "mbu": float, "flops_util": float, "predicted_ms": float},
    "batch": {"batch": int, "ms": float, "tokens_per_s": float, "predicted_ms": float},
    "recompute": {"position": int, "cached_ms": float, "recompute_ms": float},
}  # fmt: skip


@pytest.fixture(scope="module")
def tiny_run():
    progress = []
    result = run_engine_check(
        device="cpu", mode="tiny", progress=lambda d, t, label: progress.append((d, t, label))
    )
    return result, progress


def test_result_has_every_key_with_the_right_type(tiny_run):
    result, _ = tiny_run
    assert result["schema"] == 3
    assert result["mode"] == "tiny"
    assert result["device"] == "cpu"
    assert result["dtype"] == "float32"
    assert result["torch_version"] == torch.__version__
    assert result["threads"] == torch.get_num_threads()
    assert isinstance(result["device_name"], str) and result["device_name"]
    assert isinstance(result["wall_s"], float) and result["wall_s"] > 0
    assert isinstance(result["cpu_count"], int)
    share = result["other_cpu_share"]
    assert share is None or (isinstance(share, float) and 0 <= share <= 1)
    assert result["config"]["model"]["layers"] == 2
    assert result["config"]["decode_runner"] == "eager"
    peaks = result["peaks"]
    assert isinstance(peaks["matmul_flops_per_s"], float) and peaks["matmul_flops_per_s"] > 0
    assert isinstance(peaks["bandwidth_bytes_per_s"], float) and peaks["bandwidth_bytes_per_s"] > 0
    assert peaks["spec"] is None  # no spec sheet for a CPU
    kernels = peaks["kernels"]
    names = ["matmul 128x128x128", "matmul 16x64x256", "matmul 16x64x256 prepacked",
             "matmul 16x128x64", "matmul 16x128x64 prepacked", "read", "copy", "triad"]  # fmt: skip
    from engine_check import cpu_linear

    if not cpu_linear.prepack_works(torch.float32):  # no oneDNN: the default kernels only
        names = [n for n in names if not n.endswith("prepacked")]
    assert [k["name"] for k in kernels if k["round"] == "before"] == names
    assert [k["name"] for k in kernels if k["round"] == "after"] == names
    assert {k["round"] for k in kernels} <= {"before", "after", "again"}
    for k in kernels:
        # a kernel's rate is its fastest call: never below the rate of its median call
        assert k["rate"] == pytest.approx(k["work"] / (k["best_ms"] / 1e3))
        assert k["rate"] >= k["median_rate"]
    # the CPU's stores read each line first: a copy of n bytes moves 3n, a triad 4n
    work = {k["name"]: k["work"] for k in kernels}
    assert (work["read"], work["copy"], work["triad"]) == (2**20, 3 * 2**20, 4 * 2**20)
    # each peak is the best kernel of any round, or a point that beat them all (warned)
    best = {kind: max(k["rate"] for k in kernels if k["kind"] == kind)
            for kind in ("matmul", "bandwidth")}  # fmt: skip
    assert peaks["matmul_flops_per_s"] >= best["matmul"]
    assert peaks["bandwidth_bytes_per_s"] >= best["bandwidth"]
    assert all(isinstance(w, str) for w in peaks["warnings"])
    # no utilisation above 1
    for section, keys in (("prefill", ("mfu", "bandwidth_util")), ("decode", ("mbu", "flops_util")),
                          ("batch", ("mbu", "flops_util"))):  # fmt: skip
        for row in result[section]:
            for key in keys:
                assert 0 < row[key] <= 1, (section, key, row[key])
    for section, keys in ROW_KEYS.items():
        rows = result[section]
        assert rows, section
        for row in rows:
            for key, kind in keys.items():
                assert isinstance(row[key], kind), (section, key)
                if kind is float:
                    assert math.isfinite(row[key]) and row[key] > 0, (section, key)
    assert [r["prompt_len"] for r in result["prefill"]] == [8, 16]
    assert [r["context_len"] for r in result["decode"]] == [8, 24]
    assert [r["batch"] for r in result["batch"]] == [1, 2, 4]
    assert [r["position"] for r in result["recompute"]] == [4, 12]
    assert set(result["claims"]) == set(CLAIM_NAMES)
    for claim in result["claims"].values():
        assert isinstance(claim["holds"], bool) and isinstance(claim["text"], str)
    json.dumps(result, allow_nan=False)  # plain JSON data


def test_rates_are_counts_divided_by_median_time(tiny_run):
    result, _ = tiny_run
    row = result["decode"][0]
    assert row["bytes_per_s"] == pytest.approx(row["bytes"] / (row["ms"] / 1e3))
    assert row["mbu"] == pytest.approx(
        row["bytes_per_s"] / result["peaks"]["bandwidth_bytes_per_s"]
    )
    row = result["prefill"][1]
    assert row["mfu"] == pytest.approx(row["flops_per_s"] / result["peaks"]["matmul_flops_per_s"])
    row = result["batch"][2]
    assert row["tokens_per_s"] == pytest.approx(4 / (row["ms"] / 1e3))


def test_kv_measured_equals_formula_exactly(tiny_run):
    result, _ = tiny_run
    kv = result["kv"]
    # tiny model: 2 layers, 2 KV heads, head_dim 16, longest decode context 24, fp32
    assert kv["formula_bytes"] == kv_cache_bytes(2, 2, 16, 24, 4, requests=1) == 12288
    assert kv["measured_bytes"] == 12288
    assert kv["allocator_delta_bytes"] is None  # the CPU reports no allocator
    assert result["claims"]["kv_formula_exact"]["holds"] is True


def test_progress_counts_every_point_once(tiny_run):
    _, progress = tiny_run
    total = progress[0][1]
    # 2 peaks before + the model + 2 prefill + 2 decode + 2 depths + the step beside a read
    # + the dtype probe + 3 batch + 2 recompute + 1 kv + 2 peaks after
    assert total == 19
    assert [d for d, _, _ in progress] == list(range(total + 1))
    assert progress[-1][2] == "done"


def test_text_report_ends_with_the_verdicts(tiny_run):
    result, _ = tiny_run
    text = render_text(result)
    lines = text.rstrip("\n").splitlines()
    verdicts = lines.index("verdicts")
    names = [line.split(":")[0].strip() for line in lines[verdicts + 1 :: 2]]
    assert names == list(CLAIM_NAMES)
    assert len(lines) == verdicts + 1 + 2 * len(CLAIM_NAMES)
    assert "(a) prefill" in text and "(e) KV cache bytes" in text


def test_percentile_interpolates_like_numpy():
    assert percentile([1, 2, 3, 4], 90) == pytest.approx(3.7)
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile([5.0], 90) == 5.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_measure_keeps_warmups_apart():
    calls = []
    timing = measure(lambda: calls.append(1), DeviceTimer(torch.device("cpu")), 2, 5)
    assert len(calls) == 7
    assert len(timing.warmup_ms) == 2 and len(timing.samples_ms) == 5
    fixed = Timing(warmup_ms=(100.0,), samples_ms=(3.0, 1.0, 2.0, 10.0, 4.0))
    assert fixed.median_ms == 3.0
    assert fixed.best_ms == 1.0
    assert fixed.p90_ms == pytest.approx(7.6)
    with pytest.raises(ValueError):
        measure(lambda: None, DeviceTimer(torch.device("cpu")), 0, 0)
