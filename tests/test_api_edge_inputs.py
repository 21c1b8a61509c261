"""The last round's unclear inputs (issue 35, item 6), each now one line naming the argument:
a pairs-file side of invisible characters only, NaN in a query or the memory, an output name
that is not UTF-8, a NumPy seed when retraining, a model on the meta device traced, a checkpoint
whose folder cannot be searched, a torchrun timeout past what the process group holds. (A
negative Adam second moment in a resumed file: tests/files/test_training_state.py.)"""

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated import pretrained_models
from illustrated.training import distributed
from illustrated.files import atomic as _atomic
from illustrated.files import checkpoint
from illustrated.data.pairs_file import read_pairs
from illustrated.modules import MultiHeadAttention

GOOD = "".join(f"le chat {i}\tthe cat {i}\n" for i in range(12))


@pytest.mark.parametrize("invisible", ["\u200b", "\u200d", "\ufeff", "\u0301", "\u200b\u200c"])
@pytest.mark.parametrize("side", ["source", "target"])
def test_a_side_of_invisible_characters_only_is_refused(tmp_path, invisible, side):
    path = tmp_path / "pairs.tsv"
    line = f"{invisible}\tthe cat" if side == "source" else f"le chat\t{invisible}"
    path.write_text(GOOD + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        read_pairs(path)
    codes = " ".join(f"U+{ord(c):04X}" for c in invisible)
    assert str(info.value).startswith(f"{path}:13: expected a {side} with a visible character, "
                                      f"got only invisible ones ({codes}")
    assert "\n" not in str(info.value)


def test_a_word_with_an_invisible_character_inside_still_reads(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text(GOOD + "le\u200bchat\tthe cat\n", encoding="utf-8")
    assert read_pairs(path)[-1][0] == "le\u200bchat"


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
@pytest.mark.parametrize("where", ["query", "key", "value"])
def test_nan_in_a_query_key_or_value_is_refused(bad, where):
    mha = MultiHeadAttention(16, 4).eval()
    inputs = {name: torch.randn(2, 3, 16) for name in ("query", "key", "value")}
    inputs[where][1, 2, 5] = bad
    with pytest.raises(ValueError, match=rf"^{where}: expected finite numbers, got NaN or "
                                         rf"infinity$"):
        mha(inputs["query"], inputs["key"], inputs["value"])


def test_a_nan_memory_from_the_model_is_blamed_on_the_model():
    """Transformer.decode leaves the memory unread (decoding calls it at every step with the
    model's own): the decoding loop refuses the NaN scores, naming the model."""
    model, src_vocab, tgt_vocab = il.pretrained("post")
    with torch.no_grad():
        model.src_embed.lut.weight.fill_(float("nan"))
    with pytest.raises(ValueError, match=r"^model: its scores for the next token are NaN"):
        il.greedy_decode(model, [4, 5], bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)


def test_the_meta_device_still_gives_shapes():
    with torch.device("meta"):
        mha = MultiHeadAttention(16, 4)
        x = torch.empty(2, 3, 16)
    assert mha(x, x, x).shape == (2, 3, 16)


def test_an_output_name_that_is_not_utf8_is_refused(tmp_path):
    path = str(tmp_path) + "/model-\udcff.pt"  # the byte 0xff, as the system hands it over
    with pytest.raises(ValueError) as info:
        _atomic.check_writable(path, "--out")
    assert str(info.value) == (f"--out: expected a path in UTF-8, got {ascii(path)} (a byte that "
                               f"is not UTF-8: rename it)")
    assert str(info.value).isascii()


def test_a_numpy_seed_reaches_retraining_as_an_int(monkeypatch):
    seen = {}

    def train_corpus(corpus, *, seed, **kwargs):
        seen["seed"] = seed
        return il.pretrained(corpus) + (None,)
    monkeypatch.setattr(pretrained_models, "train_corpus", train_corpus)
    il.pretrained("post", retrain=True, seed=np.int64(1))
    assert type(seen["seed"]) is int and seen["seed"] == 1


def test_tracing_a_model_on_the_meta_device_is_refused():
    model, src_vocab, tgt_vocab = il.pretrained("post")
    meta = model.to("meta")
    with pytest.raises(ValueError, match=r"^model: expected a model whose weights are in memory "
                                         r"\(CPU or GPU\), got one on the meta device"):
        il.trace(meta, "je suis étudiant", src_vocab=src_vocab, tgt_vocab=tgt_vocab)


def test_a_checkpoint_whose_folder_cannot_be_searched_is_not_called_missing(tmp_path,
                                                                            monkeypatch):
    """As a folder of mode 000 does for anyone but root (simulated: root passes chmod)."""
    path = tmp_path / "locked" / "model.pt"

    def lstat(target, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(target))
    monkeypatch.setattr(checkpoint.os, "lstat", lstat)
    with pytest.raises(ValueError) as info:
        il.load_checkpoint(path)
    assert str(info.value) == (f"path: cannot read '{path}' (Permission denied; its folder "
                               f"cannot be searched)")


def test_a_missing_checkpoint_is_still_called_missing(tmp_path):
    with pytest.raises(ValueError, match=r"^path: no checkpoint file at"):
        il.load_checkpoint(tmp_path / "none.pt")


@pytest.mark.parametrize("timeout", [1e300, 7 * 86400 + 1, float("inf")])
def test_a_timeout_past_a_week_is_refused_before_joining(timeout, monkeypatch):
    monkeypatch.setattr(distributed.dist, "init_process_group",
                        lambda *a, **k: pytest.fail("joined"))
    with pytest.raises(ValueError, match=r"^timeout: expected a .*number of seconds"):
        distributed.init("cpu", timeout=timeout)
