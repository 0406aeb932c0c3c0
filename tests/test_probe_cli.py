"""`kvdrill engine probe` end to end, against a streaming server on the loopback whose
chunk times the test sets (tests/sse_server.py: the probe's clock is stepped by the
server, so every time below is exact, however busy the machine)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from sse_server import LoopbackServer, SteppedClock

import drill.commands.engine_probe as engine_probe
from drill.cli import cli
from drill.storage.database import open_db
from drill.storage.probe_runs import probe_runs

SECRET = "sk-test-not-a-real-key-7731"


def two_requests(number, body):
    """Request 0: chunks at 100, 120, 150, 160 ms (TTFT 100, ITLs 20, 30, 10, TPOT 20);
    request 1: at 200, 210, 220, 230 ms (TTFT 200, ITLs 10, 10, 10, TPOT 10)."""
    times = [(0.100, 0.120, 0.150, 0.160), (0.200, 0.210, 0.220, 0.230)][number % 2]
    return [
        *(("at", t, f" w{i}") for i, t in enumerate(times)),
        ("usage", 17, 4),
        ("done",),
    ]


@pytest.fixture
def clock(monkeypatch):
    stepped = SteppedClock()
    monkeypatch.setattr(engine_probe, "CLOCK", stepped)
    return stepped


def probe(url, tmp_path, *args, env=None):
    db = tmp_path / "k.db"
    result = CliRunner().invoke(
        cli,
        ["engine", "probe", url, "--db", str(db), "--prompt-tokens", "16",
         "--concurrency", "1", "--requests", "2", "--timeout", "2", *args],
        env=env or {},
    )  # fmt: skip
    return result, db


def one_line_error(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.output + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return lines[-1]


def test_exact_ttft_tpot_itl_throughput_and_goodput(tmp_path, clock):
    with LoopbackServer(two_requests, clock) as server:
        result, db = probe(
            server.url, tmp_path, "--json", "--slo-ttft", "250", "--slo-tpot", "15"
        )
    assert result.exit_code == 0, result.output + result.stderr
    data = json.loads(result.stdout)
    (point,) = data["points"]
    assert data["model"] == "tiny-model"  # the first of /v1/models
    assert data["url"] == server.url + "/v1"
    assert (point["sent"], point["completed"], point["output_tokens"]) == (2, 2, 8)
    assert point["prompt_tokens_served"] == 17
    assert point["ttft_ms"]["mean"] == pytest.approx(150.0)
    assert point["ttft_ms"]["p50"] == pytest.approx(150.0)
    assert point["ttft_ms"]["p90"] == pytest.approx(190.0)
    assert point["ttft_ms"]["p99"] == pytest.approx(199.0)
    assert point["tpot_ms"]["p50"] == pytest.approx(15.0)
    assert point["tpot_ms"]["p99"] == pytest.approx(19.9)
    # ITLs 20, 30, 10, 10, 10, 10 ms: sorted 10, 10, 10, 10, 20, 30
    assert point["itl_ms"]["p50"] == pytest.approx(10.0)
    assert point["itl_ms"]["p90"] == pytest.approx(25.0)
    assert point["itl_ms"]["mean"] == pytest.approx(15.0)
    assert point["e2e_ms"]["p50"] == pytest.approx(195.0)
    # request 1 is sent at 160 ms (when request 0's [DONE] came) and ends at 390 ms
    assert point["duration_s"] == pytest.approx(0.390)
    assert point["output_tokens_per_s"] == pytest.approx(20.5128, abs=1e-3)
    assert point["requests_per_s"] == pytest.approx(5.1282, abs=1e-3)
    # only request 1 meets TTFT <= 250 ms and TPOT <= 15 ms (request 0's TPOT is 20 ms)
    assert point["good"] == 1
    assert point["goodput_requests_per_s"] == pytest.approx(2.5641, abs=1e-3)
    assert data["error"] is None and data["stopped"] is None
    (stored,) = probe_runs(open_db(db))
    assert stored["points"] == data["points"]
    # what was sent: a 16-word prompt, usage asked for, streaming
    body = server.bodies[0]
    assert body["prompt"].startswith("#0 the cat sat") and len(body["prompt"].split()) == 16
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "tiny-model" and body["max_tokens"] == 64


def test_text_names_the_convention_and_the_figures(tmp_path, clock):
    with LoopbackServer(two_requests, clock) as server:
        result, _db = probe(server.url, tmp_path, "--slo-tpot", "15")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "TPOT = (end-to-end - TTFT) / (output tokens - 1) per request" in out
    assert "ITL = each gap between streamed chunks" in out
    assert "Goodput: requests/s meeting TPOT <= 15 ms." in out
    row = next(line for line in out.splitlines() if line.strip().startswith("17 "))
    assert row.split() == [
        "17", "1", "2/2", "150.0", "190.0", "199.0", "15.0", "19.0", "19.9",
        "10.0", "25.0", "29.5", "20.51", "5.13", "2.56",
    ]  # fmt: skip


def test_chat_api_and_chunk_counting_without_usage(tmp_path, clock):
    def script(number, body):
        return [("at", 0.05, "a"), ("at", 0.08, "b"), ("at", 0.09, "c"), ("done",)]

    with LoopbackServer(script, clock) as server:
        result, _db = probe(server.url + "/v1", tmp_path, "--api", "chat", "--json",
                            "--model", "mine", "--requests", "1")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (point,) = json.loads(result.stdout)["points"]
    assert server.bodies[0]["messages"][0]["role"] == "user"
    assert server.bodies[0]["model"] == "mine"
    assert point["output_tokens"] == 3 and point["prompt_tokens_served"] is None
    assert point["tpot_ms"]["p50"] == pytest.approx(20.0)  # (90 - 50) / (3 - 1)


def test_concurrency_keeps_that_many_requests_in_flight(tmp_path):
    def script(number, body):
        return [("wait_for_peers",), ("at", 0, "x"), ("at", 0, "y"), ("usage", 16, 2), ("done",)]

    with LoopbackServer(script) as server:
        server.peer_target = 4
        result, _db = probe(server.url, tmp_path, "--concurrency", "4", "--requests", "8",
                            "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (point,) = json.loads(result.stdout)["points"]
    assert (point["concurrency"], point["completed"], point["output_tokens"]) == (4, 8, 16)
    assert server.max_in_flight == 4
    # every prompt opens with its own number: no shared prefix to cache
    assert sorted(b["prompt"].split()[0] for b in server.bodies) == [f"#{i}" for i in range(8)]


def stalls_on_the_second(number, body):
    if number == 0:
        return two_requests(0, body)
    return [("at", 0.1, "x"), ("stall",)]


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (stalls_on_the_second,
         "request 2 at 16 prompt tokens, concurrency 1: the server sent nothing for 0.5 s "
         "(--timeout): it stalled (the points measured before it are kept)"),
        (lambda n, b: two_requests(0, b) if n == 0 else [("at", 0.1, "x"), ("drop",)],
         "request 2 at 16 prompt tokens, concurrency 1: the server dropped the connection "
         "mid-stream"),
        (lambda n, b: two_requests(0, b) if n == 0 else [("at", 0.1, "x"), ("raw", b"data: {oops\n\n")],
         "request 2 at 16 prompt tokens, concurrency 1: malformed stream: a data line is not "
         "JSON: 'data: {oops'"),
        (lambda n, b: two_requests(0, b) if n == 0 else [("raw", b"<html>busy</html>\n")],
         "request 2 at 16 prompt tokens, concurrency 1: malformed stream: not a Server-Sent "
         "Events line: '<html>busy</html>'"),
        (lambda n, b: two_requests(0, b) if n == 0 else [("at", 0.1, "x"), ("usage", 16, 1)],
         "request 2 at 16 prompt tokens, concurrency 1: the stream ended without "
         "`data: [DONE]`: the server closed the connection mid-stream"),
        (lambda n, b: two_requests(0, b) if n == 0
         else [("status", 500, {"error": {"message": "boom"}})],
         "request 2 at 16 prompt tokens, concurrency 1: the server answered HTTP 500 "
         "Internal Server Error: boom"),
    ],
    ids=["stall", "drop", "not-json", "not-sse", "no-done", "http-500"],
)  # fmt: skip
def test_a_failing_server_gives_one_line_and_keeps_what_was_measured(
    tmp_path, clock, script, message
):
    with LoopbackServer(script, clock) as server:
        result, db = probe(server.url, tmp_path, "--timeout", "0.5", "--requests", "3")
    assert result.exit_code == 1
    line = one_line_error(result)
    assert line.startswith("Error: " + message), line
    # the request that completed is reported and stored, with the error
    row = next(r for r in result.stdout.splitlines() if r.strip().startswith("17 "))
    assert row.split()[:4] == ["17", "1", "1/2", "100.0"]
    (stored,) = probe_runs(open_db(db))
    assert stored["points"][0]["completed"] == 1 and stored["points"][0]["sent"] == 2
    assert stored["error"].startswith(message.removesuffix(
        " (the points measured before it are kept)"))  # fmt: skip


def test_a_refused_key_is_one_line_and_the_key_is_never_printed_or_stored(tmp_path, clock):
    def script(number, body):
        return [("status", 401, {"error": {"message": f"invalid key {SECRET}"}})]

    with LoopbackServer(script, clock) as server:
        result, db = probe(server.url, tmp_path, "--model", "m", env={"OPENAI_API_KEY": SECRET})
    assert result.exit_code == 1
    assert server.seen_auth == [f"Bearer {SECRET}"]
    assert one_line_error(result) == (
        "Error: request 1 at 16 prompt tokens, concurrency 1: the server answered HTTP 401 "
        "Unauthorized: invalid key ***; the API key is read from $OPENAI_API_KEY "
        "(--api-key-env) (the points measured before it are kept)"
    )
    assert SECRET not in result.output + result.stderr
    assert SECRET.encode() not in db.read_bytes()


def test_the_key_comes_from_the_variable_named(tmp_path, clock):
    with LoopbackServer(two_requests, clock) as server:
        result, _db = probe(server.url, tmp_path, "--api-key-env", "MY_KEY", "--requests", "1",
                            env={"MY_KEY": "k2", "OPENAI_API_KEY": "other"})  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert set(server.seen_auth) == {"Bearer k2"}


def test_no_model_listed_and_no_server(tmp_path, clock):
    with LoopbackServer(two_requests, clock, models=None) as server:
        result, _db = probe(server.url, tmp_path)
    assert result.exit_code == 1
    assert one_line_error(result).startswith(
        "Error: listing the models: the server answered HTTP 404 Not Found: no such route; "
        "pass --model NAME"
    )
    url = server.url  # closed now
    result, _db = probe(url, tmp_path, "--model", "m")
    assert result.exit_code == 1
    assert one_line_error(result).startswith(
        f"Error: request 1 at 16 prompt tokens, concurrency 1: cannot connect to {url}/v1"
    )


def test_max_seconds_stops_the_probe_and_keeps_what_it_measured(tmp_path):
    def script(number, body):
        return [("at", 0, "x"), ("stall",)] if number >= 1 else two_requests(0, body)

    with LoopbackServer(script) as server:
        result, _db = probe(server.url, tmp_path, "--max-seconds", "0.5", "--timeout", "30",
                            "--requests", "3", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["stopped"] == (
        "stopped after 0.5 s (--max-seconds), in the point of 16 prompt tokens at concurrency 1"
    )
    assert data["points"][0]["completed"] == 1 and data["error"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prompt-tokens", "128,x"],
         "Error: --prompt-tokens takes whole numbers from 1 to 1,000,000 separated by commas, "
         "got '128,x'"),
        (["--gpu", "h100"], "Error: --gpu and --preset go together: the calculator needs both"),
        (["--gpu", "h1000", "--preset", "llama-3-8b"], "Error: unknown GPU"),
    ],
)  # fmt: skip
def test_bad_options_fail_before_any_request(tmp_path, args, message):
    result, _db = probe("http://127.0.0.1:9", tmp_path, *args)
    assert result.exit_code == 1
    assert one_line_error(result).startswith(message)


def test_a_url_that_is_not_http(tmp_path):
    result, _db = probe("ftp://example/v1", tmp_path)
    assert result.exit_code == 1
    assert one_line_error(result) == "Error: not an http(s) URL: 'ftp://example/v1'"


def test_help_names_every_json_key_of_a_real_probe(tmp_path, clock):
    with LoopbackServer(two_requests, clock) as server:
        result, db = probe(server.url, tmp_path, "--json", "--gpu", "h100",
                           "--preset", "llama-3-8b")  # fmt: skip
    data = json.loads(result.stdout)
    keys = set(data) | set(data["settings"]) | set(data["points"][0])
    keys |= set(data["calculator"]) | set(data["calculator"]["points"][0])
    help_text = CliRunner().invoke(cli, ["engine", "probe", "--help"]).output
    assert sorted(k for k in keys if not re.search(rf"\b{k}\b", help_text)) == []
    listed = CliRunner().invoke(cli, ["engine", "probes", "--db", str(db), "--json"])
    (run,) = json.loads(listed.stdout)
    probes_help = CliRunner().invoke(cli, ["engine", "probes", "--help"]).output
    assert sorted(k for k in run if not re.search(rf"\b{k}\b", probes_help)) == []


def test_probes_lists_the_stored_runs(tmp_path, clock):
    db = tmp_path / "k.db"
    open_db(db).conn.close()
    empty = CliRunner().invoke(cli, ["engine", "probes", "--db", str(db)])
    assert empty.output == "No probe run stored yet; run `kvdrill engine probe URL`.\n"
    with LoopbackServer(two_requests, clock) as server:
        probe(server.url, tmp_path)
    listed = CliRunner().invoke(cli, ["engine", "probes", "--db", str(db)]).output
    assert listed.splitlines()[1] == (
        "  prompt ~16, concurrency 1: TTFT p50 150.0 ms, TPOT p50 15.0 ms"
    )
    assert listed.splitlines()[0].endswith(f"{server.url}/v1 model tiny-model")


def test_html_page_draws_both_charts_with_the_calculator_and_escapes_the_server(
    tmp_path, clock
):
    page = tmp_path / "probe.html"
    with LoopbackServer(two_requests, clock, models=["<b>evil</b> & co"]) as server:
        result, _db = probe(server.url, tmp_path, "--gpu", "h100", "--preset", "llama-3-8b",
                            "--html", str(page))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    text = page.read_text(encoding="utf-8")
    assert "&lt;b&gt;evil&lt;/b&gt; &amp; co" in text and "<b>evil" not in text
    assert text.count('<svg class="chart"') == 2
    assert 'aria-label="median TTFT against prompt length"' in text
    assert "Mean absolute error: TTFT 95%, TPOT 54%." in text
    assert "<script" not in text
    # the terminal shows the calculator's error too
    assert "Calculator's mean absolute error: TTFT 95%, TPOT 54%." in result.stdout
    row = result.stdout.splitlines()[-2]
    assert row.split() == ["17", "1", "6.8", "150.0", "-95%", "6.8", "15.0", "-54%"]
