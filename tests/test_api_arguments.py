"""Every case of issue 11 ("faults and bad input"): one ValueError/TypeError naming the caller's
argument, the value got and what was expected; never a torch/NumPy traceback, a NaN or a
silently wrong result. Valid input still gives the numbers it gave before."""
import math
from dataclasses import replace

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.modules import (Embeddings, EncoderLayer, FeedForward, Generator,
                                 MultiHeadAttention, PositionalEncoding, Transformer)

BOS, EOS, PAD = 1, 2, 0
CFG = replace(il.TINY, src_vocab_size=7, tgt_vocab_size=6, d_model=16, n_heads=2, d_ff=16,
              n_layers=1, max_len=8)


@pytest.fixture(scope="module")
def model():
    il.set_seed(3)
    return Transformer(CFG).eval()


def raises(kind, pattern, call):
    with pytest.raises(kind, match=pattern) as info:
        call()
    return str(info.value)


# ----------------------------------------------------------------------------- decoding

@pytest.mark.parametrize("kwargs, kind, pattern", [
    ({"alpha": float("nan")}, ValueError, r"^alpha: expected a finite length-penalty exponent"),
    ({"alpha": float("inf")}, ValueError, r"^alpha: expected a finite"),
    ({"alpha": -0.1}, ValueError, r"^alpha: expected a length-penalty exponent >= 0.0, got -0.1"),
    ({"alpha": "0.6"}, TypeError, r"^alpha: expected"),
    ({"eos_id": BOS}, ValueError, r"^eos_id: expected an id other than bos_id=1"),
    ({"eos_id": PAD}, ValueError, r"^eos_id: expected an id other than the padding id"),
    ({"bos_id": PAD}, ValueError, r"^bos_id: expected an id other than the padding id "
                                  r"tgt_pad_id=0 \(the decoder would read <bos> as padding\), got 0"),
    ({"eos_id": 2.0}, TypeError, r"^eos_id: expected an id of the target vocabulary"),
    ({"bos_id": 6}, ValueError, r"^bos_id: expected an id of the target vocabulary .*got 6"),
    ({"bos_id": True}, TypeError, r"^bos_id: "),
    ({"max_len": 0}, ValueError, r"^max_len: expected a number of generated tokens in \[1, 8\]"),
    ({"max_len": 9}, ValueError, r"^max_len: .*in \[1, 8\], got 9"),
    ({"max_len": 4.0}, TypeError, r"^max_len: "),
    ({"beam_size": True}, TypeError, r"^beam_size: "),
    ({"beam_size": 2, "top_beams": 3}, ValueError, r"^top_beams: expected an integer in \[1, 2\]"),
    ({"return_steps": "yes"}, TypeError, r"^return_steps: expected True or False"),
])
def test_beam_search_arguments(model, kwargs, kind, pattern):
    args = {"bos_id": BOS, "eos_id": EOS, "max_len": 5, **kwargs}
    raises(kind, pattern, lambda: il.beam_search(model, [3, 4], **args))


def test_nan_alpha_no_longer_crowns_the_empty_hypothesis(model):
    """nan < 0 is False, so alpha=nan used to pass and every score became NaN."""
    with pytest.raises(ValueError, match="alpha"):
        il.beam_search(model, [3, 4], bos_id=BOS, eos_id=EOS, alpha=float("nan"))


@pytest.mark.parametrize("src_ids, kind, pattern", [
    ("je suis", TypeError, r"^src_ids: expected a 1-D sequence of int token ids, got the str"),
    ([3.7, 4.2], TypeError, r"^src_ids: expected int token ids, got 3.7 at position 0 "
                            r"\(float ids would be truncated\)"),
    (torch.tensor([3.0, 4.0]), TypeError, r"^src_ids: expected integer token ids, got dtype "
                                          r"torch.float32"),
    (np.array([3.5]), TypeError, r"^src_ids: expected integer token ids, got dtype float64"),
    ([True, False], TypeError, r"^src_ids: expected int token ids"),
    ([], ValueError, r"^src_ids: expected a non-empty 1-D sequence"),
    (torch.tensor([[3, 4]]), ValueError, r"^src_ids: expected a non-empty 1-D sequence .*\(1, 2\)"),
    ([[3, 4]], TypeError, r"^src_ids: expected int token ids, got \[3, 4\] at position 0"),
    ([3, 99], ValueError, r"^src_ids: token id 99 is outside the source vocabulary \[0, 7\)"),
    ([PAD, PAD], ValueError, r"^src_ids: expected at least one token that is not padding"),
    (list(range(1, 7)) * 2, ValueError, r"^src_ids: the sentence has 12 tokens, more than "
                                        r"max_len=8"),
    (None, TypeError, r"^src_ids: "),
])
def test_source_ids(model, src_ids, kind, pattern):
    raises(kind, pattern, lambda: il.greedy_decode(model, src_ids, bos_id=BOS, eos_id=EOS,
                                                   max_len=5))
    raises(kind, pattern, lambda: il.beam_search(model, src_ids, bos_id=BOS, eos_id=EOS,
                                                 max_len=5))


def test_integer_ids_of_every_kind_still_decode(model):
    expected = il.greedy_decode(model, [3, 4, 5], bos_id=BOS, eos_id=EOS, max_len=5)
    for ids in ([3, 4, 5], (3, 4, 5), np.array([3, 4, 5]), torch.tensor([3, 4, 5]),
                [np.int64(3), 4, torch.tensor(5)], torch.tensor([3, 4, 5], dtype=torch.int32)):
        assert il.greedy_decode(model, ids, bos_id=BOS, eos_id=EOS, max_len=5) == expected


def test_max_len_may_equal_the_models_max_len(model):
    """n generated tokens feed the decoder at most n positions: <bos> and the first n - 1."""
    out = il.greedy_decode(model, [3, 4], bos_id=BOS, eos_id=EOS, max_len=CFG.max_len)
    assert 1 <= len(out) <= CFG.max_len
    [(beam, score)] = il.beam_search(model, [3, 4], bos_id=BOS, eos_id=EOS, beam_size=2,
                                     max_len=CFG.max_len)
    assert 1 <= len(beam) <= CFG.max_len and math.isfinite(score)
    # and the longest possible hypothesis really fits: feed it back in full
    with torch.no_grad():
        logits = model(torch.tensor([[3, 4]]), torch.tensor([[BOS] + [3] * (CFG.max_len - 1)]))
    assert logits.shape == (1, CFG.max_len, CFG.tgt_vocab_size)


def test_a_model_with_nan_weights_is_an_error_not_an_empty_translation(model):
    broken = Transformer(CFG).eval()
    broken.load_state_dict(model.state_dict())
    with torch.no_grad():
        broken.generator.proj.bias.fill_(float("nan"))
    for decode in (il.greedy_decode, il.beam_search):
        with pytest.raises(ValueError, match=r"^model: its scores for the next token are NaN"):
            decode(broken, [3, 4], bos_id=BOS, eos_id=EOS, max_len=5)


def test_translate_and_exact_match_arguments(model):
    src_vocab = il.data.Vocab(["<pad>", "<bos>", "<eos>", "<unk>", "a", "b", "c"])
    tgt_vocab = il.data.Vocab(["<pad>", "<bos>", "<eos>", "<unk>", "x", "y"])
    assert il.translate(model, [], src_vocab, tgt_vocab) == []
    # one sentence as a str gives its translation as a str (a list gives a list)
    one = il.translate(model, "a b", src_vocab, tgt_vocab)
    assert isinstance(one, str) and [one] == il.translate(model, ["a b"], src_vocab, tgt_vocab)
    assert il.translate(model, "a b", src_vocab, tgt_vocab, beam_size=2) == \
        il.translate(model, ["a b"], src_vocab, tgt_vocab, beam_size=2)[0]
    for sentences in (b"a b", 3, None):
        raises(TypeError, r"^sentences: expected a str sentence or a list of them, got ",
               lambda sentences=sentences: il.translate(model, sentences, src_vocab, tgt_vocab))
    raises(ValueError, r"^sentences: sentence 0: sentence: got an empty sentence",
           lambda: il.translate(model, " ", src_vocab, tgt_vocab))
    raises(ValueError, r"^max_len: expected a number of generated tokens in \[1, 8\], got 0",
           lambda: il.translate(model, ["a b"], src_vocab, tgt_vocab, max_len=0))
    raises(ValueError, r"^sentences: sentence 1: sentence: got an empty sentence",
           lambda: il.translate(model, ["a", " "], src_vocab, tgt_vocab))
    for typed in ("a <eos> b", "<pad>", "a <UNK>"):  # never the model's own tokens
        raises(ValueError, r"^sentences: sentence 0: sentence: expected no special token, got '<",
               lambda typed=typed: il.translate(model, [typed], src_vocab, tgt_vocab))
    raises(ValueError, r"^src_vocab: expected the model's vocabulary of 7 tokens, got 4 tokens",
           lambda: il.translate(model, ["a"], il.data.Vocab(["<pad>", "<bos>", "<eos>", "<unk>"]),
                                tgt_vocab))
    assert il.translate(model, ["a b"], src_vocab, tgt_vocab, max_len=CFG.max_len)
    raises(ValueError, r"^pairs: expected at least one",
           lambda: il.exact_match(model, [], src_vocab, tgt_vocab))
    raises(ValueError, r"^pairs: expected \(source, target\) pairs",
           lambda: il.exact_match(model, ["a b"], src_vocab, tgt_vocab))


# ----------------------------------------------------------------------------- config

@pytest.mark.parametrize("field, value, kind", [
    ("norm_first", "yes", TypeError), ("norm_first", 1, TypeError),
    ("dropout", "0.1", TypeError), ("dropout", float("nan"), ValueError),
    ("dropout", 1.0, ValueError), ("d_model", 32.0, TypeError), ("n_layers", True, TypeError),
    ("max_len", 0, ValueError), ("pad_id", 7, ValueError), ("pad_id", -1, ValueError),
    ("pe_layout", "diagonal", ValueError), ("pe_layout", None, TypeError),
])
def test_config_fields_are_type_checked(field, value, kind):
    with pytest.raises(kind, match=rf"^{field}: expected"):
        replace(CFG, **{field: value})


def test_config_numpy_numbers_become_python_numbers():
    cfg = replace(CFG, d_model=np.int64(16), dropout=np.float32(0.0))
    assert type(cfg.d_model) is int and type(cfg.dropout) is float and cfg == CFG


def test_a_type_error_is_also_a_value_error():
    """Code written against the old ValueError keeps working."""
    with pytest.raises(ValueError):
        replace(CFG, norm_first="yes")


# ----------------------------------------------------------------------------- training

@pytest.mark.parametrize("kwargs, kind, pattern", [
    ({"steps": True}, TypeError, r"^steps: expected an integer >= 1, got bool"),
    ({"steps": 0}, ValueError, r"^steps: "),
    ({"warmup": float("nan")}, TypeError, r"^warmup: expected a number of steps"),
    ({"warmup": -1}, ValueError, r"^warmup: "),
    ({"clip_grad": -1}, ValueError, r"^clip_grad: expected a gradient norm"),
    ({"clip_grad": float("nan")}, ValueError, r"^clip_grad: "),
    ({"lr": "0.1"}, TypeError, r"^lr: "),
    ({"lr": float("inf")}, ValueError, r"^lr: expected a finite learning rate"),
    ({"label_smoothing": 1.0}, ValueError, r"^label_smoothing: "),
    ({"seed": -1}, ValueError, r"^seed: expected an integer in \[0, 4294967295\]"),
    ({"batch_size": 2.0}, TypeError, r"^batch_size: "),
    ({"schedule": "linear"}, ValueError, r"^schedule: expected one of"),
    ({"progress": "no"}, TypeError, r"^progress: "),
    ({"callback": 3}, TypeError, r"^callback: "),
    ({"device": 3}, TypeError, r"^device: "),
    ({"device": "tpu"}, ValueError, r"^device: expected 'auto', 'cpu', 'cuda' or 'mps'"),
    ({"device": "cpu:1"}, ValueError, r"^device: expected 'cpu' \(this machine has one CPU "
                                      r"device\), got 'cpu:1'$"),
])
def test_train_arguments(kwargs, kind, pattern):
    pairs, src_vocab, tgt_vocab = il.data.load_corpus("post")
    cfg = replace(il.TINY, src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab),
                  pad_id=src_vocab.pad_id, tgt_pad_id=tgt_vocab.pad_id)
    model = Transformer(cfg)
    before = [p.clone() for p in model.parameters()]
    raises(kind, pattern, lambda: il.train(model, pairs, src_vocab, tgt_vocab,
                                           **{"progress": False, **kwargs}))
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))  # untouched


def test_train_refuses_a_str_for_pairs():
    pairs, src_vocab, tgt_vocab = il.data.load_corpus("post")
    cfg = replace(il.TINY, src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab),
                  pad_id=src_vocab.pad_id, tgt_pad_id=tgt_vocab.pad_id)
    raises(TypeError, r"^pairs: expected a list of \(source, target\)",
           lambda: il.train(Transformer(cfg), "je suis", src_vocab, tgt_vocab, progress=False))


def test_pick_device_refuses_devices_this_machine_lacks():
    assert il.pick_device("cpu") == torch.device("cpu")
    assert il.pick_device(torch.device("cpu")) == torch.device("cpu")
    if not torch.cuda.is_available():
        for device in ("cuda", torch.device("cuda"), torch.device("cuda", 0)):
            raises(ValueError, r"^device: expected an available device, got 'cuda",
                   lambda: il.pick_device(device))  # noqa: B023 (called at once)
    else:
        raises(ValueError, r"^device: expected a CUDA index below",
               lambda: il.pick_device(f"cuda:{torch.cuda.device_count()}"))
    for device in ("cpu:1", torch.device("cpu", 1)):
        raises(ValueError, r"^device: expected 'cpu' \(this machine has one CPU device\), got 'cpu:1'",
               lambda: il.pick_device(device))  # noqa: B023 (called at once)
    assert il.pick_device("cpu:0") == torch.device("cpu", 0)


def test_set_seed_and_learning_rate_arguments():
    raises(ValueError, r"^seed: ", lambda: il.set_seed(2**32))
    raises(TypeError, r"^seed: ", lambda: il.set_seed(1.5))
    lr = il.training.schedules.learning_rate
    raises(ValueError, r"^step: ", lambda: lr(0, 1e-3, 10))
    raises(TypeError, r"^warmup: ", lambda: lr(1, 1e-3, float("nan")))
    raises(ValueError, r"^total_steps: ", lambda: lr(1, 1e-3, 0, "cosine"))
    assert lr(5, 1e-3, 10) == pytest.approx(5e-4)  # valid input: the same number as before


# ----------------------------------------------------------------------------- modules

def test_a_mask_for_three_sentences_does_not_fit_a_batch_of_one():
    attention = MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    raises(ValueError, r"^mask: expected a shape broadcastable to .*=\(1, 2, 3, 3\) without "
                       r"growing it.*got \(3, 1, 1, 3\)",
           lambda: attention(x, x, x, mask=torch.ones(3, 1, 1, 3, dtype=torch.bool)))
    out = attention(x, x, x, mask=torch.ones(1, 1, 1, 3, dtype=torch.bool))
    assert out.shape == (1, 3, 8)


def test_dtypes_that_used_to_fail_inside_torch(model):
    attention = MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8, dtype=torch.float64)
    raises(TypeError, r"^query: expected dtype torch.float32 like the module's weights .*got "
                      r"torch.float64$", lambda: attention(x, x, x))
    ids = torch.tensor([[3, 4]], dtype=torch.uint8)
    raises(TypeError, r"^src: expected an int64 \(or int32\) tensor", lambda: model(ids, ids))
    raises(TypeError, r"^mask: expected a bool tensor",
           lambda: attention(*[torch.randn(1, 3, 8)] * 3, mask=torch.ones(3, 3)))


@pytest.mark.parametrize("make, pattern", [
    (lambda: MultiHeadAttention(-8, 2), r"^d_model: expected an integer >= 1, got -8"),
    (lambda: MultiHeadAttention(8, -2), r"^n_heads: expected an integer >= 1, got -2"),
    (lambda: MultiHeadAttention(0, 1), r"^d_model: "),
    (lambda: MultiHeadAttention(8, 3), r"^n_heads: expected a positive divisor of d_model=8"),
    (lambda: MultiHeadAttention(8, 2, dropout=1.5), r"^dropout: "),
    (lambda: MultiHeadAttention(8, 2, bias="no"), r"^bias: "),
    (lambda: PositionalEncoding(-4, 10), r"^d_model: "),
    (lambda: PositionalEncoding(4, -10), r"^max_len: "),
    (lambda: PositionalEncoding(5, 10), r"^d_model: expected an even number"),
    (lambda: PositionalEncoding(4, 10, layout="spiral"), r"^layout: "),
    (lambda: PositionalEncoding(512, 10**9), r"^max_len: expected sizes giving at most"),
    (lambda: Embeddings(0, 4), r"^vocab_size: "),
    (lambda: FeedForward(4, 0), r"^d_ff: "),
    (lambda: Generator(4, -1), r"^vocab_size: "),
    (lambda: EncoderLayer({"d_model": 4}), r"^cfg: expected a TransformerConfig"),
    (lambda: il.causal_mask(0), r"^size: "),
    (lambda: il.causal_mask(2.0), r"^size: "),
])
def test_module_sizes(make, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern):
        make()


def test_errors_name_the_callers_argument_not_an_inner_one(model):
    long = torch.full((1, CFG.max_len + 1), 3)
    raises(ValueError, r"^src: expected at most max_len=8 positions, got 9",
           lambda: model(long, torch.tensor([[BOS]])))
    raises(ValueError, r"^tgt_in: expected at most max_len=8",
           lambda: model(torch.tensor([[3]]), long))
    raises(ValueError, r"^tgt_in: expected shape \(batch, seq\) with batch and seq at least 1",
           lambda: model(torch.tensor([[3]]), torch.zeros(1, 0, dtype=torch.long)))
    raises(ValueError, r"^src: sentence 1 is only padding",
           lambda: model(torch.tensor([[3, 4], [PAD, PAD]]), torch.tensor([[BOS], [BOS]])))
    raises(ValueError, r"^src_mask: ", lambda: model(torch.tensor([[3, 4]]), torch.tensor([[BOS]]),
                                                    src_mask=torch.ones(2, 1, 1, 2,
                                                                        dtype=torch.bool)))
    raises(ValueError, r"^tgt_in: expected batch 1 like src",
           lambda: model(torch.tensor([[3]]), torch.tensor([[BOS], [BOS]])))


def test_mask_and_id_checks_read_each_tensor_once(model, monkeypatch):
    """The value checks are remembered: one read per tensor, not one per layer."""
    from illustrated.modules import _checks
    calls = []
    real = torch.aminmax
    monkeypatch.setattr(_checks.torch, "aminmax", lambda t: calls.append(1) or real(t))
    src = torch.tensor([[3, 4, 5]])
    model(src, torch.tensor([[BOS, 3]]))
    assert len(calls) == 2  # src once, tgt_in once, though forward, encode and the embeddings
    src[0, 0] = 99  # changed in place: checked again
    with pytest.raises(ValueError, match="^src: token id 99"):
        model(src, torch.tensor([[BOS, 3]]))


# ----------------------------------------------------------------------------- reference

def test_reference_cases_of_the_issue():
    R = il.reference
    raises(ValueError, r"^axis: expected an axis in \[-1, 0\] for an array with 1 dimensions, "
                       r"got 5", lambda: R.softmax([1.0, 2.0], axis=5))
    raises(ValueError, r"^eps: expected eps > 0 for x with a constant vector",
           lambda: R.layer_norm([[1.0, 1.0, 1.0]], eps=0))
    assert np.isfinite(R.layer_norm([[1.0, 2.0, 3.0]], eps=0)).all()  # eps=0 is fine otherwise
    raises(ValueError, r"^W_Q: expected shape \(3, d_k\) with no dimension of size 0",
           lambda: R.self_attention(np.ones((2, 3)), np.ones((3, 0)), np.ones((3, 0)),
                                    np.ones((3, 2))))
    raises(ValueError, r"^X, W_Q, W_K, W_V: values too large: self_attention overflowed",
           lambda: R.self_attention(np.full((2, 3), 1e200), np.ones((3, 2)), np.ones((3, 2)),
                                    np.ones((3, 2))))
    raises(ValueError, r"^x, gamma, beta: values too large",
           lambda: R.layer_norm([[1e308, 1e308]]))
    raises(ValueError, r"^X: expected finite numbers, got NaN",
           lambda: R.self_attention([[np.nan, 1.0]], np.ones((2, 2)), np.ones((2, 2)),
                                    np.ones((2, 2))))
    raises(ValueError, r"^n_positions: expected sizes giving at most",
           lambda: R.positional_encoding(10**9, 512))
    assert R.cross_entropy_from_logits([[1e308, -1e308]], [0]) == 0.0  # not 0 * -inf = NaN
