"""Chapter 09: the beam tree is what il.beam_search did, and the length penalty its closed form."""
import json

import numpy as np
import pytest

import illustrated as il
from illustrated.book import ch09, kit


@pytest.fixture(scope="module")
def fr_en():
    return il.pretrained("fr-en")


def test_the_tree_holds_every_candidate_and_the_returned_translations(fr_en):
    model, src_vocab, tgt_vocab = fr_en
    nodes, results = ch09.beam_tree(model, "je suis étudiant", src_vocab, tgt_vocab,
                                    beam_size=2, top_beams=2)
    expected = il.beam_search(model, src_vocab.encode("je suis étudiant"), bos_id=tgt_vocab.bos_id,
                              eos_id=tgt_vocab.eos_id, beam_size=2, top_beams=2,
                              max_len=model.cfg.max_len - 1)
    assert results == [(tgt_vocab.decode(ids), score) for ids, score in expected]
    assert results[0][0] == "i am a student"
    assert [n.words for n in nodes if n.returned] == sorted(
        (n.words for n in nodes if n.returned), key=lambda w: len(w.split()))
    for node in nodes[1:]:
        assert nodes[node.parent].step == node.step - 1
        assert node.words.split()[:-1] == nodes[node.parent].words.split()
    for step in range(1, max(n.step for n in nodes) + 1):
        kept = [n for n in nodes if n.step == step and n.status == "kept"]
        assert len(kept) <= 2  # beam_size
        assert len([n for n in nodes if n.step == step]) <= 4  # 2 x beam_size candidates


def test_a_beam_of_one_is_greedy_decoding(fr_en):
    model, src_vocab, tgt_vocab = fr_en
    for source in ("je suis étudiant", "nous avons la voiture rouge"):
        nodes, results = ch09.beam_tree(model, source, src_vocab, tgt_vocab, beam_size=1,
                                        top_beams=1)
        greedy = il.greedy_decode(model, src_vocab.encode(source), bos_id=tgt_vocab.bos_id,
                                  eos_id=tgt_vocab.eos_id)
        assert results[0][0] == tgt_vocab.decode(greedy)
        last = max(n.step for n in nodes)  # where <eos> finished, one hypothesis stays alive
        assert all(results[0][0].startswith(n.words) for n in nodes
                   if n.status == "kept" and n.step < last)


def test_the_step_table_ranks_candidates_best_first(fr_en):
    nodes, _ = ch09.beam_tree(*fr_en[:1], "je suis étudiant", *fr_en[1:])
    head, *lines = ch09.step_table(nodes, 1).splitlines()
    scores = [float(line.split()[-2]) for line in lines]
    assert head.split() == ["step", "1", "log", "p", "fate"]
    assert scores == sorted(scores, reverse=True) and lines[0].split()[0] == "i"
    assert max(map(len, [head, *lines])) <= kit.PHONE_TEXT_CHARS


def test_the_decoders_table_has_a_row_per_decoder_and_fits_a_phone(fr_en):
    model, src_vocab, tgt_vocab = fr_en
    pairs, _, _ = il.data.load_corpus("fr-en", "test")
    head, *rows = ch09.compare_decoders(model, pairs[:3], src_vocab, tgt_vocab).splitlines()
    assert head.split()[:2] == ["decoder", "exact"]
    assert [row.split()[0] for row in rows] == ["greedy", "beam", "beam", "beam"]
    assert [row.split()[2] for row in rows[1:]] == ["100.0%"] * 3  # the shipped model: all right
    assert max(map(len, [head, *rows])) <= kit.PHONE_TEXT_CHARS


def test_length_penalty_is_the_gnmt_formula():
    table = ch09.penalties([1, 4, 10], [0.0, 0.6, 1.0])
    np.testing.assert_allclose(table[0], 1.0)
    np.testing.assert_allclose(table[1], [(6 / 6) ** 0.6, (9 / 6) ** 0.6, (15 / 6) ** 0.6])
    np.testing.assert_allclose(table[2], [1.0, 1.5, 2.5])


def test_the_shipped_model_needs_no_beam(fr_en):
    test_pairs, _, _ = il.data.load_corpus("fr-en", "test")
    assert ch09.beam_fixes(*fr_en[:1], test_pairs[:10], *fr_en[1:]) == []


def test_the_widget_is_live_in_the_page_with_the_tree_as_its_default(fr_en):
    page = ch09.beam_widget(*fr_en).html()
    assert 'data-il-widget="beam"' in page and 'class="il-live-default"' in page
    assert "&quot;beamSize&quot;: 2" in page


@pytest.mark.parametrize("beam_size", [2, 4])
def test_the_tree_is_legible(fr_en, legible, width, beam_size):
    nodes, _ = ch09.beam_tree(*fr_en[:1], "je suis étudiant", *fr_en[1:], beam_size=beam_size,
                              top_beams=2)
    fig = ch09.draw_tree(nodes, f"beam_size {beam_size}", width=width)
    boxes = {t.get_text(): t.get_position() for t in fig.axes[0].texts}
    first, second = boxes["i\n-0.002"], boxes["am\n-0.008"]  # step 1, then step 2
    turned = kit.narrow(width) and beam_size == 2  # a phone's column: steps top to bottom
    assert (second[1] > first[1] and first[0] == second[0]) if turned else second[0] > first[0]
    legible(fig, width)


def test_scores_print_the_digits_they_need():
    assert [ch09.score_text(v) for v in (-0.00218, -0.0298, -7.104, 0.0, -0.000012)] == \
        ["-0.002", "-0.03", "-7.10", "0.00", "-0.00001"]


def test_the_cache_figure_counts_what_decoding_computes(fr_en, legible, width):
    model, src_vocab, tgt_vocab = fr_en
    work = ch09.cache_work(model, "je suis étudiant", src_vocab, tgt_vocab)
    assert work["words"] == ["<bos>", "i", "am", "a", "student"]
    assert work[False]["computed"] == [list(range(t)) for t in range(1, 6)]
    assert work[True]["computed"] == [[t] for t in range(5)]
    assert work[False]["source"] == [3] * 5 and work[True]["source"] == [3]
    fig = ch09.draw_cache_work(work, width=width)
    titles = [ax.get_title() for ax in fig.axes]
    assert "15 positions'" in titles[0] and "5 positions'" in titles[1]
    legible(fig, width)


def test_the_measured_times_are_the_benchmarks(tmp_path):
    path = tmp_path / "decoding.json"
    rows = {f"{m}_{n}": {"tokens": n, "ms_cached": n, "ms_uncached": 3 * n}
            for m in ("greedy", "beam_4") for n in (10, 200)}
    path.write_text(json.dumps({"cache": {"shipped": rows}}))
    lines = ch09.measured_times(path).splitlines()
    assert lines[1].split() == ["10", "greedy", "30", "ms", "10", "ms"]
    assert lines[2].split() == ["10", "beam", "4", "30", "ms", "10", "ms"]
    assert lines[3].split()[:4] == ["200", "greedy", "600", "ms"]
    assert max(map(len, lines)) <= kit.PHONE_TEXT_CHARS  # the note too, wrapped
    assert "not in this installation" in ch09.measured_times(tmp_path / "absent.json")
