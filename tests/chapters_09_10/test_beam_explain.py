"""Chapter 09's numbers: the beam tree agrees with beam_search, the searches agree with the package."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.explain import beam as B

SENTENCES = ["je suis étudiant", "nous avons la voiture rouge", "tu es jeune"]


def _log_softmax_next(model, src_ids, prefix, tgt_vocab):
    """The model's next-word log-probabilities after <bos> + prefix, <bos>/<pad> excluded after."""
    src = torch.tensor([src_ids])
    tgt = torch.tensor([[tgt_vocab.bos_id, *prefix]])
    with torch.no_grad():
        lp = model(src, tgt).log_softmax(-1)[0, -1].double()
    lp[[tgt_vocab.bos_id, tgt_vocab.pad_id]] = -math.inf
    return lp


@pytest.mark.parametrize("sentence", SENTENCES)
@pytest.mark.parametrize("beam_size,top_beams,alpha", [(2, 2, 0.0), (3, 1, 0.0), (4, 3, 0.6),
                                                       (1, 1, 0.0)])
def test_returned_hypotheses_are_finished_nodes_with_beam_search_scores(
        fr_en_untrained, sentence, beam_size, top_beams, alpha):
    model, src_vocab, tgt_vocab, _ = fr_en_untrained
    tree = B.beam_tree(model, sentence, src_vocab, tgt_vocab, beam_size=beam_size,
                       top_beams=top_beams, alpha=alpha, max_len=6)
    expected = il.beam_search(model, src_vocab.encode(sentence), bos_id=tgt_vocab.bos_id,
                              eos_id=tgt_vocab.eos_id, beam_size=beam_size, top_beams=top_beams,
                              alpha=alpha, max_len=6)
    assert tree.results == expected
    returned = [n for n in tree.nodes if n.returned]
    assert len(returned) == len(expected) == top_beams
    by_ids = {n.token_ids: n for n in returned}
    for ids, score in expected:
        node = by_ids[tuple(ids)]
        assert node.status == "finished"
        assert node.score == pytest.approx(score, rel=1e-12, abs=1e-12)
        assert node.step == len(ids)
        assert node.log_prob == pytest.approx(score * il.length_penalty(len(ids), alpha), rel=1e-9)
    assert tree.translations == [tgt_vocab.decode(ids) for ids, _ in expected]


def test_tree_structure_matches_the_beam_steps(fr_en_untrained):
    model, src_vocab, tgt_vocab, _ = fr_en_untrained
    ids = src_vocab.encode("je suis étudiant")
    tree = B.beam_tree(model, "je suis étudiant", src_vocab, tgt_vocab, beam_size=3, top_beams=2,
                       max_len=5)
    _, steps = il.beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                              beam_size=3, top_beams=2, max_len=5, return_steps=True)
    assert tree.n_steps == len(steps)
    root = tree.nodes[0]
    assert (root.parent, root.step, root.status, root.token) == (-1, 0, "start", "<bos>")
    for record in steps:
        nodes = [n for n in tree.nodes if n.step == record.step]
        assert [n.token_ids for n in nodes] == [h for h, _ in record.candidates]
        assert [n.log_prob for n in nodes] == [s for _, s in record.candidates]
        kept = [n.token_ids for n in nodes if n.status == "kept"]
        if record.step < 5:  # at max_len the kept ones are returned as they are
            assert kept == record.kept
        for n in nodes:
            parent = tree.nodes[n.parent]
            assert parent.token_ids == n.token_ids[:-1]
            assert parent.status in ("start", "kept")
            assert n.token == tgt_vocab.tokens[n.token_ids[-1]]


def test_node_log_probs_are_sums_of_the_models_log_probs(fr_en_untrained):
    model, src_vocab, tgt_vocab, _ = fr_en_untrained
    ids = src_vocab.encode("tu es jeune")
    tree = B.beam_tree(model, "tu es jeune", src_vocab, tgt_vocab, beam_size=2, top_beams=1,
                       max_len=4)
    for node in tree.nodes[1:]:
        parent = tree.nodes[node.parent]
        lp = _log_softmax_next(model, ids, list(parent.token_ids), tgt_vocab)
        assert node.log_prob == pytest.approx(parent.log_prob + float(lp[node.token_ids[-1]]),
                                              abs=1e-4)


def test_beam_of_one_is_greedy(fr_en_untrained):
    model, src_vocab, tgt_vocab, _ = fr_en_untrained
    for sentence in SENTENCES:
        tree = B.beam_tree(model, sentence, src_vocab, tgt_vocab, beam_size=1, top_beams=1,
                           max_len=6)
        greedy = il.greedy_decode(model, src_vocab.encode(sentence), bos_id=tgt_vocab.bos_id,
                                  eos_id=tgt_vocab.eos_id, max_len=6)
        assert tree.results[0][0] == greedy


def test_tree_arrays_and_step_table(fr_en_untrained):
    model, src_vocab, tgt_vocab, _ = fr_en_untrained
    tree = B.beam_tree(model, "je suis étudiant", src_vocab, tgt_vocab, max_len=4)
    arrays = B.tree_arrays(tree)
    assert set(arrays) == {"parents", "steps", "labels", "log_probs", "statuses", "returned",
                           "hypotheses"}
    assert all(len(v) == len(tree.nodes) for v in arrays.values())
    rows = B.step_table(tree, 2)
    nodes = [n for n in tree.nodes if n.step == 2]
    assert [r[1] for r in rows] == [n.log_prob for n in nodes]
    assert [r[0].split() for r in rows] == [[tgt_vocab.tokens[i] for i in n.token_ids]
                                            for n in nodes]
    text = B.format_step_table(tree, 2)
    assert text.splitlines()[0] == "step 2" and len(text.splitlines()) == 2 + len(rows)
    with pytest.raises(ValueError, match="step"):
        B.step_table(tree, 0)
    with pytest.raises(ValueError, match="tree"):
        B.tree_arrays("not a tree")


def test_find_beam_fixes_finds_the_planted_cases(fr_en_untrained):
    model, src_vocab, tgt_vocab, pairs = fr_en_untrained
    sources = [s for s, _ in pairs[:6]]
    planted, kept_greedy = [], []
    for s in sources:
        ids = src_vocab.encode(s)
        greedy = il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                                  max_len=4)
        beam = il.beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                              beam_size=2, max_len=4)[0][0]
        if tgt_vocab.decode(beam) != tgt_vocab.decode(greedy):
            planted.append((s, tgt_vocab.decode(beam)))
        else:
            kept_greedy.append((s, tgt_vocab.decode(greedy)))
    assert planted, "the untrained model should disagree with itself somewhere"
    fixes, n_wrong = B.find_beam_fixes(model, planted + kept_greedy, src_vocab, tgt_vocab,
                                       beam_sizes=(2,), max_len=4)
    assert n_wrong == len(planted)
    assert [(f.source, f.beam) for f in fixes] == planted
    for f in fixes:
        assert f.beam_size == 2 and f.greedy != f.beam
        assert f.beam_log_prob >= f.greedy_log_prob  # the beam keeps the more probable one
    with pytest.raises(ValueError, match="beam_sizes"):
        B.find_beam_fixes(model, planted, src_vocab, tgt_vocab, beam_sizes=(0,))
    with pytest.raises(ValueError, match="pairs"):
        B.find_beam_fixes(model, [], src_vocab, tgt_vocab)


def test_greedy_margins_are_the_gap_between_the_two_best_words(fr_en_untrained):
    model, src_vocab, tgt_vocab, pairs = fr_en_untrained
    rows = B.greedy_margins(model, pairs[:3], src_vocab, tgt_vocab, max_len=4)
    assert len(rows) == 3
    assert [r.margin for r in rows] == sorted(r.margin for r in rows)
    for r in rows:
        ids = src_vocab.encode(r.source)
        out = il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                               max_len=4)
        assert r.greedy == tgt_vocab.decode(out)
        lp = _log_softmax_next(model, ids, out[:r.step - 1], tgt_vocab)
        top = torch.topk(lp, 2)
        assert r.chosen == tgt_vocab.tokens[out[r.step - 1]] == tgt_vocab.tokens[int(top.indices[0])]
        assert r.runner_up == tgt_vocab.tokens[int(top.indices[1])]
        assert r.margin == pytest.approx(float(top.values[0] - top.values[1]), abs=1e-4)
        assert r.margin >= 0


def test_compare_decoders_counts_exact_matches(fr_en_untrained):
    model, src_vocab, tgt_vocab, pairs = fr_en_untrained
    sources = [s for s, _ in pairs[:4]]
    targets = [tgt_vocab.decode(il.greedy_decode(model, src_vocab.encode(s), bos_id=tgt_vocab.bos_id,
                                                 eos_id=tgt_vocab.eos_id, max_len=4))
               for s in sources]
    rows = B.compare_decoders(model, list(zip(sources, targets)), src_vocab, tgt_vocab,
                              beam_sizes=(1, 2), max_len=4)
    assert [r.name for r in rows] == ["greedy", "beam 2"]
    assert rows[0].exact_match == 1.0
    beam = [tgt_vocab.decode(il.beam_search(model, src_vocab.encode(s), bos_id=tgt_vocab.bos_id,
                                            eos_id=tgt_vocab.eos_id, beam_size=2,
                                            max_len=4)[0][0]) for s in sources]
    assert rows[1].exact_match == sum(b == t for b, t in zip(beam, targets)) / len(sources)
    assert all(r.seconds_per_sentence > 0 for r in rows)
    table = B.format_decoder_table(rows, n_sentences=4)
    assert "greedy" in table and "beam 2" in table and "100.0%" in table


def test_alpha_sweep_divides_by_the_gnmt_penalty(fr_en_untrained):
    model, src_vocab, tgt_vocab, _ = fr_en_untrained
    sweep = B.alpha_sweep(model, "je suis étudiant", src_vocab, tgt_vocab, alphas=[0.0, 0.6, 1.2],
                          beam_size=3, top_beams=3, max_len=5)
    assert sweep.scores.shape == (3, len(sweep.hypotheses))
    for a, alpha in enumerate(sweep.alphas):
        for h in range(len(sweep.hypotheses)):
            if not np.isnan(sweep.scores[a, h]):
                assert sweep.scores[a, h] == pytest.approx(
                    sweep.log_probs[h] / ((5 + sweep.lengths[h]) / 6) ** alpha, rel=1e-9)
        assert sweep.best[a] == np.nanargmax(sweep.scores[a])
        assert np.sum(~np.isnan(sweep.scores[a])) == 3
    with pytest.raises(ValueError, match="alphas"):
        B.alpha_sweep(model, "je suis étudiant", src_vocab, tgt_vocab, alphas=[-1.0])


def test_penalty_curves_closed_form():
    table = B.penalty_curves([1, 5, 10], [0.0, 0.6, 1.0])
    np.testing.assert_allclose(table[0], 1.0)
    np.testing.assert_allclose(table[2], [1.0, 10 / 6, 15 / 6])
    np.testing.assert_allclose(table[1, 1], (10 / 6) ** 0.6)
    with pytest.raises(ValueError, match="lengths"):
        B.penalty_curves([0], [0.6])
    with pytest.raises(ValueError, match="alphas"):
        B.penalty_curves([1], [-0.1])


def test_bad_inputs_name_the_argument(fr_en_untrained):
    model, src_vocab, tgt_vocab, _ = fr_en_untrained
    with pytest.raises(ValueError, match="sentence"):
        B.beam_tree(model, "  ", src_vocab, tgt_vocab)
    with pytest.raises(ValueError, match="model"):
        B.beam_tree("model", "je suis", src_vocab, tgt_vocab)
    with pytest.raises(ValueError, match="tgt_vocab"):
        B.beam_tree(model, "je suis", src_vocab, src_vocab)
    with pytest.raises(ValueError, match="top_beams"):
        B.beam_tree(model, "je suis", src_vocab, tgt_vocab, beam_size=2, top_beams=3)


def test_find_alpha_flips_reranks_the_returned_hypotheses(fr_en_untrained):
    model, src_vocab, tgt_vocab, pairs = fr_en_untrained
    model = copy.deepcopy(model)
    with torch.no_grad():  # make <eos> likely, so that hypotheses of several lengths finish
        model.generator.proj.bias[tgt_vocab.eos_id] += 2.0
    sources = pairs[:5]
    flips = B.find_alpha_flips(model, sources, src_vocab, tgt_vocab, alpha=4.0, beam_size=3,
                               max_len=5)
    expected = []
    for source, _ in sources:
        results = il.beam_search(model, src_vocab.encode(source), bos_id=tgt_vocab.bos_id,
                                 eos_id=tgt_vocab.eos_id, beam_size=3, top_beams=3, max_len=5)
        plain = max(results, key=lambda r: r[1])
        penalised = max(results, key=lambda r: r[1] / il.length_penalty(len(r[0]), 4.0))
        if plain[0] != penalised[0]:
            expected.append((source, " ".join(tgt_vocab.tokens[i] for i in penalised[0])))
    assert expected, "the test needs at least one sentence whose winner changes"
    assert [(f.source, f.with_penalty) for f in flips] == expected
    assert all(len(f.with_penalty.split()) > len(f.without.split()) for f in flips)
    with pytest.raises(ValueError, match="alpha"):
        B.find_alpha_flips(model, sources, src_vocab, tgt_vocab, alpha=0.0)
