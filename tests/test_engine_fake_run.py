"""A whole engine check on the tiny model with every call timed by a script (no real
timing): the verdicts it gives when the time follows the bytes, and when injected
contention blurs the batch sweep."""

from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from engine_check import roofline  # noqa: E402
from engine_check.config import TINY_MODEL  # noqa: E402
from engine_check.run import run_engine_check  # noqa: E402


class ScriptedMeter:
    """Every point measured while other programs took `share` of the CPU."""

    def __init__(self, share):
        self.share = share

    def start(self):
        pass

    def stop(self):
        return self.share


class CostTimer:
    """Each call 'takes' what the point being measured costs on a memory-bound device
    (bytes / 1 GB/s), known from the progress label; `slow` makes chosen points slower."""

    def __init__(self, slow=None):
        self.label = ""
        self.slow = slow or {}
        self.paired_calls = 0

    def progress(self, done, total, label):
        self.label = label

    def time_ms(self, fn):
        fn()
        label, cfg = self.label, TINY_MODEL
        if label.startswith("decode through"):
            layers = int(label.split()[2])
            nbytes = roofline.decode_step_bytes(replace(cfg, layers=layers), 8, 1, 4)
        elif label.startswith("decode batch"):
            nbytes = roofline.decode_step_bytes(cfg, 8, int(label.split()[2]), 4)
        elif label.startswith("decode step beside a read"):
            # step and read in turns, step first: the step streams at half the read's rate
            self.paired_calls += 1
            if self.paired_calls % 2:
                return 2 * roofline.decode_step_bytes(cfg, 8, 1, 4) / 1e6
            return READ_BYTES / 1e6
        elif label.startswith("prefill"):
            nbytes = roofline.prefill_flops(cfg, int(label.split()[1])) / 10  # FLOP-bound
        else:
            nbytes = 1e6  # peaks, decode by context, recompute: 1 ms
        return nbytes / 1e6 * self.slow.get(label, 1.0)


# the tiny model's matmul weights: two blocks of 64x128, 64x64, 64x256 and 128x64, and
# the 256x64 output head, 4 bytes each
READ_BYTES = (2 * (64 * 128 + 64 * 64 + 64 * 256 + 128 * 64) + 256 * 64) * 4


def fake_run(timer, shares):
    return run_engine_check(
        device="cpu",
        mode="tiny",
        progress=timer.progress,
        timer=timer,
        new_meter=lambda: ScriptedMeter(shares),
    )


def test_a_fake_timed_run_where_time_follows_the_bytes_holds():
    result = fake_run(CostTimer(), 0.0)
    decode = result["claims"]["decode_memory_bound"]
    assert decode["verdict"] == "holds"
    assert "1.69x the bytes (1 to 2 blocks at batch 1) cost 1.69x" in decode["text"]
    assert result["claims"]["prefill_compute_bound"]["verdict"] == "holds"
    assert [r["layers"] for r in result["depth"]] == [1, 2]
    assert all(r["tries"] == 1 for r in result["depth"] + result["batch"])


def test_a_step_timed_in_turns_with_a_read_of_its_weights():
    quiet = fake_run(CostTimer(), 0.0)["stream_pair"]
    # a step reads 366,592 bytes as the roofline counts them (the matmul weights, the
    # norms, one embedding row, K and V of 9 positions) and takes them at 0.5 GB/s; the
    # read takes the matmul weights at 1 GB/s
    assert quiet["step_ms"] == pytest.approx([0.733184, 0.733184])
    assert quiet["read_ms"] == pytest.approx([0.360448, 0.360448])
    assert (quiet["step_bytes"], quiet["read_bytes"]) == (366_592, 360_448)
    assert quiet["fraction"] == pytest.approx(0.5)
    assert quiet["tries"] == 1
    busy = fake_run(CostTimer(), 0.5)
    assert busy["stream_pair"]["tries"] == 3
    assert "50% of a read of the same weights timed in turns" in (
        busy["claims"]["decode_memory_bound"]["text"]
    )


def test_contention_injected_in_a_fake_timed_run_gives_unsure():
    # another program slows batch 2 twofold and batch 4 fourfold: the time seems to
    # follow the FLOPs
    slow = {"decode batch 2": 2.0, "decode batch 4": 4.0}
    busy = fake_run(CostTimer(slow), 0.5)
    decode = busy["claims"]["decode_memory_bound"]
    assert decode["verdict"] == "unsure" and "machine was busy" in decode["text"]
    assert busy["claims"]["batch_amortizes_decode"]["verdict"] == "unsure"
    # each disturbed point was timed again (the script slows every try alike)
    assert [r["tries"] for r in busy["batch"]] == [3, 3, 3]
    assert busy["retry_s"] > 0
    quiet = fake_run(CostTimer(slow), 0.0)
    assert quiet["claims"]["decode_memory_bound"]["verdict"] == "does not hold"
    assert quiet["retry_s"] == 0.0
