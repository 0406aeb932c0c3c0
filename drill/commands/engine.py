"""`kvdrill engine`: measure prefill vs decode on this machine, and show the last run.

torch is imported only when `engine run` runs, so neither `kvdrill --help` nor
`engine show` pays for it.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from drill.commands.options import db_option, open_database
from drill.errors import EngineError

_db_option = db_option()


HTML_HELP = """
--html FILE writes the run as one self-contained web page: the peaks and the
kernels they came from, the roofline with every prefill, decode and batch point
at its arithmetic intensity, time to first token against prompt length and time
per decode step against batch size beside the roofline's predictions, and the
verdicts. It loads nothing and runs nothing; the same run gives the same file.
"""

RESULT_JSON_HELP = """
\b
--json prints one object (times in ms, rates per second, shares as fractions):
  schema, mode, device, device_name, dtype, torch_version, threads, cpu_count,
  wall_s, other_cpu_share, created_at, config,
  peaks      {matmul_flops_per_s, matmul_from, bandwidth_bytes_per_s,
              bandwidth_from, kernels: [{name, kind, round, work, rate, ...}],
              warnings: [...], spec: {...} | null}
  prefill    [{prompt_len, ms, p90_ms, flops_per_s, mfu, predicted_ms, ...}]
  decode     [{context_len, ms, p90_ms, bytes_per_s, mbu, flops_util,
               predicted_ms, ...}]
  batch      [{batch, ms, p90_ms, tokens_per_s, predicted_ms, ...}]
  depth      [{layers, context_len, ms, best_ms, bytes, ...}]
  stream_pair  {step_ms, read_ms, step_bytes, read_bytes, fraction, ...}
  dtype_probe  [{dtype, bytes, best_ms, kernel, bytes_per_s}]
  batch_ridge  smallest batch the roofline calls compute-bound, or null
  recompute  [{position, cached_ms, recompute_ms, ...}]
  kv         {measured_bytes, formula_bytes, allocator_delta_bytes, ...}
  claims     {decode_memory_bound | prefill_compute_bound | kv_formula_exact |
              cache_beats_recompute | batch_amortizes_decode: {holds, text}}
  calculator {mfu, mbu, points: [{kind, label, predicted_ms, bound,
              measured_ms, error_pct, ...}], ttft_mean_abs_error_pct,
              tpot_mean_abs_error_pct, notes: [...], ...}
"""


@click.group()
def engine() -> None:
    """Measure prefill vs decode on this machine (needs torch), or probe a serving engine."""


def _progress(done: int, total: int, label: str) -> None:
    if done < total:
        click.echo(f"[{done + 1}/{total}] {label}", err=True)


RUN_HELP = """Measure prefill vs decode against this machine's peaks, and store the run.

Times prefill (TTFT) by prompt length, decode (TPOT) by context and by batch,
cached decode vs recomputing the prefix, and the KV cache's bytes, each beside
its roofline time from the peaks measured in the same run: the fastest of a
read, a copy and a triad stream for memory bandwidth, the fastest of several
matmul shapes for FLOP/s, measured before and after the experiments. No
utilisation exceeds 100%: a point that beats a peak has it measured again, and
the report says so. The calculator's TTFT and TPOT (kv --latency's formulas,
this run's peaks and efficiencies) stand beside every point with their error.
Progress goes to stderr; the report ends with plain-words verdicts.
"""


def html_option(fn):
    return click.option(
        "--html",
        "html_path",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE",
        help="Also write the run as a web page with the roofline and charts to FILE.",
    )(fn)


def _write_page(result: dict, html_path: Path, db_path: Path | None) -> None:
    from drill.storage.outfile import protected_files, write_text
    from engine_check.html_report import render_page

    try:
        page = render_page(result)
    except (KeyError, TypeError, ValueError, AttributeError, ZeroDivisionError):
        raise EngineError(
            "the stored engine run is incomplete or from another kvdrill version; "
            "run `kvdrill engine run` again"
        ) from None
    write_text(html_path, page, protected_files(db_path))
    click.echo(f"Wrote the engine report to {html_path}.", err=True)


def _refuse_the_database(html_path: Path | None, db_path: Path | None) -> None:
    if html_path is not None:
        from drill.storage.outfile import check_outputs, protected_files

        check_outputs([html_path], protected_files(db_path))


@engine.command(
    "run",
    help=RUN_HELP + HTML_HELP + RESULT_JSON_HELP,
    short_help="Measure prefill vs decode here.",
)
@click.option(
    "--quick", is_flag=True, help="Fewer points and repeats (under a minute on a 2-core CPU)."
)
@click.option(
    "--device",
    default="auto",
    show_default=True,
    help="auto (CUDA, then MPS, then CPU), cuda, mps or cpu.",
)
@click.option(
    "--dtype",
    default="auto",
    show_default=True,
    help="float32, bfloat16, float16; auto is float32 on CPU, bfloat16 on CUDA, float16 on MPS.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result object as JSON.")
@html_option
@_db_option
@click.option("--tiny", is_flag=True, hidden=True, help="Toy model and plan, for tests.")
def run_cmd(
    quick: bool,
    device: str,
    dtype: str,
    as_json: bool,
    html_path: Path | None,
    db_path: Path | None,
    tiny: bool,
) -> None:
    from datetime import datetime, timezone

    from drill.srs import iso
    from drill.storage.engine_runs import save_engine_run
    from engine_check.config import canonical_dtype, check_device_name

    # bad names fail before torch loads or anything is measured
    check_device_name(device)
    if dtype.strip().lower() != "auto":
        canonical_dtype(dtype, "cpu")
    _refuse_the_database(html_path, db_path)
    from engine_check.torch_loader import load_torch

    torch = load_torch()
    db = open_database(db_path, write=True)  # a bad database fails now, not after the run

    from engine_check.report import render_text
    from engine_check.run import run_engine_check

    mode = "tiny" if tiny else "quick" if quick else "full"
    oom = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    try:
        result = run_engine_check(device=device, dtype=dtype, mode=mode, progress=_progress)
    except oom:
        raise EngineError(
            "the device ran out of memory; close other GPU programs or try --quick"
        ) from None
    now = datetime.now(timezone.utc)
    result["created_at"] = iso(now)
    save_engine_run(db, result, now)
    if html_path is not None:
        _write_page(result, html_path, db_path)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(render_text(result), nl=False)


@engine.command(
    "show",
    help="Print the latest stored engine run (the same object `engine run --json` printed).\n"
    + HTML_HELP
    + RESULT_JSON_HELP,
    short_help="Print the latest stored engine run.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the stored result object as JSON.")
@html_option
@_db_option
def show_cmd(as_json: bool, html_path: Path | None, db_path: Path | None) -> None:
    from drill.storage.engine_runs import latest_engine_run
    from engine_check.report import render_text

    _refuse_the_database(html_path, db_path)
    result = latest_engine_run(open_database(db_path, write=False))
    if result is None:
        raise EngineError(
            "no engine run stored yet; run `kvdrill engine run` (--quick: about a minute)"
        )
    if html_path is not None:
        _write_page(result, html_path, db_path)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    try:
        text = render_text(result)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise EngineError(
            "the stored engine run is incomplete or from another kvdrill version; "
            "run `kvdrill engine run` again (`engine show --json` prints it as stored)"
        ) from None
    click.echo(text, nl=False)


# a serving engine timed from outside (httpx, loaded only when a probe runs)
from drill.commands.engine_probe import probe_cmd, probes_cmd  # noqa: E402

engine.add_command(probe_cmd)
engine.add_command(probes_cmd)
