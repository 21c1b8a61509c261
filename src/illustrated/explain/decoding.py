"""The decoder side in numbers: greedy decoding step by step, the mask, and the final softmax.

Everything here runs a real model and returns plain NumPy arrays and word labels for the plots
of :mod:`illustrated.plots.decoding`. The model is used in eval mode without gradients and its
mode is restored afterwards.

References: post "The Decoder Side" and "The Final Linear and Softmax Layer"; paper §3.1
(Decoder), §3.2.3 (masking), §3.4.
"""
from __future__ import annotations

import copy
from typing import NamedTuple, Sequence

import numpy as np
import torch

from ..data import Vocab, load_corpus
from ..decoding import EvalMode, greedy_decode, prepare_source
from ..masks import causal_mask
from ..modules._checks import check_features, check_token_ids
from ..modules.transformer import Transformer
from ..tracing import trace
from ..training import History, exact_match, set_seed, train, translate
from ._checks import (check_head, check_layer, check_model, check_vocab, encode_sentence,
                      pick_heads, to_numpy)

__all__ = ["DecodingStep", "DecodingTrace", "decoding_trace", "MemoryProjections",
           "memory_keys_values", "OutputStep", "output_softmax_step", "MaskedSelfAttention",
           "masked_self_attention", "UnmaskedTransformer", "without_causal_mask", "LeakTest",
           "leak_test", "CheatingResult", "cheating_demo"]


def _source_ids(model: Transformer, sentence: str, src_vocab: Vocab) -> list[int]:
    """The sentence's ids, checked against the model (unknown words are an error)."""
    check_vocab("src_vocab", src_vocab, model.cfg.src_vocab_size)
    ids = encode_sentence(src_vocab, sentence)
    prepare_source(model, ids)  # too long for the model -> ValueError
    return ids


class DecodingStep(NamedTuple):
    """One step of greedy decoding: what the decoder saw, where it looked, what it said."""

    step: int
    """1-based step number (the number of words generated after this step)."""
    input_tokens: list[str]
    """The decoder's input at this step: ``<bos>`` and the words chosen so far (length ``step``)."""
    cross_attention: np.ndarray
    """Encoder-decoder attention of every decoder input position over the source words,
    shape (step, src_len); the last row is the position that predicts this step's word."""
    probs: np.ndarray
    """softmax of the last position's logits over the whole target vocabulary, shape (vocab,)."""
    top_tokens: list[str]
    """The ``top_k`` most probable words, most probable first."""
    top_probs: np.ndarray
    """Their probabilities, shape (top_k,)."""
    chosen_id: int
    """The word greedy decoding picks: the argmax with ``<bos>`` and ``<pad>`` excluded."""
    chosen_token: str
    """That word."""


class DecodingTrace(NamedTuple):
    """Greedy decoding of one sentence, step by step."""

    source_tokens: list[str]
    """The source words."""
    steps: list[DecodingStep]
    """One record per generated word."""
    output_ids: list[int]
    """The generated ids (equal to :func:`il.greedy_decode`), ending with ``<eos>`` if produced."""
    output_tokens: list[str]
    """The generated words."""
    layer: int
    """The decoder layer whose encoder-decoder attention is recorded (0-based, non-negative)."""
    head: int | None
    """The head recorded, or None when the weights are averaged over the heads."""


def decoding_trace(model: Transformer, sentence: str, src_vocab: Vocab, tgt_vocab: Vocab, *,
                   layer: int = -1, head: int | None = None, top_k: int = 6,
                   max_len: int = 20) -> DecodingTrace:
    """Each step of decoding outputs one word; follow greedy decoding of a sentence step by step.

    At step t the decoder gets ``<bos>`` and the t-1 words chosen so far, attends to the
    encoder's output, and the last position's distribution gives the next word. The words are
    :func:`il.greedy_decode`'s; the probabilities and attention are selected from
    :func:`il.trace` of that translation (the causal mask makes position t of the whole
    translation see exactly what step t saw).

    Parameters
    ----------
    model : Transformer (trained).   sentence : str, the source sentence.
    src_vocab, tgt_vocab : the model's vocabularies.
    layer : int, decoder layer whose encoder-decoder attention is recorded (default the last).
    head : int or None, the head recorded; None (default) averages the weights over the heads.
    top_k : int, number of most probable words listed per step.
    max_len : int, most words generated, ``<eos>`` included.

    Returns
    -------
    DecodingTrace.

    Shapes
    ------
    step t: cross_attention (t, src_len); probs (tgt_vocab,); top_probs (top_k,).

    Raises
    ------
    ValueError
        For a model that is not a Transformer, vocabularies that do not fit it, an empty
        sentence, a bad ``layer``/``head``/``top_k``/``max_len``.

    References
    ----------
    Post "The Decoder Side" (decoding animations) and "The Final Linear and Softmax Layer";
    paper §3.1, §3.2.3 ("encoder-decoder attention").
    """
    model = check_model(model)
    tgt_vocab = check_vocab("tgt_vocab", tgt_vocab, model.cfg.tgt_vocab_size)
    layer = check_layer(model, layer)
    check_head(head, model.cfg.n_heads)
    vocab_size = model.cfg.tgt_vocab_size
    if not isinstance(top_k, int) or not 1 <= top_k <= vocab_size:
        raise ValueError(f"top_k: expected an int in [1, {vocab_size}], got {top_k!r}")
    if not isinstance(max_len, int) or not 1 <= max_len < model.cfg.max_len:
        raise ValueError(f"max_len: expected an int in [1, {model.cfg.max_len}), got {max_len!r}")
    ids = _source_ids(model, sentence, src_vocab)
    output, _ = greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                              max_len=max_len, return_steps=True)
    # Teacher forcing on greedy's own output: position t sees what step t + 1 saw (causal mask).
    t = trace(model, ids, output, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    cross = pick_heads(t.cross_attention()[layer], head)  # (tgt_len, src_len)
    steps = []
    for step, chosen in enumerate(output, start=1):
        probs = t.probs[step - 1]  # (vocab,)
        order = np.argsort(-probs, kind="stable")[:top_k]  # (top_k,)
        steps.append(DecodingStep(
            step=step, input_tokens=t.decoder_input_tokens[:step],
            cross_attention=cross[:step].copy(), probs=probs,
            top_tokens=[tgt_vocab.tokens[i] for i in order], top_probs=probs[order],
            chosen_id=chosen, chosen_token=tgt_vocab.tokens[chosen]))
    return DecodingTrace(t.source_tokens, steps, output, t.target_tokens, layer, head)


class MemoryProjections(NamedTuple):
    """The encoder's output and the keys and values every decoder layer makes from it."""

    source_tokens: list[str]
    """The source words."""
    memory: np.ndarray
    """The top encoder's output, shape (1, src_len, d_model)."""
    keys: list[np.ndarray]
    """Per decoder layer: ``memory @ W_K`` of its encoder-decoder attention, split into heads,
    shape (1, n_heads, src_len, d_k)."""
    values: list[np.ndarray]
    """Per decoder layer: ``memory @ W_V``, split into heads, shape (1, n_heads, src_len, d_k)."""


def memory_keys_values(model: Transformer, sentence: str, src_vocab: Vocab) -> MemoryProjections:
    """The output of the top encoder is transformed into a set of attention vectors K and V.

    Every decoder layer has its own encoder-decoder attention with its own W_K and W_V, all
    applied to the same encoder output (``memory``); the keys and values are computed once
    per sentence and reused at every decoding step.

    Parameters
    ----------
    model : Transformer.   sentence : str.   src_vocab : the model's source vocabulary.

    Returns
    -------
    MemoryProjections.

    Shapes
    ------
    memory (1, src_len, d_model); keys[i], values[i] (1, n_heads, src_len, d_k) for each of the
    ``n_layers`` decoder layers.

    Raises
    ------
    ValueError
        For a model that is not a Transformer, a vocabulary that does not fit it or an empty
        sentence.

    References
    ----------
    Post "The Decoder Side"; paper §3.2.3 ("the memory keys and values come from the output
    of the encoder").
    """
    model = check_model(model)
    t = trace(model, _source_ids(model, sentence, src_vocab), src_vocab=src_vocab)
    return MemoryProjections(t.source_tokens, t.memory[None],  # (1, src_len, d_model)
                             [k[None] for k in t.memory_keys],  # each (1, n_heads, src_len, d_k)
                             [v[None] for v in t.memory_values])


class OutputStep(NamedTuple):
    """The final linear layer and softmax for one decoding step, with real numbers."""

    input_tokens: list[str]
    """The decoder's input: ``<bos>`` and the given prefix."""
    decoder_output: np.ndarray
    """The top decoder's vector at the last position, shape (d_model,)."""
    weight: np.ndarray
    """The final linear layer's weights as ``x @ W + b`` uses them, shape (d_model, vocab)."""
    bias: np.ndarray
    """Its bias, shape (vocab,)."""
    logits: np.ndarray
    """One score per word of the target vocabulary, shape (vocab,)."""
    probs: np.ndarray
    """softmax(logits), shape (vocab,)."""
    vocab_tokens: list[str]
    """The target vocabulary; ``vocab_tokens[i]`` is the word of cell i."""
    chosen_id: int
    """The argmax of ``probs`` with ``<bos>`` and ``<pad>`` excluded (as greedy decoding)."""
    chosen_token: str
    """The output word."""


def output_softmax_step(model: Transformer, sentence: str, prefix: Sequence[str],
                        src_vocab: Vocab, tgt_vocab: Vocab) -> OutputStep:
    """Turn the decoder stack's vector of floats into a word: Linear, logits, softmax, argmax.

    Parameters
    ----------
    model : Transformer.   sentence : str, the source sentence.
    prefix : sequence of str, target words already produced (empty for the first step).
    src_vocab, tgt_vocab : the model's vocabularies.

    Returns
    -------
    OutputStep; ``logits == decoder_output @ weight + bias`` and ``probs == softmax(logits)``.

    Shapes
    ------
    decoder_output (d_model,); weight (d_model, vocab); bias, logits, probs (vocab,).

    Raises
    ------
    ValueError
        For a prefix word outside the target vocabulary, a prefix too long for the model, or
        the errors of :func:`decoding_trace`.

    References
    ----------
    Post "The Final Linear and Softmax Layer"; paper §3.4.
    """
    model = check_model(model)
    tgt_vocab = check_vocab("tgt_vocab", tgt_vocab, model.cfg.tgt_vocab_size)
    if isinstance(prefix, str):
        raise ValueError(f"prefix: expected a sequence of words, got the str {prefix!r}")
    ids = [tgt_vocab.bos_id]
    for word in prefix:
        if word not in tgt_vocab:
            raise ValueError(f"prefix: the word {word!r} is not in the target vocabulary")
        ids.append(tgt_vocab.index(word))
    if len(ids) > model.cfg.max_len:
        raise ValueError(f"prefix: {len(prefix)} words do not fit max_len={model.cfg.max_len}")
    src_ids = _source_ids(model, sentence, src_vocab)
    # the decoder reads <bos> + prefix; the traced target is prefix + <eos> (never read)
    t = trace(model, src_ids, [*ids[1:], tgt_vocab.eos_id], src_vocab=src_vocab,
              tgt_vocab=tgt_vocab)
    proj = model.generator.proj
    probs = t.probs[-1]  # (vocab,)
    ranked = probs.copy()
    ranked[[tgt_vocab.bos_id, model.cfg.tgt_pad_id]] = -1.0
    chosen = int(ranked.argmax())
    return OutputStep(t.decoder_input_tokens, t.decoder_output[-1],  # (d_model,)
                      to_numpy(proj.weight.T), to_numpy(proj.bias),  # (d_model, vocab), (vocab,)
                      t.logits[-1], probs, list(tgt_vocab.tokens), chosen,
                      tgt_vocab.tokens[chosen])


class MaskedSelfAttention(NamedTuple):
    """The causal mask and the decoder self-attention weights it produces in a real model."""

    input_tokens: list[str]
    """The decoder's input (teacher forcing): ``<bos>`` and the target words."""
    mask: np.ndarray
    """bool (tgt_len, tgt_len); True = may attend (row = query position, column = key)."""
    weights: np.ndarray
    """Self-attention weights of one decoder layer, shape (tgt_len, tgt_len), zero above the
    diagonal."""
    layer: int
    """The decoder layer (0-based)."""
    head: int | None
    """The head, or None for the mean over heads."""


def _target_input(model: Transformer, target: str, tgt_vocab: Vocab) -> list[int]:
    check_vocab("tgt_vocab", tgt_vocab, model.cfg.tgt_vocab_size)
    ids = [tgt_vocab.bos_id, *encode_sentence(tgt_vocab, target, name="target")]
    if len(ids) > model.cfg.max_len:
        raise ValueError(f"target: {len(ids)} positions do not fit max_len={model.cfg.max_len}")
    return ids


def masked_self_attention(model: Transformer, sentence: str, target: str, src_vocab: Vocab,
                          tgt_vocab: Vocab, *, layer: int = 0,
                          head: int | None = None) -> MaskedSelfAttention:
    """The decoder's self-attention may only attend to earlier positions: the mask and its effect.

    Parameters
    ----------
    model : Transformer.   sentence : str, the source.   target : str, the target words.
    src_vocab, tgt_vocab : the model's vocabularies.
    layer : int, decoder layer (default the first).   head : int or None (mean over heads).

    Returns
    -------
    MaskedSelfAttention.

    Shapes
    ------
    mask, weights (tgt_len, tgt_len) with tgt_len = 1 + number of target words.

    Raises
    ------
    ValueError
        For bad vocabularies, sentences, ``layer`` or ``head``.

    References
    ----------
    Post "The Decoder Side" ("masking future positions (setting them to -inf)"); paper §3.2.3.
    """
    model = check_model(model)
    layer = check_layer(model, layer)
    check_head(head, model.cfg.n_heads)
    ids = _target_input(model, target, tgt_vocab)
    t = trace(model, _source_ids(model, sentence, src_vocab), [*ids[1:], tgt_vocab.eos_id],
              src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    return MaskedSelfAttention(t.decoder_input_tokens, causal_mask(len(ids)).cpu().numpy(),
                               pick_heads(t.decoder_self_attention()[layer], head), layer, head)


class UnmaskedTransformer(Transformer):
    """For the demonstration only: a Transformer whose decoder self-attention has no causal mask.

    Every decoder position may attend to every other one, later positions included, so during
    teacher-forced training position t can read the very word it must predict (it is the
    decoder's input at position t + 1). Everything else is :class:`il.modules.Transformer`.

    Parameters
    ----------
    cfg : TransformerConfig.

    Shapes
    ------
    As :class:`il.modules.Transformer`.

    Raises
    ------
    ValueError
        As :class:`il.modules.Transformer`.

    References
    ----------
    Post "The Decoder Side" (why future positions are masked); paper §3.2.3 ("to prevent
    leftward information flow in the decoder").
    """

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor,
               src_mask: torch.Tensor | None = None, return_attention: bool = False):
        check_token_ids("tgt_in", tgt_in, self.cfg.tgt_vocab_size)
        check_features("memory", memory, self.cfg.d_model)
        y = self.positional(self.tgt_embed(tgt_in))  # (batch, tgt_len, d_model)
        return self.decoder(y, memory, src_mask, None, return_attention=return_attention)


def without_causal_mask(model: Transformer) -> UnmaskedTransformer:
    """The same weights in a model whose decoder has no causal mask (for the leak test).

    Parameters
    ----------
    model : Transformer.

    Returns
    -------
    UnmaskedTransformer with a copy of ``model``'s weights, on its device, in its dtype and
    mode. The global random state is left untouched.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``model`` is not a Transformer.

    References
    ----------
    Post "The Decoder Side"; paper §3.2.3.
    """
    model = check_model(model)
    param = next(model.parameters())
    with torch.random.fork_rng(devices=[]):  # the throw-away initialisation leaves the RNG as it was
        twin = UnmaskedTransformer(model.cfg)
    twin.to(device=param.device, dtype=param.dtype).load_state_dict(model.state_dict())
    return twin.train(model.training)


class LeakTest(NamedTuple):
    """Change one decoder input word and see which positions' outputs move."""

    input_before: list[str]
    """The decoder input: ``<bos>`` and the target words."""
    input_after: list[str]
    """The same with the word at ``position`` replaced."""
    position: int
    """The changed position (0-based, ``>= 1``: ``<bos>`` stays)."""
    change_masked: np.ndarray
    """Per position, the largest absolute change of the output probabilities, with the causal
    mask (the real model), shape (tgt_len,)."""
    change_unmasked: np.ndarray
    """The same for the same weights without the mask, shape (tgt_len,)."""


def leak_test(model: Transformer, sentence: str, target: str, src_vocab: Vocab,
              tgt_vocab: Vocab, *, position: int, new_word: str) -> LeakTest:
    """With the mask, a future word cannot change earlier outputs; without it, it does.

    The decoder gets ``<bos>`` + ``target`` (teacher forcing). The word at ``position`` is
    replaced by ``new_word`` and the output distributions of every position are compared,
    once with the causal mask and once with the same weights and no mask.

    Parameters
    ----------
    model : Transformer.   sentence : str, the source.   target : str, the target words.
    src_vocab, tgt_vocab : the model's vocabularies.
    position : int in [1, tgt_len), the decoder input position to change.
    new_word : str, a word of the target vocabulary.

    Returns
    -------
    LeakTest; with the mask ``change_masked[:position]`` is 0 (below 1e-12).

    Shapes
    ------
    change_masked, change_unmasked (tgt_len,) with tgt_len = 1 + number of target words.

    Raises
    ------
    ValueError
        For a ``position`` outside [1, tgt_len), a ``new_word`` outside the target vocabulary,
        or the errors of :func:`masked_self_attention`.

    References
    ----------
    Post "The Decoder Side"; paper §3.2.3 (auto-regressive property).
    """
    model = check_model(model)
    ids = _target_input(model, target, tgt_vocab)
    if not isinstance(position, int) or not 1 <= position < len(ids):
        raise ValueError(f"position: expected an int in [1, {len(ids)}) (0 is <bos>), "
                         f"got {position!r}")
    if not isinstance(new_word, str) or new_word not in tgt_vocab:
        raise ValueError(f"new_word: expected a word of the target vocabulary, got {new_word!r}")
    changed = list(ids)
    changed[position] = tgt_vocab.index(new_word)
    src = prepare_source(model, _source_ids(model, sentence, src_vocab))  # (1, src_len)
    tgt = torch.tensor([ids, changed], device=src.device)  # (2, tgt_len)
    src2 = src.expand(2, -1)  # (2, src_len)
    masked = copy.deepcopy(model).double()  # float64, so that "unchanged" means 1e-16, not 1e-8
    changes = []
    for m in (masked, without_causal_mask(masked)):
        with EvalMode(m):
            probs = m(src2, tgt).softmax(dim=-1).cpu().numpy()  # (2, tgt_len, vocab)
        changes.append(np.abs(probs[1] - probs[0]).max(axis=-1))  # (tgt_len,)
    return LeakTest([tgt_vocab.tokens[i] for i in ids], [tgt_vocab.tokens[i] for i in changed],
                    position, changes[0], changes[1])


class CheatingResult(NamedTuple):
    """Two models trained alike, one with and one without the causal mask."""

    corpus: str
    """The corpus both were trained on."""
    masked: History
    """Training history of the real model (with the mask)."""
    unmasked: History
    """Training history of the model without the mask."""
    masked_exact_match: float
    """Share of the test sentences the real model translates exactly (greedy decoding)."""
    unmasked_exact_match: float
    """The same for the model without the mask."""
    examples: list[tuple[str, str, str, str]]
    """(source, target, real model's output, unmasked model's output) for a few test pairs."""


def cheating_demo(corpus: str = "copy", *, steps: int = 300, batch_size: int = 64,
                  n_examples: int = 3, seed: int = 0) -> CheatingResult:
    """Without the mask, training lets each position read the next word: a model that cheats.

    Trains the corpus's default TINY model twice from the same initial weights and batches, once
    as it is and once as :class:`UnmaskedTransformer`, on the CPU; then decodes the test split
    greedily with both.

    Parameters
    ----------
    corpus : str, a corpus of :data:`il.data.CORPORA`.
    steps : int, training steps for each model.   batch_size : int.
    n_examples : int, test pairs returned as examples.   seed : int.

    Returns
    -------
    CheatingResult.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        For an unknown corpus or a bad ``steps``/``batch_size``/``n_examples``.

    References
    ----------
    Post "The Decoder Side"; paper §3.2.3.
    """
    from ..presets import SETTINGS, make_config  # presets imports training; keep imports light

    if corpus not in SETTINGS:
        raise ValueError(f"corpus: expected one of {sorted(SETTINGS)}, got {corpus!r}")
    if not isinstance(n_examples, int) or n_examples < 0:
        raise ValueError(f"n_examples: expected an int >= 0, got {n_examples!r}")
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    test_pairs, _, _ = load_corpus(corpus, "test")
    cfg = make_config(corpus, src_vocab, tgt_vocab)
    options = {**SETTINGS[corpus]["train"], "steps": steps, "batch_size": batch_size,
               "seed": seed, "device": "cpu", "progress": False}
    models, histories = [], []
    for cls in (Transformer, UnmaskedTransformer):
        set_seed(seed)
        model = cls(cfg)
        histories.append(train(model, pairs, src_vocab, tgt_vocab, **options))
        models.append(model)
    scores = [exact_match(m, test_pairs, src_vocab, tgt_vocab) for m in models]
    sample = test_pairs[:n_examples]
    outputs = [translate(m, [s for s, _ in sample], src_vocab, tgt_vocab) for m in models]
    examples = [(s, t, a, b) for (s, t), a, b in zip(sample, outputs[0], outputs[1])]
    return CheatingResult(corpus, histories[0], histories[1], scores[0], scores[1], examples)
