"""Each corpus's default model (the one `python -m illustrated train` and the chapters use) reaches
its target on the unseen test split. Uses il.pretrained, so the models trained here are the ones
the chapters then load from the cache."""
import pytest

import illustrated as il

TARGETS = {  # corpus: (metric, at least), the targets of the package issue
    "copy": ("exact_match", 1.0),
    "reverse": ("exact_match", 1.0),
    "fr-en": ("exact_match", 0.95),
    "coreference": ("pronoun_accuracy", 0.95),
}


@pytest.mark.parametrize("corpus", list(TARGETS))
def test_default_model_reaches_its_target(corpus):
    model, src_vocab, tgt_vocab = il.pretrained(corpus)
    metric, target = TARGETS[corpus]
    assert il.evaluate(model, corpus, src_vocab, tgt_vocab)[metric] >= target
