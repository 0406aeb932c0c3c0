"""`kvdrill engine run --html` and `engine show --html`: the engine report as one page with
its roofline and charts, for a hand-made run (no torch needed)."""

import json
import re
from datetime import datetime, timezone

import pytest
from browser import needs_browser, screenshot
from click.testing import CliRunner

from drill.cli import cli
from drill.storage.database import open_db
from drill.storage.engine_runs import save_engine_run
from engine_check.config import TINY_MODEL, plan_for
from engine_check.html_report import render_page
from engine_check.report import assemble_result

HOSTILE = "<script>alert('cpu')</script>"


def made_run() -> dict:
    """A run as engine_check.run assembles it: 16 GB/s and 200 GFLOP/s peaks."""
    plan = plan_for("cpu", "tiny", "float32")
    cfg = TINY_MODEL
    config = {**plan.to_dict(), "params": cfg.params, "weight_bytes": cfg.params * 4,
              "decode_runner": "eager", "cuda_graphs": False, "seed": 0}  # fmt: skip
    peaks = {
        "matmul_flops_per_s": 200e9,
        "matmul_from": "matmul 128x128x128",
        "bandwidth_bytes_per_s": 16e9,
        "bandwidth_from": "read",
        "kernels": [
            {"name": "matmul 128x128x128", "kind": "matmul", "round": r, "work": 4194304,
             "rate": 200e9 if r == "after" else 180e9, "median_rate": 150e9,
             "best_ms": 0.02, "median_ms": 0.03, "calls": 5}
            for r in ("before", "after")
        ] + [
            {"name": name, "kind": "bandwidth", "round": "before", "work": work,
             "rate": rate, "median_rate": rate / 2, "best_ms": 1.0, "median_ms": 2.0, "calls": 9}
            for name, work, rate in (("read", 2**20, 16e9), ("copy", 3 * 2**20, 12e9))
        ],
        "warnings": [f"the bandwidth peak was measured low: {HOSTILE}"],
        "spec": None,
    }  # fmt: skip
    prefill = [{"prompt_len": t, "ms": 0.05 * t, "p90_ms": 0.06 * t, "warmup_ms": [1.0],
                "flops": 2e7 * t, "bytes": 4e5 + 1e3 * t} for t in (8, 16)]  # fmt: skip
    decode = [{"context_len": c, "ms": 0.05, "p90_ms": 0.07, "warmup_ms": [1.0],
               "flops": 4e5, "bytes": 4.3e5} for c in (8, 24)]  # fmt: skip
    batch = [{"batch": b, "context_len": 8, "ms": 0.05 + 0.01 * b, "p90_ms": 0.09,
              "warmup_ms": [1.0], "flops": 4e5 * b, "bytes": 4.3e5 + 1e3 * b}
             for b in (1, 2, 4)]  # fmt: skip
    recompute = [{"position": p, "cached_ms": 0.05, "recompute_ms": 0.1 * p, "cached_p90_ms": 0.06,
                  "recompute_p90_ms": 0.2 * p, "cached_flops": 4e5, "cached_bytes": 4.3e5,
                  "recompute_flops": 2e7 * p, "recompute_bytes": 4e5} for p in (4, 12)]  # fmt: skip
    kv = {"measured_bytes": 12288, "formula_bytes": 12288, "allocator_delta_bytes": None,
          "shape": [2, 2, 1, 24, 2, 16], "layers": 2, "kv_heads": 2, "head_dim": 16,
          "seq_len": 24, "requests": 1, "dtype_bytes": 4}  # fmt: skip
    meta = {"mode": "tiny", "device": "cpu", "device_name": HOSTILE, "dtype": "float32",
            "torch_version": "2.13.0+cpu", "threads": 2, "wall_s": 3.5, "cpu_count": 2,
            "other_cpu_share": 0.01}  # fmt: skip
    result = assemble_result(meta=meta, config=config, peaks=peaks, prefill=prefill,
                             decode=decode, batch=batch, recompute=recompute, kv=kv)  # fmt: skip
    result["created_at"] = "2026-11-02T07:00:00.000000+00:00"
    return json.loads(json.dumps(result))  # as stored


@pytest.fixture(scope="module")
def page() -> str:
    return render_page(made_run())


def test_three_charts_and_nothing_that_loads_or_runs(page):
    labels = re.findall(r'<svg class="chart" role="img" aria-label="([^"]+)"', page)
    assert labels == [
        "the roofline with every measured point",
        "time to first token against prompt length",
        "time per decode step against batch size",
    ]
    assert "Content-Security-Policy" in page
    assert "<script" not in page.replace("&lt;script", "")
    assert re.search(r"\b(src|href)=\"(?!#)", page) is None
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    assert "mathdefault" not in page  # log axes labelled in plain text


def test_the_peaks_their_kernels_and_the_warning(page):
    assert "Matmul peak <b>200 GFLOP/s</b> (matmul 128x128x128); memory bandwidth peak" in page
    assert "<b>16 GB/s</b> (read)." in page
    # the kernel table: a row per kernel, its best rate in each round, the peaks' in bold
    assert (
        '<tr class="best"><td class="text">matmul 128x128x128</td><td class="text">4.19 MFLOP'
        "</td><td>180 GFLOP/s</td><td>200 GFLOP/s</td></tr>"
    ) in page
    assert '<tr><td class="text">copy</td><td class="text">3 MiB moved</td><td>12 GB/s</td>' in page
    assert "the bandwidth peak was measured low: &lt;script&gt;" in page
    assert "; tiny run at 2026-11-02 07:00 UTC, 4 s</p>" in page


def test_the_roofline_draws_the_ridge_and_every_point(page):
    roofline = page[page.index('aria-label="the roofline') : page.index("</svg>")]
    assert "ridge: 12.5 FLOP/byte" in roofline  # 200 GFLOP/s / 16 GB/s
    for name in ("prefill (prompt tokens)", "decode, batch 1 (context)", "decode by batch"):
        assert name in roofline


def test_the_same_run_gives_the_same_page(page):
    assert render_page(made_run()) == page


def test_show_writes_the_page_and_never_over_the_database(tmp_path):
    db = tmp_path / "k.db"
    save_engine_run(open_db(db), made_run(), datetime(2026, 11, 2, 7, tzinfo=timezone.utc))
    out = tmp_path / "engine.html"
    result = CliRunner().invoke(cli, ["engine", "show", "--db", str(db), "--html", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"Wrote the engine report to {out}.\n"
    assert out.read_text(encoding="utf-8") == render_page(made_run())
    refused = CliRunner().invoke(cli, ["engine", "show", "--db", str(db), "--html", str(db)])
    assert refused.exit_code == 1
    assert refused.output == f"Error: refusing to write over {db}: it is kvdrill's database\n"


def test_a_run_stored_by_schema_1_still_draws(tmp_path):
    run = made_run()
    peaks = run["peaks"]
    run["schema"] = 1
    run["peaks"] = {"matmul_flops_per_s": peaks["matmul_flops_per_s"], "matmul_size": 128,
                    "copy_bytes_per_s": peaks["bandwidth_bytes_per_s"], "spec": None}  # fmt: skip
    page = render_page(run)
    assert "(copy (counted as 2 x its size))" in page
    assert page.count('<svg class="chart"') == 3


@needs_browser
def test_the_page_renders_with_its_charts_in_chromium(page, tmp_path):
    image = screenshot(page, tmp_path, 1000, 2400)
    colours = {rgb for _, rgb in image.getcolors(1 << 24)}
    assert len(colours) > 50
    # prefill's squares, decode's circles and the batch triangles in their own colours
    for rgb in ((0xD5, 0x5E, 0x00), (0x00, 0x72, 0xB2), (0x00, 0x9E, 0x73)):
        assert rgb in colours
