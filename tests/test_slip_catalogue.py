"""Every slip of the built-in deck that the catalogue of mistakes has a name for is named by
its template (drill.kinds.numeric_coverage: a factor whose role has a mistake of its own
left out, the K-and-V 2 of a KV-size product, a 2 beside a parameter count, a decimal size
read with the binary prefix)."""

from __future__ import annotations

from drill.bank.loader import load_default_bank
from drill.bank.schema import NumericQuestion
from drill.kinds.numeric_coverage import template_coverage
from drill.serving.kvmath import load_presets

# (template, slip): left unnamed on purpose, with the reason
LEFT = {
    # layers / period with the layers left out is a fraction of one layer, which nobody
    # writes; the template's forgot-layers names the cache of one attention layer
    ("hybrid-attention-kv", "drop factor layers"),
    # where reading the weights takes longer than the FLOPs, the step is the weights' read
    # time and one FLOP a parameter changes nothing: a name would be the right answer there
    ("tree-verify-step-floor", "drop factor 2 in compute_s"),
    # the floor absorbs the 7 % on some draws (53 requests either way), so a named mistake
    # would be the right answer there
    ("bug-tp-pool-once-fix", "read weights_gb as GiB"),
}


def test_every_slip_the_catalogue_names_is_named_in_the_deck():
    presets = load_presets()
    found = set()
    for question in load_default_bank():
        if not isinstance(question, NumericQuestion):
            continue
        for item in template_coverage(question, 40, presets) or []:
            if item.unnamed and item.catalogue:
                found.add((question.id, item.slip))
    assert found == LEFT
