"""Checkpoints under faults: saves are atomic, every malformed file is one ValueError naming it."""
import os
from dataclasses import replace

import pytest
import torch

import illustrated as il
from illustrated.files import atomic as _atomic
from illustrated.files import checkpoint


@pytest.fixture(scope="module")
def post():
    pairs, src_vocab, tgt_vocab = il.data.load_corpus("post")
    cfg = replace(il.TINY, src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab),
                  pad_id=src_vocab.pad_id, tgt_pad_id=tgt_vocab.pad_id)
    il.set_seed(0)
    return il.modules.Transformer(cfg), (src_vocab, tgt_vocab), cfg


@pytest.fixture
def good(tmp_path, post):
    model, vocabs, cfg = post
    path = tmp_path / "good.pt"
    il.save_checkpoint(path, model, vocabs, cfg)
    return path


def leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


class FullDisk:
    """The temporary file of the atomic writer on a disk with ``room`` bytes left: writing past
    them writes what fits, then raises as the kernel does (ENOSPC), or raises ``fault``."""

    def __init__(self, file, room, fault):
        self.file, self.room, self.fault = file, room, fault

    def write(self, data):
        fits = max(0, min(len(data), self.room))
        self.file.write(data[:fits])
        self.room -= fits
        if fits < len(data):
            raise self.fault
        return fits

    def __getattr__(self, name):
        return getattr(self.file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self.file.__exit__(*exc)


def full_disk(monkeypatch, room=665, fault=None):
    """Every write of the atomic writer fails after ``room`` bytes (665: what the issue found
    in place of a 202 KB file)."""
    fdopen = os.fdopen
    fault = fault or OSError(28, "No space left on device")
    monkeypatch.setattr(_atomic.os, "fdopen",
                        lambda *args, **kwargs: FullDisk(fdopen(*args, **kwargs), room, fault))


@pytest.mark.parametrize("fault", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_save_that_fails_part_way_leaves_the_old_file_byte_for_byte(good, post, monkeypatch,
                                                                      fault):
    before = good.read_bytes()
    model, vocabs, cfg = post
    full_disk(monkeypatch, fault=fault)
    with pytest.raises(ValueError if isinstance(fault, OSError) else KeyboardInterrupt) as info:
        il.save_checkpoint(good, model, vocabs, cfg)
    if isinstance(fault, OSError):
        assert str(info.value) == (f"path: could not write '{good}' (No space left on device); "
                                   f"any previous file there is unchanged")
    assert good.read_bytes() == before
    assert leftovers(good.parent) == []  # the temporary file is gone too


@pytest.mark.parametrize("fault", ["interrupt", "wrapped interrupt"])
def test_ctrl_c_inside_torch_save_is_a_keyboard_interrupt_and_nothing_is_written(good, post,
                                                                                 monkeypatch,
                                                                                 fault):
    """torch's zip writer turns a Ctrl-C in the middle of a record into its own RuntimeError
    ('[enforce fail at inline_container.cc:672] ... unexpected pos'): it is an interrupt."""
    before = good.read_bytes()
    model, vocabs, cfg = post

    def interrupted(obj, file):
        file.write(before[:665])
        if fault == "interrupt":
            raise KeyboardInterrupt
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos "
                               "128 vs 64") from None  # the context is kept, as torch keeps it

    monkeypatch.setattr(torch, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        il.save_checkpoint(good, model, vocabs, cfg)
    assert good.read_bytes() == before and leftovers(good.parent) == []


def test_atomic_write_replaces_only_on_success(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with _atomic.atomic_write(path) as f:
            f.write(b"new, but then")
            raise RuntimeError("boom")
    assert path.read_bytes() == b"old"
    with _atomic.atomic_write(path) as f:
        f.write(b"new")
    assert path.read_bytes() == b"new" and leftovers(tmp_path) == []
    mode = path.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # not mkstemp's private 0600


@pytest.mark.parametrize("where, match", [
    (lambda d: d / "missing" / "dir" / "m.pt", "does not exist"),
    (lambda d: d / "a_file" / "m.pt", "is a file"),
    (lambda d: d, "directory"),
])
def test_unwritable_targets_are_refused_before_anything_is_written(tmp_path, post, where, match):
    (tmp_path / "a_file").write_text("x")
    model, vocabs, cfg = post
    with pytest.raises(ValueError, match=rf"^path: .*{match}"):
        il.save_checkpoint(where(tmp_path), model, vocabs, cfg)


def test_a_directory_that_refuses_files_is_named(tmp_path, post, monkeypatch):
    """As a read-only directory does (chmod does not stop root, so the refusal is simulated)."""
    model, vocabs, cfg = post

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_atomic.tempfile, "mkstemp", refuse)
    with pytest.raises(ValueError, match=r"^path: cannot write in .*Permission denied"):
        il.save_checkpoint(tmp_path / "m.pt", model, vocabs, cfg)


def test_save_refuses_what_load_would_refuse(tmp_path, post):
    model, (src_vocab, tgt_vocab), cfg = post
    path = tmp_path / "m.pt"
    with pytest.raises(ValueError, match=r"^cfg: .*differs in d_model=64 \(model: 32\)"):
        il.save_checkpoint(path, model, (src_vocab, tgt_vocab), replace(cfg, d_model=64))
    _, other, _ = il.data.load_corpus("copy")
    with pytest.raises(ValueError, match=r"^vocabs: .*source vocabulary and a config that "
                                         r"disagree"):
        il.save_checkpoint(path, model, (other, tgt_vocab), cfg)
    with pytest.raises(TypeError, match=r"^vocabs: expected \(src_vocab, tgt_vocab\)"):
        il.save_checkpoint(path, model, src_vocab, cfg)
    broken = il.modules.Transformer(cfg)
    with torch.no_grad():
        broken.generator.proj.bias[0] = float("nan")
    with pytest.raises(ValueError, match=r"^model: non-finite weights: 'generator.proj.bias'"):
        il.save_checkpoint(path, broken, (src_vocab, tgt_vocab), cfg)
    assert not path.exists()


def test_round_trip_is_exact_and_eval_mode(good, post):
    model, vocabs, cfg = post
    loaded, loaded_vocabs, loaded_cfg = il.load_checkpoint(good)
    assert loaded_cfg == cfg and loaded_vocabs == vocabs and not loaded.training
    for (k, v), (k2, v2) in zip(loaded.state_dict().items(), model.state_dict().items()):
        assert k == k2 and torch.equal(v, v2)


def test_loading_consumes_the_random_numbers_it_always_did(good, post):
    """Building the model (Glorot init) draws from torch's generator: once, as before."""
    torch.manual_seed(5)
    il.load_checkpoint(good)
    after_load = torch.rand(3)
    torch.manual_seed(5)
    il.modules.Transformer(post[2])
    assert torch.equal(after_load, torch.rand(3))


@pytest.mark.parametrize("content, match", [
    (b"", "is empty"),
    (b"hello world\n" * 10, "is not an illustrated checkpoint"),
    (b"\x80\x02}q\x00.", "is not an illustrated checkpoint"),
    (bytes(range(256)) * 4, "is not an illustrated checkpoint"),
])
def test_files_that_are_not_checkpoints(tmp_path, content, match):
    path = tmp_path / "x.pt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=rf"^path: '{path}' {match}"):
        il.load_checkpoint(path)


@pytest.mark.parametrize("keep", [4, 100, 1000, 0.5, -10])
def test_truncated_files(tmp_path, good, keep):
    raw = good.read_bytes()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(raw[:int(len(raw) * keep) if isinstance(keep, float) else keep])
    with pytest.raises(ValueError, match=rf"^path: '{cut}' is truncated or damaged"):
        il.load_checkpoint(cut)


def test_missing_and_directory_paths(tmp_path):
    with pytest.raises(ValueError, match="no checkpoint file"):
        il.load_checkpoint(tmp_path / "nope.pt")
    with pytest.raises(ValueError, match="is a directory"):
        il.load_checkpoint(tmp_path)
    with pytest.raises(TypeError, match="^path: expected a file path"):
        il.load_checkpoint(42)


def test_the_weights_only_unpickler_still_guards(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"payload": object()}, path)
    with pytest.raises(ValueError, match="not an illustrated checkpoint"):
        il.load_checkpoint(path)


def bad_cases(data):
    cfg, state = data["config"], data["state_dict"]
    tgt = len(data["tgt_vocab"])
    return {
        "vocab shorter than config": ({"src_vocab": data["src_vocab"][:-1]},
                                      "source vocabulary and a config that disagree"),
        "pad ids disagree": ({"config": {**cfg, "tgt_pad_id": 1}},
                             "target vocabulary and a config that disagree"),
        "non-finite weight": ({"state_dict": {**state, "generator.proj.bias":
                                              torch.full((tgt,), float("inf"))}},
                              "non-finite weights: 'generator.proj.bias'"),
        "huge max_len": ({"config": {**cfg, "max_len": 4_000_000_000}}, "sizes out of range"),
        "huge vocabulary in config": ({"config": {**cfg, "tgt_vocab_size": 10**9}},
                                      "disagree"),
        "wider config": ({"config": {**cfg, "d_model": 64}},
                         "config and weights that disagree: 'src_embed.lut.weight' has shape"),
        "missing layer": ({"state_dict": {k: v for k, v in state.items() if "layers.1" not in k}},
                          "config and weights that disagree \\(missing"),
        "extra weight": ({"state_dict": {**state, "extra": torch.zeros(1)}},
                         "unexpected 'extra'"),
        "integer weights": ({"state_dict": {**state, "generator.proj.bias":
                                            torch.zeros(tgt, dtype=torch.long)}},
                            "wrong type: 'generator.proj.bias'"),
        "weights not a dict": ({"state_dict": [1, 2]}, "holds no weights"),
        "config not a dict": ({"config": "tiny"}, "holds no config"),
        "config field unknown": ({"config": {**cfg, "colour": "red"}}, "unknown field 'colour'"),
        "config field missing": ({"config": {k: v for k, v in cfg.items()
                                             if k != "src_vocab_size"}}, "invalid config"),
        "config field of the wrong type": ({"config": {**cfg, "norm_first": "yes"}},
                                           "invalid config \\(norm_first: expected True or False"),
        "vocabulary not a list": ({"src_vocab": "abc"}, "holds no source vocabulary"),
        "vocabulary without specials": ({"tgt_vocab": ["a", "b"]}, "invalid target vocabulary"),
        "other format": ({"format": "something/2"}, "expected format"),
    }


@pytest.mark.parametrize("case", list(bad_cases({"config": {}, "state_dict": {}, "tgt_vocab": [],
                                                  "src_vocab": []})))
def test_every_malformed_checkpoint_is_one_value_error_naming_the_file(tmp_path, good, case):
    data = torch.load(good, weights_only=True)
    changes, match = bad_cases(data)[case]
    path = tmp_path / "bad.pt"
    torch.save({**data, **changes}, path)
    with pytest.raises(ValueError, match=rf"^path: '{path}' .*{match}"):
        il.load_checkpoint(path)


def test_huge_config_sizes_are_refused_without_allocating(tmp_path, good):
    """A max_len of 4e9 would need a 128 GB table; the check comes before any allocation."""
    import resource
    data = torch.load(good, weights_only=True)
    path = tmp_path / "huge.pt"
    torch.save({**data, "config": {**data["config"], "max_len": 4_000_000_000,
                                   "src_vocab_size": 10**9}}, path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ValueError):
        il.load_checkpoint(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB
    assert checkpoint.MAX_POSITION_TABLE == 1 << 25


# ---- bounded reading: the file's type and size are checked before anything reads it

@pytest.mark.parametrize("target", ["/dev/zero", "link"])
def test_a_device_is_refused_by_type_without_reading_it(tmp_path, target):
    """/dev/zero (or a link to it) would be read until the machine runs out of memory."""
    path = tmp_path / "zero.pt"
    path.symlink_to("/dev/zero")
    shown = "/dev/zero" if target == "/dev/zero" else str(path)
    with pytest.raises(ValueError) as info:
        il.load_checkpoint(shown)
    assert str(info.value) == (f"path: '{shown}' is a character device, expected a checkpoint "
                               f"file")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "model.pt"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"is a FIFO \(named pipe\), expected a checkpoint file"):
        il.load_checkpoint(fifo)  # before: open() waited for a writer forever


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(good, monkeypatch):
    monkeypatch.setattr(checkpoint, "MAX_CHECKPOINT_BYTES", 1000)
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("read"))
    with pytest.raises(ValueError) as info:
        il.load_checkpoint(good)
    assert str(info.value) == (f"path: '{good}' is {good.stat().st_size / 1e3:.1f} kB, more "
                               f"than the 1.0 kB such a file may have")


def test_the_size_limit_holds_the_largest_model_with_its_training_state():
    """4 GiB: the largest model (2**28 float32 weights) and Adam's two moments are 3 GiB."""
    assert checkpoint.MAX_CHECKPOINT_BYTES == 1 << 32
    assert 3 * 4 * il._args.MAX_WEIGHTS < checkpoint.MAX_CHECKPOINT_BYTES


def test_extra_fields_may_not_replace_the_models_own(tmp_path, post):
    model, vocabs, cfg = post
    with pytest.raises(ValueError, match=r"^extra: expected a dict of fields other than"):
        il.save_checkpoint(tmp_path / "m.pt", model, vocabs, cfg, extra={"config": {}})
    assert not (tmp_path / "m.pt").exists()


# ---- an older checkpoint whose vocabulary spells a word in two Unicode forms

def older_checkpoint_with_both_forms(tmp_path, good):
    """As a version before the vocabulary was normalised wrote it: 'é' precomposed (NFC) at one
    id, 'e' + combining acute (NFD) at another."""
    data = torch.load(good, weights_only=True)
    tokens = data["src_vocab"]
    nfc, nfd = "\u00e9t\u00e9", "e\u0301te\u0301"
    tokens[-2], tokens[-1] = nfd, nfc  # two words of the file replaced, ids kept
    path = tmp_path / "older.pt"
    torch.save(data, path)
    return path, len(tokens) - 2, len(tokens) - 1


def test_an_older_checkpoint_with_a_word_in_both_unicode_forms_loads_with_one_warning(tmp_path,
                                                                                    good):
    """The README promises that older checkpoints load; before, 'got 'été' twice' refused it."""
    path, first, second = older_checkpoint_with_both_forms(tmp_path, good)
    with pytest.warns(checkpoint.VocabularyFormsWarning) as caught:
        model, (src_vocab, _), _ = il.load_checkpoint(path)
    [warning] = caught
    assert str(warning.message) == (
        f"'{path}': its source vocabulary spells 'été' in two Unicode forms (ids {first}, "
        f"{second}); typed words read as id {first} (written before tokens were normalised)")
    assert len(src_vocab) == model.cfg.src_vocab_size  # every id kept: the model fits
    assert src_vocab.encode("été") == [first] and src_vocab.encode("e\u0301te\u0301") == [first]
    assert src_vocab.decode([first, second]) == "été été"
    assert src_vocab.merged == {"été": [first, second]}


def test_the_command_line_shows_that_warning_in_one_line(tmp_path, good, capsys):
    from illustrated.commands import cli
    path, first, _ = older_checkpoint_with_both_forms(tmp_path, good)
    assert cli.main(["translate", "--model", str(path), "été"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: ") and err.count("\n") == 1 and "two Unicode forms" in err


def test_a_vocabulary_built_now_still_refuses_a_word_twice():
    with pytest.raises(ValueError, match=r"^tokens: got 'été' twice \(positions 4 and 5\)"):
        il.data.Vocab(["<pad>", "<bos>", "<eos>", "<unk>", "e\u0301te\u0301", "\u00e9t\u00e9"])
    with pytest.raises(ValueError, match=r"^tokens: got '<pad>' twice"):  # never a special
        il.data.Vocab(["<pad>", "<bos>", "<eos>", "<unk>", "<pad>"], merge_forms=True)


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
