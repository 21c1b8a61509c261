"""il.trace: every traced value equals what the model's own forward pass produces."""
import copy
import re
import unicodedata
from dataclasses import FrozenInstanceError, replace

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.modules import Attention, recording_attention
from illustrated import reference

SENTENCE = "je suis étudiant"


@pytest.fixture(scope="module")
def post_ln():
    return il.pretrained("fr-en")  # the shipped post-LN model


@pytest.fixture(scope="module", params=[False, True], ids=["post-LN", "pre-LN"])
def model_and_vocabs(request, post_ln):
    """The shipped model, and a seeded untrained pre-LN twin of its shape with dropout 0.3."""
    if not request.param:
        return post_ln
    model, src_vocab, tgt_vocab = post_ln
    torch.manual_seed(0)
    cfg = replace(model.cfg, norm_first=True, dropout=0.3)
    return il.modules.Transformer(cfg), src_vocab, tgt_vocab


def _forward(model, t):
    """The model's own forward pass on the traced ids, in eval mode, and its attention weights."""
    src, tgt_in = torch.tensor([t.source_ids]), torch.tensor([t.decoder_input_ids])
    with il.inference.decoding.EvalMode(model), recording_attention(model) as record:
        logits = model(src, tgt_in)
        memory = model.encode(src)
    attention = Attention.of(record)
    return logits[0].double().numpy(), attention, memory[0].double().numpy()


def test_logits_memory_and_attention_equal_the_models_forward(model_and_vocabs):
    model, src_vocab, tgt_vocab = model_and_vocabs
    t = il.trace(model, SENTENCE, "i am a student", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    logits, attention, memory = _forward(model, t)
    np.testing.assert_allclose(t.logits, logits, atol=1e-6, rtol=0)
    np.testing.assert_allclose(t.memory, memory, atol=1e-6, rtol=0)
    for ours, theirs in ((t.encoder_attention(), attention.encoder),
                         (t.decoder_self_attention(), attention.decoder_self),
                         (t.cross_attention(), attention.decoder_cross)):
        np.testing.assert_allclose(ours, torch.stack([w[0] for w in theirs]).double().numpy(),
                                   atol=1e-6, rtol=0)
    assert t.logits.shape == (5, len(tgt_vocab))  # <bos> + 4 words
    assert t.cross_attention().shape == (model.cfg.n_layers, model.cfg.n_heads, 5, 3)


def test_layer_outputs_equal_each_layers_forward(model_and_vocabs):
    model, src_vocab, tgt_vocab = model_and_vocabs
    t = il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    # The trace runs the book's step-by-step attention; a layer called without its weights
    # recorded runs the batched kernel: the two agree to float32 rounding (~1e-6 at
    # values of a few units), hence 1e-5 here.
    with il.inference.decoding.EvalMode(model):
        x = torch.tensor(t.encoder_input, dtype=torch.float32)[None]
        for layer, traced in zip(model.encoder.layers, t.encoder_layers):
            np.testing.assert_allclose(traced.input, x[0].double().numpy(), atol=1e-5)
            x = layer(x)
            np.testing.assert_allclose(traced.output, x[0].double().numpy(), atol=1e-5)
        memory = torch.tensor(t.memory, dtype=torch.float32)[None]
        y = torch.tensor(t.decoder_input, dtype=torch.float32)[None]
        mask = il.causal_mask(y.shape[1])
        for layer, traced in zip(model.decoder.layers, t.decoder_layers):
            y = layer(y, memory, None, mask)
            np.testing.assert_allclose(traced.output, y[0].double().numpy(), atol=1e-5)


def test_attention_steps_are_the_posts_six_steps(model_and_vocabs):
    model, src_vocab, tgt_vocab = model_and_vocabs
    t = il.trace(model, SENTENCE, "i am a student", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    d_k = model.cfg.d_k
    for attn, mha in ((t.encoder_layers[0].self_attn, model.encoder.layers[0].self_attn),
                      (t.decoder_layers[1].self_attn, model.decoder.layers[1].self_attn),
                      (t.decoder_layers[0].cross_attn, model.decoder.layers[0].cross_attn)):
        np.testing.assert_allclose(attn.scores, attn.q @ attn.k.transpose(0, 2, 1), atol=1e-4)
        allowed = np.broadcast_to(attn.mask, attn.scaled.shape)
        np.testing.assert_allclose(attn.scaled[allowed], attn.scores[allowed] / np.sqrt(d_k),
                                   rtol=1e-6)
        assert np.all(attn.scaled[~allowed] == -np.inf)
        np.testing.assert_allclose(reference.softmax(attn.scaled), attn.weights, atol=1e-6)
        np.testing.assert_allclose(attn.z, attn.weights @ attn.v, atol=1e-5)
        W_O, b_O = mha.w_o.weight.detach().double().numpy(), mha.w_o.bias.detach().double().numpy()
        np.testing.assert_allclose(attn.concat @ W_O.T + b_O, attn.output, atol=1e-5)
    # the decoder's self-attention is causal: nothing above the diagonal
    weights = t.decoder_layers[0].self_attn.weights  # (n_heads, tgt_len, tgt_len)
    assert np.all(np.triu(weights, k=1) == 0)


def test_add_and_norm_and_feed_forward(model_and_vocabs):
    model, src_vocab, tgt_vocab = model_and_vocabs
    t = il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    layer, traced = model.encoder.layers[0], t.encoder_layers[0]
    norm1 = layer.norm1
    gamma, beta = norm1.weight.detach().double().numpy(), norm1.bias.detach().double().numpy()
    block = traced.attn_block
    np.testing.assert_allclose(block.summed, block.residual_input + block.sublayer_output,
                               atol=1e-6)
    np.testing.assert_array_equal(block.sublayer_output, traced.self_attn.output)
    if model.cfg.norm_first:  # x + Sublayer(LayerNorm(x))
        np.testing.assert_allclose(block.sublayer_input,
                                   reference.layer_norm(block.residual_input, gamma, beta),
                                   atol=1e-5)
        np.testing.assert_array_equal(block.output, block.summed)
    else:  # LayerNorm(x + Sublayer(x))
        np.testing.assert_array_equal(block.sublayer_input, block.residual_input)
        np.testing.assert_allclose(block.output, reference.layer_norm(block.summed, gamma, beta),
                                   atol=1e-5)
    ffn = layer.feed_forward
    W_2, b_2 = ffn.linear2.weight.detach().double().numpy(), ffn.linear2.bias.detach().double().numpy()
    assert traced.ffn_hidden.shape == (3, model.cfg.d_ff) and traced.ffn_hidden.min() >= 0
    np.testing.assert_allclose(traced.ffn_hidden @ W_2.T + b_2, traced.ffn_block.sublayer_output,
                               atol=1e-5)
    np.testing.assert_array_equal(traced.ffn_block.residual_input, block.output)


def test_embeddings_and_positions(post_ln):
    model, src_vocab, tgt_vocab = post_ln
    t = il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    table = model.src_embed.lut.weight.detach().double().numpy()
    np.testing.assert_array_equal(t.src_lookup, table[t.source_ids])
    np.testing.assert_allclose(t.src_embeddings, t.src_lookup * np.sqrt(model.cfg.d_model),
                               rtol=1e-6)
    np.testing.assert_allclose(t.src_positions,
                               reference.positional_encoding(3, model.cfg.d_model,
                                                             layout=model.cfg.pe_layout),
                               atol=1e-6)
    np.testing.assert_allclose(t.encoder_input, t.src_embeddings + t.src_positions, atol=1e-5)


def test_without_target_it_traces_the_greedy_translation(post_ln):
    model, src_vocab, tgt_vocab = post_ln
    ids = src_vocab.encode(SENTENCE)
    t = il.trace(model, ids, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    greedy = il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
    assert t.target_ids == greedy
    assert t.target_tokens == ["i", "am", "a", "student", "<eos>"]
    assert t.decoder_input_tokens == ["<bos>", "i", "am", "a", "student"]
    # teacher forcing on the greedy output predicts the greedy output again
    assert list(t.logits.argmax(axis=-1)) == greedy
    np.testing.assert_allclose(t.probs.sum(axis=-1), 1.0, atol=1e-12)


def test_mode_is_restored_and_the_trace_is_frozen(post_ln):
    model, src_vocab, tgt_vocab = post_ln
    model.train()
    try:
        t = il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
        assert model.training
        again = il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
        np.testing.assert_array_equal(t.logits, again.logits)  # no dropout while tracing
    finally:
        model.eval()
    with pytest.raises(FrozenInstanceError):
        t.logits = None


def test_bad_input_is_a_clear_error(post_ln):
    model, src_vocab, tgt_vocab = post_ln
    with pytest.raises(ValueError, match=r"sentence: .*\['zzz'\]"):
        il.trace(model, "je suis zzz", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    with pytest.raises(ValueError, match="target: .*'qqq'"):
        il.trace(model, SENTENCE, "i qqq", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    with pytest.raises(ValueError, match="tgt_vocab"):
        il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=src_vocab)
    with pytest.raises(ValueError, match="sentence: token id"):
        il.trace(model, [1, 10_000], src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    with pytest.raises(ValueError, match="sentence: expected a non-empty str"):
        il.trace(model, "  ", src_vocab=src_vocab, tgt_vocab=tgt_vocab)


def test_encoder_only_trace_and_the_memorys_keys_and_values(model_and_vocabs):
    model, src_vocab, tgt_vocab = model_and_vocabs
    full = il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    encoder = il.trace(model, SENTENCE, src_vocab=src_vocab)
    np.testing.assert_array_equal(encoder.memory, full.memory)
    np.testing.assert_array_equal(encoder.encoder_attention(), full.encoder_attention())
    assert encoder.logits is None and encoder.decoder_layers == [] and encoder.target_ids == []
    for keys, values, layer in zip(full.memory_keys, full.memory_values, full.decoder_layers):
        np.testing.assert_array_equal(keys, layer.cross_attn.k)  # the same at every step
        np.testing.assert_array_equal(values, layer.cross_attn.v)
    with pytest.raises(ValueError, match="tgt_vocab"):
        encoder.cross_attention()
    with pytest.raises(ValueError, match="target: a target needs tgt_vocab"):
        il.trace(model, SENTENCE, "i am", src_vocab=src_vocab)


def test_encode_sentence_is_the_one_validator():
    vocab = il.data.Vocab.build(["je suis étudiant"])
    assert il.data.encode_sentence(vocab, "je suis") == vocab.encode("je suis")
    with pytest.raises(ValueError, match=r"sentence: has words the vocabulary does not know "
                                         r"\['très', 'fatigué'\]|\(\['très', 'fatigué'\]\)"):
        il.data.encode_sentence(vocab, "je suis très fatigué")
    assert il.data.encode_sentence(vocab, "je zut", allow_unk=True) == [vocab.index("je"),
                                                                       vocab.unk_id]
    with pytest.raises(ValueError, match="target: expected a non-empty str"):
        il.data.encode_sentence(vocab, "", name="target")
    with pytest.raises(ValueError, match="vocab: expected an illustrated.data.Vocab"):
        il.data.encode_sentence(["je"], "je")
    # il.trace refuses unknown words through it, naming them
    model, src_vocab, tgt_vocab = il.pretrained("fr-en")
    with pytest.raises(ValueError, match=r"sentence.*\['zzz'\]"):
        il.trace(model, "je suis zzz", src_vocab=src_vocab, tgt_vocab=tgt_vocab)


def test_float_or_bool_ids_are_refused_not_truncated(post_ln):
    model, src_vocab, tgt_vocab = post_ln
    with pytest.raises(ValueError, match="sentence: .*float ids would be truncated"):
        il.trace(model, [4.0, 5.7], src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    with pytest.raises(ValueError, match="target: .*int token ids"):
        il.trace(model, [4, 5], [True], src_vocab=src_vocab, tgt_vocab=tgt_vocab)


# ------------------------------------------------------------ read from the modules, not rebuilt

def test_logits_equal_the_fast_forward_and_weights_equal_the_recorded(model_and_vocabs, recorded):
    model, src_vocab, tgt_vocab = model_and_vocabs
    t = il.trace(model, SENTENCE, "i am a student", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    src, tgt_in = torch.tensor([t.source_ids]), torch.tensor([t.decoder_input_ids])
    with il.inference.decoding.EvalMode(model):
        fast = model(src, tgt_in)  # the batched attention path, no weights kept
        _, attention = recorded(model, model, src, tgt_in)
    np.testing.assert_allclose(t.logits, fast[0].double().numpy(), atol=1e-5, rtol=0)
    for ours, theirs in ((t.encoder_attention(), attention.encoder),
                         (t.decoder_self_attention(), attention.decoder_self),
                         (t.cross_attention(), attention.decoder_cross)):
        np.testing.assert_array_equal(ours, torch.stack([w[0] for w in theirs]).double().numpy())


def test_a_changed_module_shows_in_the_trace(post_ln):
    """The trace reads what each module returns: swap the final norm of a stack, double a
    feed-forward network's output or a whole layer's, and the traced values follow the model's
    own forward (a second forward pass written by hand would miss the layer's change)."""
    model, src_vocab, tgt_vocab = post_ln
    changed = copy.deepcopy(model)
    changed.encoder.norm = torch.nn.LayerNorm(model.cfg.d_model)  # identity in post-LN before
    ffn = changed.decoder.layers[0].feed_forward
    ffn.register_forward_hook(lambda module, args, out: 2 * out)
    changed.encoder.layers[0].register_forward_hook(
        lambda module, args, out: (2 * out[0], out[1]) if isinstance(out, tuple) else 2 * out)
    t = il.trace(changed, SENTENCE, "i am a student", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    np.testing.assert_array_equal(t.encoder_layers[1].input, 2 * t.encoder_layers[0].output)
    logits, _, memory = _forward(changed, t)
    np.testing.assert_allclose(t.memory, memory, atol=1e-6, rtol=0)
    np.testing.assert_allclose(t.memory.mean(-1), 0, atol=1e-6)  # the new norm's output
    np.testing.assert_allclose(t.logits, logits, atol=1e-6, rtol=0)
    block = t.decoder_layers[0].ffn_block
    W_2 = ffn.linear2.weight.detach().double().numpy()
    b_2 = ffn.linear2.bias.detach().double().numpy()
    np.testing.assert_allclose(block.sublayer_output,
                               2 * (t.decoder_layers[0].ffn_hidden @ W_2.T + b_2), atol=1e-5)
    assert not np.allclose(t.logits, il.trace(model, SENTENCE, "i am a student",
                                              src_vocab=src_vocab, tgt_vocab=tgt_vocab).logits)


def test_no_hook_is_left_behind(post_ln):
    model, src_vocab, tgt_vocab = post_ln
    broken = copy.deepcopy(model)
    with torch.no_grad():
        broken.decoder.layers[1].self_attn.w_q.weight[0, 0] = float("nan")
    il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    with pytest.raises(ValueError):
        il.trace(broken, SENTENCE, "i am", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    for m in (model, broken):
        assert not any(module._forward_hooks for module in m.modules())


# ------------------------------------------------------------------ API edges

@pytest.mark.parametrize("where, name", [
    ("src_embed.lut.weight", "src_embed.lut"),
    ("encoder.layers.1.feed_forward.linear1.bias", "encoder.layers.1.feed_forward.linear1"),
    ("decoder.layers.0.norm2.weight", "decoder.layers.0.norm2"),
    ("generator.proj.weight", "generator.proj"),
])
def test_nan_or_inf_weights_name_the_first_module_they_reach(post_ln, where, name):
    model, src_vocab, tgt_vocab = post_ln
    for value in (float("nan"), float("inf")):
        broken = copy.deepcopy(model)
        with torch.no_grad():
            broken.get_parameter(where)[(src_vocab.index("je"),) if "lut" in where else ...] = value
        with pytest.raises(ValueError, match=rf"^model: the output of {re.escape(name)} is not "
                                             rf"finite \(NaN or infinite weights"):
            il.trace(broken, SENTENCE, "i am", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
        with pytest.raises(ValueError, match=r"^model: "):  # the greedy translation refuses too
            il.trace(broken, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
        if where.startswith(("src", "encoder")):
            with pytest.raises(ValueError, match=rf"^model: the output of {re.escape(name)} "):
                il.trace(broken, SENTENCE, src_vocab=src_vocab)


@pytest.mark.parametrize("sentence, match", [
    ({4: 0, 5: 1}, r"^sentence: expected a 1-D sequence of int token ids \(a list, tuple or "
                   r"tensor\), got dict"),
    ({4, 5}, r"^sentence: expected a 1-D sequence of int token ids .*, got set"),
    (7, r"^sentence: expected a 1-D sequence of int token ids .*, got int 7"),
    ([[4, 5]], r"^sentence: expected int token ids, got \[4, 5\] at position 0"),
    ([0, 0], r"^sentence: expected at least one token that is not padding"),
    ([5] * 100, r"^sentence: the sentence has 100 tokens, more than max_len="),
    ("je suis <eos>", r"^sentence: expected no special token, got '<eos>'$"),
    ("<PAD> je", r"^sentence: expected no special token, got '<pad>'$"),
])
def test_a_bad_sentence_is_named_sentence(post_ln, sentence, match):
    model, src_vocab, tgt_vocab = post_ln
    with pytest.raises(ValueError, match=match):
        il.trace(model, sentence, src_vocab=src_vocab, tgt_vocab=tgt_vocab)


def test_vocabularies_model_and_max_len_are_checked(post_ln):
    model, src_vocab, tgt_vocab = post_ln
    moved = il.data.Vocab([*src_vocab.tokens[1:4], src_vocab.tokens[0], *src_vocab.tokens[4:]])
    assert len(moved) == len(src_vocab) and moved.pad_id == 3
    with pytest.raises(ValueError, match=r"^src_vocab: expected <pad> at id 0 as in the model's "
                                         r"config, got <pad> at id 3"):
        il.trace(model, SENTENCE, src_vocab=moved, tgt_vocab=tgt_vocab)
    with pytest.raises(ValueError, match=r"^tgt_vocab: expected the model's vocabulary of "):
        il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=src_vocab)
    with pytest.raises(ValueError, match=r"^max_len: expected a number of generated tokens in "
                                         r"\[1, \d+\], got 0"):
        il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab, max_len=0)
    with pytest.raises(ValueError, match=r"^max_len: expected None \(it only limits the greedy"):
        il.trace(model, SENTENCE, "i am", src_vocab=src_vocab, tgt_vocab=tgt_vocab, max_len=3)
    with pytest.raises(ValueError, match=r"^max_len: expected None"):
        il.trace(model, SENTENCE, src_vocab=src_vocab, max_len=3)
    assert len(il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab,
                        max_len=2).target_ids) == 2
    with pytest.raises(TypeError, match=r"^model: expected an illustrated.modules.Transformer"):
        il.trace(torch.nn.Linear(2, 2), SENTENCE, src_vocab=src_vocab)


def test_a_decomposed_sentence_is_the_same_sentence(post_ln):
    model, src_vocab, tgt_vocab = post_ln
    nfd = unicodedata.normalize("NFD", SENTENCE)
    assert nfd != SENTENCE
    a = il.trace(model, nfd, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    b = il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    assert a.source_tokens == ["je", "suis", "étudiant"] and a.target_ids == b.target_ids
    np.testing.assert_array_equal(a.logits, b.logits)


def test_tracing_a_model_on_the_meta_device_is_refused():
    model, src_vocab, tgt_vocab = il.pretrained("post")
    meta = model.to("meta")
    with pytest.raises(ValueError, match=r"^model: expected a model whose weights are in memory "
                                         r"\(CPU or GPU\), got one on the meta device"):
        il.trace(meta, "je suis étudiant", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
