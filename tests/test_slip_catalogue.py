"""Every slip of the built-in deck that the catalogue of mistakes has a name for is named by
its template (drill.kinds.numeric_coverage: a factor whose role has a mistake of its own, or
the K-and-V 2 of a KV-size product, left out)."""

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
