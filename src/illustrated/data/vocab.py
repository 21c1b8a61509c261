"""The vocabulary: a numbered list of words, special tokens included.

The post's output vocabulary is six words ("a", "am", "i", "thanks", "student", "<eos>"); a
word is a cell of the logits vector and of its one-hot target. Ours adds ``<pad>`` (fills short
sentences of a batch), ``<bos>`` (starts the decoder's input), ``<eos>`` (ends a sentence) and
``<unk>`` (any word not in the list).
Post "The Final Linear and Softmax Layer", "Recap Of Training"; paper §3.4.
"""
from __future__ import annotations

import operator
from typing import Any, Iterable, Iterator, Sequence

from .._args import ArgumentTypeError, check_bool
from .tokenizer import SPECIALS, detokenize, normalize, tokenize

__all__ = ["SPECIALS", "Vocab", "encode_sentence", "check_vocab_fits"]


def tokens_of(sentences: Iterable[str]) -> Iterator[list[str]]:
    """Each sentence's tokens; a sentence the tokenizer refuses is named by its position."""
    for i, sentence in enumerate(sentences):
        try:
            yield tokenize(sentence)
        except ValueError as error:
            raise ValueError(f"sentences: sentence {i}: {error}") from None


class Vocab:
    """A fixed list of tokens; a token's id is its position in the list.

    tokens: every token once, non-empty, no whitespace, the four specials ``<pad> <bos> <eos>
    <unk>`` anywhere. Kept in NFC (:func:`~illustrated.data.tokenizer.normalize`), so a vocabulary
    saved with decomposed accents still matches typed words; ids never change.
    merge_forms: False refuses a word given twice; True accepts a word that two tokens spell in
    two Unicode forms, as a vocabulary saved before tokens were normalised may hold (an older
    checkpoint): every id keeps its place, and the word encodes as its first id; ``merged``
    maps each such word to its ids (empty otherwise).
    ``len(vocab)`` is the width of the logits; pad_id, bos_id, eos_id, unk_id; specials: their set.
    Raises ValueError if ``tokens`` is a str, or holds a non-str, empty or whitespace-containing
    token, a token twice after NFC (a special token even with ``merge_forms``), or misses a
    special token.
    Post "The Final Linear and Softmax Layer" (output vocabulary), "Recap Of Training" (one-hot
    encoding); paper §3.4 (embeddings and softmax share the vocabulary size).
    """

    def __init__(self, tokens: Sequence[str], *, merge_forms: bool = False) -> None:
        if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Iterable):
            raise ValueError(f"tokens: got {tokens!r:.80}, expected a sequence of str tokens")
        check_bool("merge_forms", merge_forms)
        tokens = list(tokens)
        seen: dict[str, int] = {}
        #: words that two tokens spell (in two Unicode forms) -> their ids, with merge_forms
        self.merged: dict[str, list[int]] = {}
        for i, token in enumerate(tokens):
            if not isinstance(token, str) or not token or any(c.isspace() for c in token):
                raise ValueError(f"tokens: got {token!r:.60} at position {i}, "
                                 "expected a non-empty str without spaces")
            token = tokens[i] = normalize(token)
            if token in seen:
                if not merge_forms or token in SPECIALS:
                    raise ValueError(f"tokens: got {token!r} twice (positions {seen[token]} and "
                                     f"{i}), expected every token once")
                self.merged.setdefault(token, [seen[token]]).append(i)  # the first id reads it
                continue
            seen[token] = i
        missing = [s for s in SPECIALS if s not in seen]
        if missing:
            raise ValueError(
                f"tokens: got no {missing}, expected all special tokens {list(SPECIALS)}")
        self.tokens: list[str] = tokens
        self._ids = seen
        self.pad_id: int = seen["<pad>"]
        self.bos_id: int = seen["<bos>"]
        self.eos_id: int = seen["<eos>"]
        self.unk_id: int = seen["<unk>"]
        self.specials: set[int] = {self.pad_id, self.bos_id, self.eos_id, self.unk_id}

    @classmethod
    def build(cls, sentences: Iterable[str], specials_first: bool = True) -> "Vocab":
        """The vocabulary of some sentences: the special tokens plus every word, sorted.

        specials_first: True gives ``<pad>, <bos>, <eos>, <unk>`` ids 0-3 and the words after; False
        puts the words first (ids from 0, as the post's figure), then the specials.
        Returns 4 + the distinct words (by ``tokenize``) tokens, the same for any sentence order.
        Raises ValueError if ``sentences`` is a str, or holds an empty sentence, a non-str or a
        special token as a word (naming the sentence's position); or ``specials_first`` is not a
        bool.
        Post "The Final Linear and Softmax Layer": the vocabulary is made in preprocessing.
        """
        if isinstance(sentences, (str, bytes)) or not isinstance(sentences, Iterable):
            raise ValueError(f"sentences: got {sentences!r:.80}, expected an iterable of str "
                             "sentences")
        check_bool("specials_first", specials_first)
        words: set[str] = set()
        for tokens in tokens_of(sentences):
            words.update(tokens)
        ordered = sorted(words)
        return cls([*SPECIALS, *ordered] if specials_first else [*ordered, *SPECIALS])

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and (word in self._ids or normalize(word) in self._ids)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocab):
            return NotImplemented
        return self.tokens == other.tokens

    __hash__ = None  # type: ignore[assignment]  # mutable list inside: unhashable, like a list

    def __repr__(self) -> str:
        head = ", ".join(repr(t) for t in self.tokens[:6])
        more = ", ..." if len(self.tokens) > 6 else ""
        return f"Vocab(size={len(self)}, pad_id={self.pad_id}, tokens=[{head}{more}])"

    def index(self, word: str) -> int:
        """Id of one token (special tokens included, NFC applied); ``unk_id`` for an unknown word.

        Raises ValueError if ``word`` is not a str. Post "Recap Of Training" (one-hot cell).
        """
        if not isinstance(word, str):
            raise ValueError(f"word: got {type(word).__name__} {word!r:.60}, expected a str")
        i = self._ids.get(word)
        return self._ids.get(normalize(word), self.unk_id) if i is None else i

    def token(self, id: int) -> str:  # noqa: A002 - the natural name
        """The token with id ``id`` (a Python, NumPy or 0-d tensor integer in ``[0, len(self))``).

        Raises ValueError if ``id`` is not an integer or lies outside that range. Post "The Final
        Linear and Softmax Layer" (the argmax cell names the output word).
        """
        return self.tokens[self._check_id(id, "id")]

    def encode(self, sentence: str) -> list[int]:
        """Token ids (n_words,) of a sentence, no ``<bos>``/``<eos>``; unknown words: ``unk_id``.

        Raises ValueError if ``sentence`` is not a str, is empty, or has a special token as a word.
        Post "Bringing The Tensors Into The Picture" (words become ids, then embeddings).
        """
        return [self._ids.get(t, self.unk_id) for t in tokenize(sentence)]

    def decode(self, ids: Any) -> str:
        """The sentence spelled by some ids, special tokens dropped (joined by ``detokenize``).

        ids (seq,): a list or tuple of ints, or a 1-D tensor or array.
        Raises ValueError for ids that are not 1-D, not integers, or outside ``[0, len(self))``.
        Post "The Final Linear and Softmax Layer" (ids back to words).
        """
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise ValueError(f"ids: got {ids!r:.80}, expected a 1-D sequence of int token ids")
        words = []
        for i in ids:
            i = self._check_id(i, "ids")
            if i not in self.specials:
                words.append(self.tokens[i])
        return detokenize(words)

    def to_dict(self) -> dict[str, list[str]]:
        """``{"tokens": [...]}``, plain JSON-able data for a checkpoint (:meth:`from_dict` reads it)."""
        return {"tokens": list(self.tokens)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Vocab":
        """Rebuild a vocabulary saved with :meth:`to_dict`.

        Raises ValueError if ``data`` is not a dict with a ``"tokens"`` list, or the tokens are
        invalid (see :class:`Vocab`).
        """
        if not isinstance(data, dict) or "tokens" not in data:
            raise ValueError(f"data: got {data!r:.80}, expected a dict with a 'tokens' list")
        return cls(data["tokens"])

    def _check_id(self, value: Any, name: str) -> int:
        """``value`` as an int id in ``[0, len(self))``; ValueError naming ``name`` otherwise."""
        if hasattr(value, "tolist") and not isinstance(value, (list, tuple)):
            value = value.tolist()  # NumPy scalar or 0-d tensor -> Python number
        if isinstance(value, bool):
            raise ValueError(f"{name}: got the bool {value!r}, expected an int token id")
        try:
            i = operator.index(value)
        except TypeError:
            raise ValueError(f"{name}: got {type(value).__name__} {value!r:.60}, "
                             f"expected an int token id") from None
        if not 0 <= i < len(self.tokens):
            raise ValueError(f"{name}: got id {i}, expected an id in [0, {len(self.tokens)})")
        return i


def encode_sentence(vocab: Vocab, text: str, allow_unk: bool = False, *,
                    name: str = "sentence") -> list[int]:
    """The token ids of a sentence, refusing words the vocabulary does not know (unless allowed).

    The one place where a chapter's sentence becomes ids (:func:`illustrated.trace` goes through
    it), so unknown words are treated alike everywhere.
    text: at least one word, no special token. allow_unk: False makes an unknown word an error
    (its vectors would be ``<unk>``'s); True maps it to ``unk_id`` as :meth:`Vocab.encode`; a
    Python or NumPy bool (``'no'`` is refused). name: the argument's name in error messages.
    Returns one id per word of ``tokenize(text)``, (n_words,), no ``<bos>``/``<eos>``.
    Raises ValueError if ``vocab`` is not a Vocab, ``text`` not a non-empty str or has a special
    token as a word, ``allow_unk`` not a bool (also a TypeError), or, with ``allow_unk=False``, a
    word is unknown (the message names the words).
    Post "Bringing The Tensors Into The Picture" (words become ids, then embeddings).
    """
    if not isinstance(vocab, Vocab):
        raise ValueError(f"vocab: expected an illustrated.data.Vocab, got {type(vocab).__name__}")
    check_bool("allow_unk", allow_unk)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name}: expected a non-empty str, got {text!r:.60}")
    words = tokenize(text, name=name)
    ids = [vocab.index(w) for w in words]
    if not allow_unk:
        unknown = [w for w, i in zip(words, ids) if i == vocab.unk_id]
        if unknown:
            raise ValueError(f"{name}: has words the vocabulary does not know ({unknown}), "
                             f"expected only known words")
    return ids


def check_vocab_fits(name: str, vocab: object, size: int, pad_id: int) -> Vocab:
    """``vocab`` if it is a Vocab of ``size`` tokens with ``<pad>`` at ``pad_id`` (the model's
    config: ``cfg.src_vocab_size, cfg.pad_id`` or ``cfg.tgt_vocab_size, cfg.tgt_pad_id``).

    The one check that a vocabulary fits a model, for training, inference, checkpoints and
    tracing. Raises ValueError naming ``name`` (an ArgumentTypeError, also a TypeError, for a
    non-Vocab): ``"src_vocab: expected the model's vocabulary of 12 tokens, got 9 tokens"``.
    """
    if not isinstance(vocab, Vocab):
        raise ArgumentTypeError(f"{name}: expected an illustrated.data.Vocab, got "
                                f"{type(vocab).__name__}")
    if len(vocab) != size:
        raise ValueError(f"{name}: expected the model's vocabulary of {size} tokens, got "
                         f"{len(vocab)} tokens")
    if vocab.pad_id != pad_id:
        raise ValueError(f"{name}: expected <pad> at id {pad_id} as in the model's config, got "
                         f"<pad> at id {vocab.pad_id}")
    return vocab
