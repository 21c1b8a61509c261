"""Chapter 07: decoding step by step, the causal mask and its leak test, the final softmax."""
import copy

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.book import ch07, kit
from illustrated.book import interactive as ia
from illustrated.pretrained_models import make_config

SENTENCE, TARGET = "je suis étudiant", "i am a student"


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def fr_en():
    return il.pretrained("fr-en")


@pytest.fixture(scope="module")
def untrained():
    _, src_vocab, tgt_vocab = il.data.load_corpus("fr-en")
    il.set_seed(1)
    return il.modules.Transformer(make_config("fr-en", src_vocab, tgt_vocab)).eval(), \
        src_vocab, tgt_vocab


@pytest.fixture(scope="module")
def trace(fr_en):
    model, src_vocab, tgt_vocab = fr_en
    return il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)


def test_the_shipped_model_translates_the_post_sentence(trace):
    assert trace.target_tokens == ["i", "am", "a", "student", "<eos>"]


def test_cross_attention_is_the_models_own_weights(fr_en, trace, recorded):
    model, src_vocab, tgt_vocab = fr_en
    src = torch.tensor([src_vocab.encode(SENTENCE)])
    tgt = torch.tensor([trace.decoder_input_ids])
    with torch.no_grad():
        _, attention = recorded(model, model, src, tgt)
    for layer in range(model.cfg.n_layers):
        weights = attention.decoder_cross[layer][0].numpy()  # (n_heads, tgt_len, src_len)
        np.testing.assert_allclose(ch07.cross_attention(trace, layer, None), weights.mean(0),
                                   atol=1e-6)
        for head in range(model.cfg.n_heads):
            np.testing.assert_allclose(ch07.cross_attention(trace, layer, head), weights[head],
                                       atol=1e-6)


def test_each_decoding_step_sees_what_the_whole_trace_sees(fr_en, trace):
    """Step t of greedy decoding, rerun with only its own input, equals row t of the trace."""
    model, src_vocab, tgt_vocab = fr_en
    assert trace.target_ids == il.greedy_decode(model, src_vocab.encode(SENTENCE),
                                                bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
    for step in range(len(trace.target_ids)):
        prefix = trace.target_ids[:step + 1]  # the decoder reads <bos> + prefix[:-1]
        alone = il.trace(model, SENTENCE, prefix, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
        np.testing.assert_allclose(alone.probs[step], trace.probs[step], atol=1e-6)
        np.testing.assert_allclose(ch07.cross_attention(alone, -1, None),
                                   ch07.cross_attention(trace, -1, None)[:step + 1], atol=1e-6)


def test_the_post_sentence_looks_at_the_word_it_translates(trace):
    """The sentence the chapter prints: 'i' looks at 'je', 'am' at 'suis', 'a student' at
    'étudiant' (decoder layer 1, mean of the heads)."""
    looked_at = ch07.cross_attention(trace, -1, None).argmax(axis=1)
    assert [trace.source_tokens[i] for i in looked_at[:4]] == ["je", "suis", "étudiant",
                                                                "étudiant"]


def test_the_leak_test_reads_the_chapters_numbers(fr_en):
    model, src_vocab, tgt_vocab = fr_en
    before, after, masked, unmasked = ch07.leak_test(model, SENTENCE, TARGET, src_vocab,
                                                     tgt_vocab, position=3, new_word="the")
    assert before == ["<bos>", "i", "am", "a", "student"] and after[3] == "the"
    assert masked[:3].max() < 1e-12  # float64: unchanged means unchanged
    np.testing.assert_allclose(masked[3], 0.2119, atol=5e-4)
    np.testing.assert_allclose(unmasked[:4], [0.6183, 0.0015, 0.9101, 0.4323], atol=5e-4)


@pytest.mark.parametrize("position, new_word", [(1, "a"), (2, "is"), (3, "am")])
def test_with_the_mask_earlier_outputs_never_move(fr_en, untrained, position, new_word):
    for model, src_vocab, tgt_vocab in (fr_en, untrained):
        _, after, masked, unmasked = ch07.leak_test(model, SENTENCE, TARGET, src_vocab,
                                                    tgt_vocab, position=position,
                                                    new_word=new_word)
        assert after[position] == new_word
        assert masked[:position].max() < 1e-12
        assert masked[position] > 1e-3  # a real change, not rounding
        assert unmasked[:position].max() > 1e-6  # without the mask the future leaks back


def test_without_mask_copies_the_weights_and_leaves_the_rng(fr_en, recorded):
    model, src_vocab, tgt_vocab = fr_en
    state = torch.get_rng_state()
    twin = ch07.without_mask(model)
    assert torch.equal(state, torch.get_rng_state())
    assert isinstance(twin, ch07.UnmaskedTransformer) and not twin.training
    double = ch07.without_mask(copy.deepcopy(model).double())
    assert next(double.parameters()).dtype == torch.float64
    for (name, a), (other, b) in zip(model.state_dict().items(), twin.state_dict().items()):
        assert name == other and torch.equal(a, b)
    src = torch.tensor([src_vocab.encode(SENTENCE)])
    tgt = torch.tensor([[tgt_vocab.bos_id, *tgt_vocab.encode(TARGET)]])
    with torch.no_grad():
        torch.testing.assert_close(twin(src, tgt[:, :1]), model(src, tgt[:, :1]))  # one position
        _, attention = recorded(twin, twin, src, tgt)
        assert not torch.allclose(twin(src, tgt)[:, :-1], model(src, tgt)[:, :-1])
    above = np.triu_indices(tgt.shape[1], k=1)
    assert (attention.decoder_self[0][0].mean(0).numpy()[above] > 0).all()  # reads ahead


def test_a_model_trained_without_the_mask_cheats():
    """The chapter's claim, as it trains it: the cheater's training loss ends lower, yet it
    decodes none of the test sentences while the real model decodes (almost) all."""
    runs = ch07.train_with_and_without_mask("copy", steps=300, batch_size=64)
    (real, real_score, real_out), (cheat, cheat_score, _) = (runs["with the mask"],
                                                              runs["without the mask"])
    assert real.steps == cheat.steps == 300
    assert cheat.loss[-1] < real.loss[-1]
    assert real_score > 0.9 and cheat_score < 0.1
    assert real_out[0] == runs["test"][0][1]


def test_the_final_layer_is_linear_then_softmax(fr_en):
    model, src_vocab, tgt_vocab = fr_en
    t = il.trace(model, SENTENCE, "i am", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    proj = model.generator.proj
    x = t.decoder_output[1]  # (d_model,)
    out = il.reference.final_linear_softmax(x, proj.weight.detach().double().numpy().T,
                                            proj.bias.detach().double().numpy())
    np.testing.assert_allclose(out.logits, t.logits[1], atol=1e-5)
    assert tgt_vocab.tokens[int(out.probs.argmax())] == "am"
    np.testing.assert_allclose(out.probs.max(), 0.9942, atol=5e-5)  # the chapter's number


def test_draw_step_shows_the_steps_attention_and_choice(trace, fr_en, legible, width):
    tokens = fr_en[2].tokens
    for step in range(len(trace.target_tokens)):
        fig = ch07.draw_step(trace, step, vocab_tokens=tokens, width=width)
        shown = fig.axes[1].images[0].get_array()  # (tgt_len, src_len), later rows masked
        np.testing.assert_allclose(shown[:step + 1],
                                   ch07.cross_attention(trace, -1, None)[:step + 1])
        assert np.ma.getmaskarray(shown)[step + 1:].all()
        texts = [t.get_text() for t in fig.axes[0].texts]
        assert trace.target_tokens[step] in texts
        assert fig.axes[2].get_yticklabels()[0].get_text() == trace.target_tokens[step]
        # issue 33: a row is named by the word its position writes ("1 → am"), as the text says
        rows = [t.get_text() for t in fig.axes[1].get_yticklabels()]
        assert rows[:step + 1] == [f"{i} → {w}" for i, w in enumerate(trace.target_tokens)][
            :step + 1] and rows[step + 1:] == [str(i) for i in range(step + 1, len(rows))]
        legible(fig, width)


def test_draw_translation_fits_a_long_sentence(fr_en, legible, width):
    model, src_vocab, tgt_vocab = fr_en
    test, _, _ = il.data.load_corpus("fr-en", "test")
    longest = max((s for s, _ in test), key=lambda s: len(s.split()))
    t = il.trace(model, longest, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    fig = ch07.draw_translation(t, vocab_tokens=tgt_vocab.tokens, layer=0, head=3, width=width)
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(),
                               ch07.cross_attention(t, 0, 3))
    assert "layer 0, head 3" in fig.axes[0].get_title()
    legible(fig, width)


def test_the_translate_twin_clears_the_old_result(fr_en, monkeypatch, capsys):
    model, src_vocab, tgt_vocab = fr_en
    shown = []
    monkeypatch.setattr(ia, "display", shown.append)
    widget = ch07.translate_widget(model, src_vocab, tgt_vocab, SENTENCE)
    box, layer, head = widget.children[0].children
    assert len(shown) == 1 and "i am a student" in shown[0].texts[0].get_text()
    assert head.label == "mean" and "mean over heads" in shown[0].axes[0].get_title()
    head.value = 2
    assert len(shown) == 2 and "layer 1, head 2" in shown[1].axes[0].get_title()
    box.value = "je suis zèbre"
    assert len(shown) == 2  # no figure for a sentence the model cannot read
    assert "zèbre" in capsys.readouterr().out  # the error names the word
    plt.close("all")


def test_draw_causal_mask_and_output_softmax(fr_en, legible, width):
    model, src_vocab, tgt_vocab = fr_en
    t = il.trace(model, SENTENCE, TARGET, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    weights = t.decoder_self_attention()[0].mean(axis=0)
    fig = ch07.draw_causal_mask(t.decoder_input_tokens, weights, layer=0, width=width)
    assert sorted({x.get_text() for x in fig.axes[0].texts}) == ["0", "−∞"]
    legible(fig, width)
    fig = ch07.draw_output_softmax(t.decoder_output[1], t.logits[1], t.probs[1],
                                   tgt_vocab.tokens, width=width)
    assert "'am'" in fig.axes[3].texts[0].get_text()
    ticks = fig.axes[1].get_yticklabels() if kit.narrow(width) else fig.axes[1].get_xticklabels()
    assert ticks[0].get_text() == "am"  # the highest logit first (on top, on a phone)
    legible(fig, width)
