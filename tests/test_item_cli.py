"""`kvdrill ask` / `kvdrill check` and `kvdrill bank list|schema`, driven through click."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from drill.cli import cli

BANKS = Path(__file__).parent / "banks"
GOOD = str(BANKS / "good")


def run(*args: str, env: dict | None = None):
    result = CliRunner().invoke(cli, list(args), env=env)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


def ask_json(qid: str, seed: int, *extra: str) -> dict:
    result = run("ask", qid, "--seed", str(seed), "--json", "--bank", GOOD, *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def check_json(qid: str, seed: int, answer: str) -> tuple[int, dict]:
    result = run("check", qid, "--seed", str(seed), "--answer", answer, "--json", "--bank", GOOD)
    return result.exit_code, json.loads(result.stdout)


def test_ask_json_reproduces_the_worked_example():
    assert ask_json("fx-kv-request", 11) == {
        "id": "fx-kv-request",
        "seed": 11,
        "kind": "numeric",
        "topic": "kv-cache",
        "difficulty": 1,
        "text": "A model has 32 layers, 8 KV heads of dimension 128 and an FP16 cache "
        "(2 bytes). How many bytes of KV cache does one request of 4,096 tokens hold?",
        "params": {
            "layers": 32,
            "kv_heads": 8,
            "head_dim": 128,
            "seq": 4096,
            "dtype_bytes": 2,
            "per_token": 131072,
        },
        "expected": 536870912,
        "unit": "bytes",
        "show_as": "GiB",
    }


def test_ask_text_output():
    result = run("ask", "fx-kv-request", "--seed", "11", "--bank", GOOD)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "fx-kv-request · seed 11 · kv-cache",
        "",
        "A model has 32 layers, 8 KV heads of dimension 128 and an FP16 cache (2 bytes). "
        "How many bytes of KV cache does one request of 4,096 tokens hold?",
        "",
        "Answer with a number and unit (e.g. in GiB), then check it with:",
        # the check reads the same bank to find the question
        f'  kvdrill check fx-kv-request --seed 11 --bank {GOOD} --answer "..."',
    ]


def test_same_id_and_seed_same_numbers_across_runs():
    first = ask_json("fx-concurrent", 42)
    assert ask_json("fx-concurrent", 42) == first
    texts = {ask_json("fx-concurrent", seed)["text"] for seed in range(8)}
    assert len(texts) > 1
    n, gib = first["params"]["requests"], first["params"]["per_request_gib"]
    assert first["expected"] == n * gib * 2**30


def test_ask_without_seed_prints_the_seed_it_drew():
    result = run("ask", "fx-concurrent", "--bank", GOOD)
    assert result.exit_code == 0
    seed = int(re.match(r"fx-concurrent · seed (\d+) · kv-cache\n", result.stdout).group(1))
    again = run("ask", "fx-concurrent", "--seed", str(seed), "--bank", GOOD)
    assert again.stdout == result.stdout


def test_ask_choice_and_order_json():
    choice = ask_json("fx-which-heads", 3)
    assert sorted(choice["options"]) == ["KV heads", "attention heads plus KV heads", "query heads"]
    assert [choice["options"][i] for i in choice["correct"]] == ["KV heads"]
    assert choice["expected"] is None and choice["unit"] is None
    order = ask_json("fx-request-path", 3)
    assert [order["items"][i] for i in order["correct_order"]] == [
        "tokenize",
        "prefill",
        "decode",
        "detokenize",
    ]


def test_unknown_id_is_one_line_with_suggestions():
    result = run("ask", "fx-kv-requst", "--bank", GOOD)
    assert result.exit_code == 1
    # the closest ids come first; the built-in deck may add more after them
    assert result.output.startswith(
        "Error: unknown question id 'fx-kv-requst'; did you mean fx-kv-request, "
    )
    assert result.output.count("\n") == 1
    result = run("check", "nothing-like-it", "--seed", "1", "--answer", "1", "--bank", GOOD)
    assert result.exit_code == 1
    assert result.output == (
        "Error: unknown question id 'nothing-like-it'; `kvdrill bank list` shows them all\n"
    )


def test_check_right_answers_in_several_forms():
    for answer in ("0.5 GiB", "536,870,912", "2*32*8*128*4096*2", "512 MiB", "536870912 bytes"):
        code, data = check_json("fx-kv-request", 11, answer)
        assert code == 0
        assert data["correct"] is True, answer
        assert data["status"] == "correct"
        assert data["value"] == 536870912
        assert data["expected"] == 536870912
        assert data["unit"] == "bytes"
        assert data["misconception"] is None
        assert data["rating"] == 3


def test_check_names_the_misconception():
    code, data = check_json("fx-kv-request", 11, "256 MiB")
    assert code == 0
    assert data["correct"] is False
    assert data["status"] == "misconception"
    assert data["misconception"] == "forgot-kv-factor"
    assert data["value"] == 268435456
    assert data["rating"] == 1


def test_check_uses_the_question_override_feedback():
    code, data = check_json("fx-kv-request", 11, "576,460,752")
    assert data["misconception"] == "gb-vs-gib"
    assert "That is 0.576 GB read as GiB; the answer is 0.5 GiB." in data["feedback"]


def test_check_unreadable_answer():
    code, data = check_json("fx-kv-request", 11, "lots")
    assert code == 1
    assert data["status"] == "unreadable"
    assert data["correct"] is False
    assert data["value"] is None
    result = run("check", "fx-kv-request", "--seed", "11", "--answer", "lots", "--bank", GOOD)
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot read 'lots'")
    assert result.output.count("\n") == 1


def test_check_text_output_for_a_wrong_answer():
    result = run("check", "fx-kv-request", "--seed", "11", "--answer", "256 MiB", "--bank", GOOD)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        "Wrong. Answer: 0.5 GiB (536,870,912 bytes).",
        "Mistake: forgot the K+V factor of 2.",
    ]
    assert lines[-3:] == [
        "Solution:",
        "  Per token: 2 × 32 × 8 × 128 × 2 = 131,072 bytes.",
        "  Per request: 131,072 × 4,096 = 536,870,912 bytes = 0.5 GiB.",
    ]


def test_check_choice_by_displayed_number():
    shown = ask_json("fx-which-heads", 5)
    right = shown["correct"][0] + 1
    wrong = 1 if right != 1 else 2
    assert check_json("fx-which-heads", 5, str(right))[1]["correct"] is True
    assert check_json("fx-which-heads", 5, str(wrong))[1]["correct"] is False


def test_check_concept_is_self_rated():
    code, data = check_json("fx-why-cache", 0, "it avoids recomputing K and V")
    assert code == 0
    assert data["correct"] is None
    assert data["status"] == "self"
    assert data["covered"] == [True]


def test_a_concept_question_is_checked_without_a_seed_and_others_ask_for_one():
    result = run("check", "fx-why-cache", "--answer", "it avoids recomputing K and V", "--json",
                 "--bank", GOOD)  # fmt: skip
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert (data["seed"], data["status"], data["covered"]) == (0, "self", [True])
    numeric = run("check", "fx-kv-request", "--answer", "0.5 GiB", "--bank", GOOD)
    assert numeric.exit_code == 2
    assert numeric.output.splitlines()[-1] == (
        "Error: fx-kv-request is a numeric question and draws its numbers from the seed: "
        "give the --seed that `kvdrill ask fx-kv-request` printed (see `cli check -h`)."
    )
    choice = run("check", "fx-which-heads", "--answer", "1", "--bank", GOOD)
    assert (choice.exit_code, choice.output.splitlines()[-1]) == (2, (
        "Error: fx-which-heads is a choice question and shuffles what it shows from the seed: "
        "give the --seed that `kvdrill ask fx-which-heads` printed (see `cli check -h`)."
    ))  # fmt: skip


def test_bank_from_environment(monkeypatch):
    result = run("ask", "fx-kv-request", "--seed", "1", "--json", env={"KVDRILL_BANK": GOOD})
    assert result.exit_code == 0
    assert json.loads(result.stdout)["expected"] == 536870912


def test_broken_extra_bank_is_one_line(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("deck: broken\nquestions:\n  - id: [\n", encoding="utf-8")
    result = run("ask", "fx-kv-request", "--bank", str(broken))
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {broken}:3: YAML syntax error: ")
    assert result.output.count("\n") == 1


def test_bank_list_json_and_topic_filter():
    result = run("bank", "list", "--json", "--bank", GOOD)
    assert result.exit_code == 0
    rows = [r for r in json.loads(result.stdout) if r["id"].startswith("fx-")]
    assert [r["id"] for r in rows] == [
        "fx-concurrent",
        "fx-why-cache",
        "fx-which-heads",
        "fx-request-path",
        "fx-kv-request",
    ]
    assert rows[-1] == {
        "id": "fx-kv-request",
        "kind": "numeric",
        "topic": "kv-cache",
        "difficulty": 1,
        "tags": ["kv-formula"],
        "deck": "fixture-worked",
        "file": str(BANKS / "good" / "worked_example.yaml").removeprefix(f"{Path.cwd()}/"),
        "line": 4,
    }
    serving = json.loads(run("bank", "list", "--json", "--topic", "serving", "--bank", GOOD).stdout)
    assert "fx-request-path" in [r["id"] for r in serving]
    assert {r["topic"] for r in serving} == {"serving"}


def test_bank_list_unknown_topic():
    result = run("bank", "list", "--topic", "astrology")
    assert result.exit_code == 1
    assert result.output.startswith("Error: no questions with topic 'astrology' (topics: ")


def test_bank_list_table():
    result = run("bank", "list", "--bank", GOOD, "--topic", "decode")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["id", "kind", "topic", "diff", "tags"]
    assert any(line.split()[:4] == ["fx-why-cache", "concept", "decode", "2"] for line in lines)


def test_bank_schema_is_json_schema_of_a_deck():
    result = run("bank", "schema")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["title"] == "kvdrill deck file"
    assert schema["required"] == ["deck", "questions"]
    assert schema["additionalProperties"] is False
    assert set(schema["$defs"]) >= {"NumericQuestion", "ConceptQuestion", "RangeParam", "GpuParam"}

