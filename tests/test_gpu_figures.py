"""GPU figures come from one table (drill/serving/gpus.py) and read the same everywhere:
its figures checked against the vendors' datasheets, `{gpu.KEY.FIELD}` written out in
every kind of question, and `kvdrill bank lint` refusing a figure written by hand."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from drill.bank.loader import builtin_bank_files, read_bank
from drill.cli import cli
from drill.errors import BankError
from drill.kinds import make_instance
from drill.serving.gpus import fill_gpu_figures, gpu_named


@pytest.mark.parametrize(
    ("key", "memory_gib", "tb_per_s", "tflops"),
    [
        # NVIDIA datasheets: H200 141 GB HBM3e, 4.8 TB/s, 1,979 TFLOPS BF16 with sparsity
        ("h200", 141, 4.8, 989.0),
        # H100 SXM: 80 GB HBM3, 3.35 TB/s, 1,979 with sparsity
        ("h100", 80, 3.35, 989.0),
        # A100 80GB SXM: 2,039 GB/s, 312 TFLOPS BF16 dense
        ("a100-80gb", 80, 2.039, 312.0),
        # A100 80GB PCIe: 1,935 GB/s
        ("a100-80gb-pcie", 80, 1.935, 312.0),
        # L40S: 48 GB GDDR6, 864 GB/s, 362.05 TFLOPS BF16 dense (733 with sparsity)
        ("l40s", 48, 0.864, 362.0),
    ],
)
def test_the_table_holds_the_datasheet_figures(key, memory_gib, tb_per_s, tflops):
    spec = gpu_named(key)
    assert (spec.memory_gib, spec.hbm_tb_per_s, spec.bf16_dense_tflops) == (
        memory_gib, tb_per_s, tflops,
    )  # fmt: skip


def test_every_text_writes_a_figure_one_way():
    assert fill_gpu_figures("{gpu.h200.name}: {gpu.h200.memory}, {gpu.h200.bandwidth}") == (
        "H200: 141 GiB, 4.8 TB/s"
    )
    assert fill_gpu_figures("{gpu.a100-80gb.bandwidth} and {gpu.a100-80gb.flops}") == (
        "2.039 TB/s and 312 TFLOP/s"
    )
    assert fill_gpu_figures("{gpu.rtx-4090.flops}; {x} and {{y}} stay") == (
        "165.2 TFLOP/s; {x} and {{y}} stay"
    )
    with pytest.raises(BankError, match=r"unknown GPU placeholder \{gpu\.h10\.memory\}"):
        fill_gpu_figures("{gpu.h10.memory}")
    with pytest.raises(BankError, match="FIELD is one of name, memory, bandwidth, flops"):
        fill_gpu_figures("{gpu.h100.hbm}")


def test_a_concept_answer_and_a_numeric_explanation_show_the_tables_figures():
    bank, problems = read_bank(builtin_bank_files())
    assert problems == []
    concept = make_instance(bank.get("ridge-point-meaning"), 1)
    assert "For an H100 SXM that is 989 TFLOP/s / 3.35 TB/s ≈ 300 FLOP/B." in " ".join(
        (concept.answer_text or "").split()
    )
    numeric = make_instance(bank.get("ridge-point-flop-per-byte"), 1)
    assert "an A100 80GB SXM (312 TFLOP/s, 2.039 TB/s) near 153" in " ".join(
        (numeric.explanation or "").split()
    )


def test_the_ridge_point_of_an_a100_is_worked_from_the_tables_figures():
    # seed 1 draws the A100 80GB SXM: 312e12 / 2.039e12 = 153.016 FLOP/B (not 312 / 2.0 = 156)
    bank, _ = read_bank(builtin_bank_files())
    numeric = make_instance(bank.get("ridge-point-flop-per-byte"), 1)
    assert numeric.params["g"] == "A100 80GB SXM"
    assert numeric.expected == pytest.approx(153.01618440411966, rel=1e-12)
    assert numeric.solution == (
        "Ridge point = peak FLOP/s ÷ bandwidth = 312 TFLOP/s / 2.039 TB/s = 153 FLOP/B.",
    )
    assert numeric.text.startswith(
        "An A100 80GB SXM peaks at 312 TFLOP/s of dense BF16 and 2.039 TB/s"
    )


def test_a_gpu_param_shows_its_figures_as_the_table_writes_them():
    bank, _ = read_bank(builtin_bank_files())
    question = bank.get("decode-tpot-tp-preset")
    texts = {make_instance(question, seed).params["g"]: make_instance(question, seed).text
             for seed in range(40)}  # fmt: skip
    assert "of its 2.039 TB/s spec-sheet bandwidth" in " ".join(texts["A100 80GB SXM"].split())
    assert "of its 3.35 TB/s spec-sheet bandwidth" in " ".join(texts["H100 SXM"].split())


BANK = """\
deck: gpus
questions:
  - id: fx-gpu-by-hand
    kind: concept
    topic: roofline
    prompt: Why is decode slow?
    answer: >-
      An H100 reads 3.35 TB/s, so a step that reads 16 GB takes about 5 ms.
    hint: Bytes over bandwidth.
    key_points:
      - {point: bytes over bandwidth, cues: [bandwidth]}
  - id: fx-gpu-bare-figures
    kind: choice
    topic: roofline
    prompt: Which ridge?
    hint: Divide.
    options:
      - {text: "An A100 80GB (312, 2.0) sits near 156.", correct: true}
      - {text: Near 1.}
  - id: fx-gpu-from-the-table
    kind: concept
    topic: roofline
    prompt: Why is decode slow?
    answer: >-
      An {gpu.h100.name} reads {gpu.h100.bandwidth}; 80 GB GPUs are common.
    hint: Bytes over bandwidth.
    key_points:
      - {point: bytes over bandwidth, cues: [bandwidth]}
  - id: fx-gpu-unknown
    kind: concept
    topic: roofline
    prompt: Which is faster?
    answer: The {gpu.h10.bandwidth} one.
    hint: Bandwidth.
    key_points:
      - {point: bandwidth, cues: [bandwidth]}
  - id: fx-gpu-param-unit
    kind: numeric
    topic: roofline
    prompt: >-
      A {g} GPU reads {gb} GB at its {g_bandwidth:TB/s}. How long does that take?
    params:
      g: {gpu: [h100, h200]}
      gb: {choices: [10, 20]}
    answer: gb * 10**9 / g_bandwidth
    unit: seconds
    show_as: ms
    solution:
      - "{gb} GB / {g.bandwidth} = {answer:ms}."
"""


def test_lint_refuses_a_gpu_figure_written_by_hand(tmp_path):
    path = tmp_path / "gpus.yaml"
    path.write_text(BANK, encoding="utf-8")
    result = CliRunner().invoke(cli, ["bank", "lint", str(path), "--draws", "5"])
    assert result.exit_code == 1
    take = "take it from the GPU table: {gpu.KEY.FIELD}, or a gpu param's {g.FIELD}"
    assert result.stdout.splitlines() == [
        f"{path}:7: fx-gpu-by-hand: answer: states a GPU figure by hand (H100 … 3.35 TB/s); "
        + take,
        f"{path}:18: fx-gpu-bare-figures: options[0].text: states a GPU figure by hand "
        "(A100 … 80GB); " + take,
        f"{path}:33: fx-gpu-unknown: answer: unknown GPU placeholder {{gpu.h10.bandwidth}}: "
        "write {gpu.KEY.FIELD} with KEY one of h200-nvl, h200, gh200, h100-nvl, h100-pcie, "
        "h100, a100-80gb-pcie, a100-80gb, a100-40gb, l40s, l4, a10g, a10, rtx-4090, rtx-3090",
        f"{path}:40: fx-gpu-param-unit: prompt: shows {{g_bandwidth}}; write {{g.bandwidth}}, "
        "so that every text shows a GPU's figure the same way",
    ]
