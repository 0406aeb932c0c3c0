"""`kvdrill engine probe URL`: time a real serving engine through its OpenAI-compatible
streaming API, and `kvdrill engine probes`: the probe runs stored.

httpx is imported only when a probe runs (drill.serving.probe_client), never on the quiz
path. The API key is read from an environment variable and goes nowhere else.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import click

from drill.commands.options import db_option, open_database
from drill.errors import ConfigError, EngineError

# the probe's clock; tests replace it to make every time exact
CLOCK = time.perf_counter

PROBE_HELP = """Time a serving engine through its OpenAI-compatible streaming API.

URL is the server's root or its /v1 (vLLM, SGLang, trtllm-serve, llama.cpp's server and
ollama all serve /v1/completions and /v1/chat/completions with `stream: true`). For each
prompt length and each concurrency level, --requests requests are sent, that many kept in
flight at once, and every streamed chunk is timed.

\b
Conventions (vLLM's benchmark, `vllm bench serve`):
  TTFT  from sending a request to its first chunk with text
  TPOT  (end-to-end - TTFT) / (output tokens - 1), per request
  ITL   each gap between two streamed chunks
  p50/p90/p99 interpolate linearly between the nearest ranks
  throughput: output tokens/s and requests/s over a point's duration
  goodput: requests/s that met --slo-ttft and --slo-tpot

Prompt lengths are approximate: one common English word per token, opened by the
request's number so no two prompts share a cached prefix. Where the server sends
`usage` (asked for with stream_options include_usage) its counts are shown and used.

With --gpu and --preset the calculator (`kvdrill kv --latency`, at its stated default
efficiencies) predicts TTFT at each prompt length and TPOT at each concurrency, and its
error in percent against the measured medians is printed.

A stall (nothing for --timeout seconds), a dropped connection, an HTTP error or a
malformed stream ends the probe with one line and exit status 1; the points measured
until then are printed and stored. --max-seconds bounds the whole probe: at the limit it
stops, keeps what it measured and exits 0.

The API key is read from the environment variable --api-key-env names and is never
stored or printed. Runs are stored beside engine runs (`kvdrill engine probes`).

\b
--html FILE writes one self-contained page: TTFT against prompt length and TPOT
against concurrency, with the calculator's predictions when --gpu/--preset are given.

\b
--json prints one object (times in ms, rates per second):
  schema, kind ("probe"), url (without credentials or query), model, api,
  convention, token_counts (how prompt tokens are counted), created_at,
  settings   {prompt_tokens, concurrency, requests, output_tokens, timeout_s,
              max_seconds, ignore_eos, slo_ttft_ms, slo_tpot_ms}
  points     [{prompt_tokens, prompt_tokens_served, concurrency, sent, completed,
               duration_s, output_tokens, output_tokens_per_s, requests_per_s, good,
               goodput_requests_per_s, ttft_ms, tpot_ms, itl_ms, e2e_ms:
               {mean, p50, p90, p99} or null}]
  calculator null, or {preset, gpu, tp, mfu, mbu, efficiency_source,
               ttft_mean_abs_error_pct, tpot_mean_abs_error_pct,
               points: [{prompt_tokens, concurrency, ttft_predicted_ms, ttft_ms,
               ttft_error_pct, tpot_predicted_ms, tpot_ms, tpot_error_pct}]}
  stopped    null, or why --max-seconds stopped it
  error      null, or the one line that ended it
"""


def _counts(text: str, name: str, maximum: int) -> tuple[int, ...]:
    values = []
    for part in text.split(","):
        part = part.strip().replace("_", "")
        if not part.isdigit() or not 1 <= int(part) <= maximum:
            raise ConfigError(
                f"{name} takes whole numbers from 1 to {maximum:,} separated by commas, "
                f"got {text!r}"
            )
        values.append(int(part))
    return tuple(dict.fromkeys(values))


def _progress(label: str) -> None:
    click.echo(f"probing {label}", err=True)


@click.command("probe", help=PROBE_HELP, short_help="Time a serving engine's streaming API.")
@click.argument("url")
@click.option("--prompt-tokens", default="128,1024", show_default=True,
              help="Prompt lengths in tokens (approximate), comma-separated.")
@click.option("--concurrency", default="1,4", show_default=True,
              help="Requests in flight at once, comma-separated.")
@click.option("--requests", "requests_per_point", type=click.IntRange(1, 10_000), default=8,
              show_default=True, help="Requests per point (prompt length x concurrency).")
@click.option("--output-tokens", type=click.IntRange(1, 100_000), default=64,
              show_default=True, help="max_tokens of each request.")
@click.option("--ignore-eos", is_flag=True,
              help="Ask for exactly --output-tokens (vLLM, SGLang); others may refuse it.")
@click.option("--api", type=click.Choice(["completions", "chat"]), default="completions",
              show_default=True, help="/v1/completions or /v1/chat/completions.")
@click.option("--model", help="Model name [default: the first the server lists at /v1/models].")
@click.option("--timeout", "timeout_s", type=click.FloatRange(0, 3600, min_open=True),
              default=60.0, show_default=True,
              help="Seconds without data from the server before the probe gives up.")
@click.option("--max-seconds", type=click.FloatRange(0, 86_400, min_open=True), default=600.0,
              show_default=True, help="Seconds the whole probe may take.")
@click.option("--slo-ttft", "slo_ttft_ms", type=click.FloatRange(0, min_open=True),
              metavar="MS", help="Goodput's TTFT target, ms.")
@click.option("--slo-tpot", "slo_tpot_ms", type=click.FloatRange(0, min_open=True),
              metavar="MS", help="Goodput's TPOT target, ms.")
@click.option("--gpu", help="With --preset: the calculator's GPU (`kvdrill kv --list-gpus`).")
@click.option("--preset", help="With --gpu: the calculator's model (`kvdrill kv --list-presets`).")
@click.option("--tp", type=click.IntRange(1, 1024), default=1, show_default=True,
              help="The calculator's tensor-parallel GPUs.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, metavar="NAME",
              help="Environment variable holding the API key (sent as a Bearer token).")
@click.option("--json", "as_json", is_flag=True, help="Print the result object as JSON.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE", help="Also write the charts as a web page to FILE.")
@db_option()
def probe_cmd(
    url: str,
    prompt_tokens: str,
    concurrency: str,
    requests_per_point: int,
    output_tokens: int,
    ignore_eos: bool,
    api: str,
    model: str | None,
    timeout_s: float,
    max_seconds: float,
    slo_ttft_ms: float | None,
    slo_tpot_ms: float | None,
    gpu: str | None,
    preset: str | None,
    tp: int,
    api_key_env: str,
    as_json: bool,
    html_path: Path | None,
    db_path: Path | None,
) -> None:  # fmt: skip
    from datetime import datetime, timezone

    from drill.serving.probe_client import ProbeFailure, ProbeSettings, api_base, run_probe
    from drill.serving.probe_report import calculator_check, render_text
    from drill.srs import iso
    from drill.storage.outfile import check_outputs, protected_files
    from drill.storage.probe_runs import save_probe_run

    if (gpu is None) != (preset is None):
        raise ConfigError("--gpu and --preset go together: the calculator needs both")
    if gpu is not None and preset is not None:
        from drill.serving.gpus import gpu_named
        from drill.serving.kvmath import get_preset

        gpu_named(gpu), get_preset(preset)  # an unknown name fails before any request
    try:
        base = api_base(url)
    except ProbeFailure as exc:
        raise ConfigError(str(exc)) from None
    settings = ProbeSettings(
        url=base,
        model=model,
        api=api,
        prompt_tokens=_counts(prompt_tokens, "--prompt-tokens", 1_000_000),
        concurrency=_counts(concurrency, "--concurrency", 4096),
        requests=requests_per_point,
        output_tokens=output_tokens,
        timeout_s=timeout_s,
        max_seconds=max_seconds,
        ignore_eos=ignore_eos,
        slo_ttft_ms=slo_ttft_ms,
        slo_tpot_ms=slo_tpot_ms,
    )
    if html_path is not None:
        check_outputs([html_path], protected_files(db_path))
    db = open_database(db_path, write=True)  # a bad database fails now, not after the probe
    api_key = os.environ.get(api_key_env) or None
    result = run_probe(
        settings, api_key=api_key, key_env=api_key_env, clock=CLOCK, progress=_progress
    )
    result["calculator"] = (
        calculator_check(result, preset, gpu, tp)
        if gpu is not None and preset is not None and result["points"]
        else None
    )
    now = datetime.now(timezone.utc)
    result["created_at"] = iso(now)
    save_probe_run(db, result, now)
    if html_path is not None:
        from drill.reports.probe_html import render_page
        from drill.storage.outfile import write_text

        write_text(html_path, render_page(result), protected_files(db_path))
        click.echo(f"Wrote the probe's charts to {html_path}.", err=True)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(render_text(result), nl=False)
    if result.get("error"):
        raise EngineError(f"{result['error']} (the points measured before it are kept)")


@click.command(
    "probes",
    short_help="List the stored probe runs.",
    help="""List the stored probe runs, newest first: when, the URL, the model and each
point's median TTFT and TPOT.

\b
--json prints a list of the stored result objects (those `engine probe --json`
printed), newest first, each with its row id:
  id, schema, kind, url, model, api, convention, token_counts, settings, points,
  calculator, stopped, error, created_at
""",
)
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True,
              help="How many runs to list.")
@click.option("--json", "as_json", is_flag=True, help="Print the stored runs as JSON.")
@db_option()
def probes_cmd(limit: int, as_json: bool, db_path: Path | None) -> None:  # fmt: skip
    from drill.storage.probe_runs import probe_runs
    from drill.text import printable

    runs = probe_runs(open_database(db_path, write=False), limit)
    if as_json:
        click.echo(json.dumps(runs, indent=2))
        return
    if not runs:
        click.echo("No probe run stored yet; run `kvdrill engine probe URL`.")
        return
    for run in runs:
        when = str(run.get("created_at") or "")[:16].replace("T", " ")
        click.echo(f"#{run['id']} {when} {printable(str(run.get('url')))} "
                   f"model {printable(str(run.get('model')))}"
                   + (" (ended by an error)" if run.get("error") else ""))  # fmt: skip
        for p in run.get("points") or []:
            ttft, tpot = p.get("ttft_ms"), p.get("tpot_ms")
            ttft_text = f"{ttft['p50']:.1f} ms" if ttft else "-"
            tpot_text = f"{tpot['p50']:.1f} ms" if tpot else "-"
            click.echo(
                f"  prompt ~{p.get('prompt_tokens')}, concurrency {p.get('concurrency')}: "
                f"TTFT p50 {ttft_text}, TPOT p50 {tpot_text}"
            )
