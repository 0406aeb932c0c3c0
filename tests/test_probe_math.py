"""The probe's arithmetic with literal values: percentiles, per-request TTFT/TPOT/ITL,
goodput at SLOs, the calculator's predictions beside a probe; and the stream's parser."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drill.serving.probe_client import ProbeFailure, api_base, parse_sse_line, prompt_text
from drill.serving.probe_report import calculator_check
from drill.serving.probe_stats import (
    RequestRecord,
    error_percent,
    meets_slo,
    percentile,
    summarize_point,
)


@pytest.mark.parametrize(
    ("values", "p", "expected"),
    [
        ([5.0], 99, 5.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
        ([4.0, 1.0, 3.0, 2.0], 90, 3.7),  # rank 0.9 * 3 = 2.7: 3 + 0.7 * (4 - 3)
        ([10.0, 20.0], 99, 19.9),
        ([10.0, 20.0, 30.0], 0, 10.0),
        ([10.0, 20.0, 30.0], 100, 30.0),
    ],
)
def test_percentile_interpolates_between_the_nearest_ranks(values, p, expected):
    assert percentile(values, p) == pytest.approx(expected)


def test_percentile_refuses_nothing_and_out_of_range():
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)
    with pytest.raises(ValueError, match="within 0..100"):
        percentile([1.0], 101)


def test_one_request_ttft_tpot_itl():
    record = RequestRecord(16, sent_s=1.0, chunk_times_s=[1.25, 1.30, 1.40], done=True)
    assert record.ttft_s == pytest.approx(0.25)
    assert record.e2e_s == pytest.approx(0.40)
    assert record.tpot_s == pytest.approx(0.075)  # (0.40 - 0.25) / (3 - 1)
    assert record.itls_s == pytest.approx([0.05, 0.10])
    # the server's usage count wins over chunks: 6 tokens in 3 chunks
    record.output_tokens = 6
    assert record.tpot_s == pytest.approx(0.03)  # 0.15 / 5
    one = RequestRecord(16, sent_s=0.0, chunk_times_s=[0.2], done=True)
    assert (one.tpot_s, one.itls_s) == (None, [])


def test_goodput_counts_requests_meeting_both_slos():
    fast = RequestRecord(8, 0.0, [0.1, 0.12, 0.14], done=True)  # TTFT 100, TPOT 20 ms
    slow_first = RequestRecord(8, 0.0, [0.5, 0.51, 0.52], done=True)  # TTFT 500, TPOT 10
    slow_steps = RequestRecord(8, 0.0, [0.1, 0.2, 0.3], done=True)  # TTFT 100, TPOT 100
    single = RequestRecord(8, 0.0, [0.1], done=True)  # no TPOT: meets that SLO
    cut = RequestRecord(8, 0.0, [0.1, 0.11], done=False)  # never finished
    assert [meets_slo(r, 0.2, 0.05) for r in (fast, slow_first, slow_steps, single)] == [
        True, False, False, True,
    ]  # fmt: skip
    assert meets_slo(slow_steps, None, None) is True
    assert meets_slo(RequestRecord(8, 0.0), None, None) is False
    point = summarize_point(8, 2, [fast, slow_first, slow_steps, single, cut], 0.0, 0.2, 0.05)
    assert (point["sent"], point["completed"], point["good"]) == (5, 4, 2)
    assert point["duration_s"] == pytest.approx(0.52)
    assert point["goodput_requests_per_s"] == pytest.approx(3.846, abs=1e-3)  # 2 / 0.52
    assert point["requests_per_s"] == pytest.approx(7.692, abs=1e-3)  # 4 / 0.52
    assert point["output_tokens"] == 10
    assert point["output_tokens_per_s"] == pytest.approx(19.231, abs=1e-3)  # 10 / 0.52
    assert point["ttft_ms"]["p50"] == pytest.approx(100.0)
    assert point["tpot_ms"]["mean"] == pytest.approx(43.333, abs=1e-3)  # 20, 10, 100


def test_a_point_where_nothing_completed():
    point = summarize_point(8, 1, [RequestRecord(8, 0.0)], 0.0)
    assert (point["completed"], point["duration_s"], point["requests_per_s"]) == (0, 0.0, None)
    assert point["ttft_ms"] is None and point["itl_ms"] is None


def test_error_percent():
    assert error_percent(110.0, 100.0) == pytest.approx(10.0)
    assert error_percent(50.0, 200.0) == pytest.approx(-75.0)
    assert error_percent(1.0, 0.0) is None


def test_calculator_beside_a_probe_worked_by_hand():
    """Llama 3 8B on one H100 at MFU 50 %, MBU 70 % (3.35 TB/s x 0.7 = 2.345e12 B/s);
    both memory-bound. TTFT of 17 tokens: weights 8.03e9 x 2 B + 17 x 131,072 B of KV
    = 16,062,228,224 B -> 6.8496 ms. TPOT at batch 1, context 17 + 4/2 = 19:
    16,062,490,368 B -> 6.8497 ms."""
    point = {
        "prompt_tokens": 16, "prompt_tokens_served": 17, "concurrency": 1, "completed": 2,
        "output_tokens": 8, "ttft_ms": {"p50": 150.0}, "tpot_ms": {"p50": 15.0},
    }  # fmt: skip
    check = calculator_check({"points": [point]}, "llama-3-8b", "h100", 1)
    (row,) = check["points"]
    assert row["ttft_predicted_ms"] == pytest.approx(6.84956, abs=1e-4)
    assert row["ttft_error_pct"] == pytest.approx(-95.434, abs=1e-3)
    assert row["tpot_predicted_ms"] == pytest.approx(6.84968, abs=1e-4)
    assert row["tpot_error_pct"] == pytest.approx(-54.335, abs=1e-3)
    assert check["ttft_mean_abs_error_pct"] == pytest.approx(95.434, abs=1e-3)
    assert (check["mfu"], check["mbu"], check["gpu"]) == (0.5, 0.7, "h100")


def test_calculator_compares_ttft_only_at_the_lowest_concurrency():
    base = {"prompt_tokens": 16, "completed": 1, "output_tokens": 2,
            "ttft_ms": {"p50": 10.0}, "tpot_ms": {"p50": 10.0}}  # fmt: skip
    check = calculator_check(
        {"points": [{**base, "concurrency": 2}, {**base, "concurrency": 8}]}, "llama-3-8b", "h100"
    )
    assert ["ttft_error_pct" in row for row in check["points"]] == [True, False]
    assert ["tpot_error_pct" in row for row in check["points"]] == [True, True]


@pytest.mark.parametrize(
    ("typed", "base"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
        ("http://localhost:8000/v1/", "http://localhost:8000/v1"),
        ("https://user:pw@host/api/v1/chat/completions?key=s#x", "https://host/api/v1"),
        ("http://[::1]:11434/v1/completions", "http://[::1]:11434/v1"),
    ],
)
def test_api_base_drops_credentials_and_finds_v1(typed, base):
    assert api_base(typed) == base


def test_prompts_have_the_length_asked_and_differ_at_the_start():
    assert prompt_text(5, 3) == "#3 the cat sat on"
    assert len(prompt_text(1000, 0).split()) == 1000
    assert prompt_text(1, 7) == "#7"


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("", None), (": keep-alive", None), ("event: message", None), ("id: 4", None),
        ("data: [DONE]", "done"), ("data:[DONE]", "done"),
        ('data: {"choices": []}', {"choices": []}),
    ],
)  # fmt: skip
def test_sse_lines(line, parsed):
    assert parse_sse_line(line) == parsed


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("data: {oops", "malformed stream: a data line is not JSON"),
        ("data: [1, 2]", "malformed stream: a data line is not a JSON object"),
        ('data: {"error": {"message": "overloaded"}}',
         "the server sent an error mid-stream: overloaded"),
        ("{\"choices\": []}", "malformed stream: not a Server-Sent Events line"),
    ],
)  # fmt: skip
def test_bad_sse_lines(line, message):
    with pytest.raises(ProbeFailure, match=message.replace("[", r"\[")):
        parse_sse_line(line)


@given(st.text(max_size=200))
def test_any_line_is_parsed_or_refused_with_a_probe_failure(line):
    """Never another exception: whatever a server sends ends in the probe's one line."""
    try:
        parsed = parse_sse_line(line)
    except ProbeFailure as exc:
        assert str(exc)
    else:
        assert parsed is None or parsed == "done" or isinstance(parsed, dict)
