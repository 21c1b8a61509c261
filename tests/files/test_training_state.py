"""Resuming checks what it resumes: every training checkpoint carries the sha256 of its data
(each side's sentences as ids and each vocabulary) and of each of its fields; `--resume` refuses
another config, other data or another recipe, field by field, or a field changed after the file
was written, each by name and file; a hand-made state that does not fit (a bad step, recipe,
batch order, RNG state, history or optimizer state) is one ValueError naming the file and the
field, never an IndexError or a RuntimeError from torch or NumPy. Hypothesis tampers at random:
the run then either goes on exactly as the uninterrupted run did, or stops with one such
ValueError. With the "it" objective on (referent_weight), its read-out and the read-out's Adam
state resume bit for bit too, are checked as the other fields are, and a run resumed with the
objective switched is refused by referent_weight."""
import math
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import illustrated as il
from illustrated.commands import cli
from illustrated.files import training_state
from illustrated.data.pairs_file import build_vocab

PAIRS = [(f"{s} {v} {o} .", f"{es} {ev} {eo} .")
         for s, es in (("je", "i"), ("il", "he"), ("nous", "we"))
         for v, ev in (("mange", "eat"), ("voit", "see"))
         for o, eo in (("la pomme", "the apple"), ("le chat", "the cat"))]  # 12 pairs
SRC, TGT = build_vocab([s for s, _ in PAIRS]), build_vocab([t for _, t in PAIRS])
RECIPE = {"steps": 12, "batch_size": 5, "lr": 3e-3, "warmup": 2, "device": "cpu",
          "progress": False, "schedule": "cosine", "label_smoothing": 0.1, "seed": 3}


def fresh(seed=0):
    il.set_seed(seed)
    return il.modules.Transformer(replace(il.TINY, src_vocab_size=len(SRC),
                                          tgt_vocab_size=len(TGT), dropout=0.1))


@pytest.fixture(scope="module")
def straight():
    model = fresh()
    history = il.train(model, PAIRS, SRC, TGT, **RECIPE)
    return history, model.state_dict()


@pytest.fixture(scope="module")
def saved(tmp_path_factory, kill_at):
    """A run killed at step 7 whose checkpoint of step 6 is left (mid-epoch)."""
    path = tmp_path_factory.mktemp("resume") / "run.pt"
    with pytest.raises(kill_at.error):
        il.train(fresh(), PAIRS, SRC, TGT, **RECIPE, checkpoint_every=3, checkpoint_path=path,
                 callback=kill_at(7))
    return path


def resume(path, pairs=PAIRS, src=SRC, tgt=TGT, **changes):
    model = fresh(seed=9)
    history = il.train(model, pairs, src, tgt, **{**RECIPE, **changes}, resume=path)
    return history, model.state_dict()


def rewrite(source, target, change, *, recompute=True):
    """Copy the checkpoint with ``change(training)`` applied; with ``recompute``, its checksums
    are made to match again (a hand-made state), else left as they were (a tampered one)."""
    data = torch.load(source, weights_only=True)
    training = data["training"]
    change(training)
    if recompute:
        body = {k: v for k, v in training.items() if k != "digest"}
        training["digest"] = training_state.digests(body, data["state_dict"])
    torch.save(data, target)
    return target


def test_an_untouched_checkpoint_resumes_to_the_uninterrupted_run(saved, straight):
    history, state = resume(saved)
    assert history.loss == straight[0].loss and history.lr == straight[0].lr
    assert all(torch.equal(state[k], v) for k, v in straight[1].items())


def test_other_data_of_the_same_vocabulary_is_refused_by_name_and_file(saved):
    """Before: IndexError at training.py:493 (the batch order pointed past the new pairs)."""
    for other in (PAIRS[:7], PAIRS[::-1]):  # fewer pairs, the same pairs in another order
        with pytest.raises(ValueError) as info:
            resume(saved, pairs=other)
        assert str(info.value) == (f"resume: '{saved}' was trained on other data: its source "
                                   f"sentences and target sentences differ from these (the same "
                                   f"pairs, min count, test split and seed?)")


def _other_target(pairs):
    """The pairs with one target word changed ("cat" for "apple" in the first pair)."""
    (source, target), *rest = pairs
    return [(source, target.replace("apple", "cat")), *rest]


def _other_source(pairs):
    (source, target), *rest = pairs
    return [(source.replace("la pomme", "le chat"), target), *rest]


def _swapped(vocab, a, b):
    """The vocabulary with the words ``a`` and ``b`` swapped: same size, other ids."""
    tokens = list(vocab.tokens)
    i, j = tokens.index(a), tokens.index(b)
    tokens[i], tokens[j] = tokens[j], tokens[i]
    return il.data.Vocab(tokens)


# Either side of the data, on its own: (what changes, pairs, src_vocab, tgt_vocab, the parts named)
DATA_CHANGES = [
    ("a source sentence", _other_source(PAIRS), SRC, TGT, "source sentences"),
    ("a target sentence", _other_target(PAIRS), SRC, TGT, "target sentences"),
    ("the source vocabulary's order", PAIRS, _swapped(SRC, "je", "il"), TGT,
     "source sentences and source vocabulary"),
    ("the target vocabulary's order", PAIRS, SRC, _swapped(TGT, "he", "we"),
     "target sentences and target vocabulary"),
]


@pytest.mark.parametrize("what, pairs, src, tgt, parts", DATA_CHANGES,
                         ids=[c[0] for c in DATA_CHANGES])
def test_either_side_of_the_data_is_compared_on_its_own(saved, what, pairs, src, tgt, parts):
    with pytest.raises(ValueError) as info:
        resume(saved, pairs=pairs, src=src, tgt=tgt)
    assert str(info.value) == (f"resume: '{saved}' was trained on other data: its {parts} "
                               f"differ from these (the same pairs, min count, test split and "
                               f"seed?)")


# The saved run's recipe, and one keyword of it changed at a time, as a caller would pass it.
SAVED_RECIPE = {"lr": 3e-3, "warmup": 2, "schedule": "cosine", "label_smoothing": 0.1,
                "batch_size": 5, "clip_grad": 1.0, "seed": 3, "grad_accum_steps": 1,
                "precision": "fp32"}
RECIPE_CHANGES = {"lr": 1e-3, "warmup": 3, "schedule": "noam", "label_smoothing": 0.2,
                  "batch_size": 4, "clip_grad": 0.5, "seed": 4, "grad_accum_steps": 2,
                  "precision": "bf16"}


@pytest.mark.parametrize("key", RECIPE_CHANGES)
def test_another_recipe_is_refused_field_by_field(saved, key):
    value = RECIPE_CHANGES[key]
    with pytest.raises(ValueError) as info:
        resume(saved, **{key: value})
    assert str(info.value) == (f"{key}: expected {SAVED_RECIPE[key]!r} as in the run being "
                               f"resumed ('{saved}'), got {value!r}")


def test_a_run_of_another_number_of_processes_is_refused(saved, monkeypatch):
    """The recipe's last field: the checkpoint of one process, resumed under two."""
    monkeypatch.setattr(il.training.distributed, "process_group", lambda distributed: (0, 2, True))
    monkeypatch.setattr(torch.distributed, "get_backend", lambda: "gloo", raising=False)
    with pytest.raises(ValueError) as info:
        resume(saved)
    assert str(info.value) == (f"processes: expected 1 as in the run being resumed ('{saved}'), "
                               f"got 2")


def _config_change(field):
    """A model whose config differs from the checkpoint's in ``field`` only, with the pairs and
    vocabularies that fit it (a vocabulary size or pad id needs vocabularies of its own)."""
    base = fresh().cfg
    src, tgt = SRC, TGT
    if field == "src_vocab_size":
        src = il.data.Vocab([*SRC.tokens, "zzz"])
    elif field == "tgt_vocab_size":
        tgt = il.data.Vocab([*TGT.tokens, "zzz"])
    elif field == "pad_id":
        src = _swapped(SRC, "<pad>", "je")
    elif field == "tgt_pad_id":
        tgt = _swapped(TGT, "<pad>", "he")
    other = {"d_model": 64, "n_heads": 2, "d_ff": 32, "n_layers": 1, "dropout": 0.2,
             "max_len": 32, "norm_first": True, "pe_layout": "concatenated",
             "src_vocab_size": len(src), "tgt_vocab_size": len(tgt), "pad_id": src.pad_id,
             "tgt_pad_id": tgt.pad_id}
    il.set_seed(0)
    return il.modules.Transformer(replace(base, **{field: other[field]})), src, tgt, \
        getattr(base, field), other[field]


@pytest.mark.parametrize("field", [f.name for f in __import__("dataclasses").fields(il.TINY)])
def test_another_config_is_refused_field_by_field(saved, field):
    model, src, tgt, was, now = _config_change(field)
    with pytest.raises(ValueError) as info:
        il.train(model, PAIRS, src, tgt, **RECIPE, resume=saved)
    assert str(info.value) == (f"resume: '{saved}' holds a model of another config: "
                               f"{field}={was!r} (model: {now!r})")


@pytest.mark.parametrize("field", training_state.TRAINING_KEYS)
def test_a_field_changed_after_writing_is_refused_by_name(saved, tmp_path, field):
    def change(training):
        value = training[field]
        if isinstance(value, torch.Tensor):
            value[0] ^= 1
        elif field == "step":
            training[field] = value + 1
        elif field == "data":
            training[field] = "0" * 64
        elif field == "order":
            value.reverse()
        elif field == "rng":
            value["python"][1][5] += 1
        elif field == "history":
            value["loss"][0] += 1e-9
        elif field == "recipe":
            value["lr"] = 1e-3
        elif field == "optimizer":
            value["state"][0]["exp_avg"][0] += 1
    path = rewrite(saved, tmp_path / "t.pt", change, recompute=False)
    with pytest.raises(ValueError) as info:
        resume(path)
    assert str(info.value) == (f"resume: '{path}' has a damaged training state: field {field!r} "
                               f"was changed after the checkpoint was written (its sha256 does "
                               f"not match)")


@pytest.mark.parametrize("digests, message", [
    (True, "is damaged: tensor 'generator.proj.bias' does not match its sha256 in the file"),
    (False, "the model's weights were changed after the checkpoint was written")])
def test_changed_weights_are_refused(saved, tmp_path, digests, message):
    data = torch.load(saved, weights_only=True)
    data["state_dict"]["generator.proj.bias"][0] += 1
    if not digests:  # a checkpoint written before tensors carried digests
        del data["digests"]
    torch.save(data, tmp_path / "w.pt")
    with pytest.raises(ValueError, match=message):
        resume(tmp_path / "w.pt")


def set_in(path_in_training, value):
    def change(training):
        target = training
        for key in path_in_training[:-1]:
            target = target[key]
        target[path_in_training[-1]] = value(target[path_in_training[-1]]) if callable(value) \
            else value
    return change


# (what is changed, the change, the field named, what the message says): each hand-made state
# used to give IndexError, torch's generator RuntimeError, NumPy's IndexError or no error at all
HAND_MADE = [
    ("step 0", set_in(["step"], 0), "step", "expected an integer >= 1, got 0"),
    ("step True", set_in(["step"], True), "step", "expected an integer >= 1, got True"),
    ("step beyond the history", set_in(["step"], 7), "history",
     "expected 7 numbers in 'loss' (one per step done)"),
    ("NaN loss", set_in(["history", "loss", 2], math.nan), "history",
     "expected finite numbers in 'loss', got nan at step 3"),
    ("infinite lr", set_in(["history", "lr", 0], math.inf), "history",
     "expected finite numbers in 'lr', got inf at step 1"),
    ("order past the pairs", set_in(["order"], [0, 12]), "order",
     "expected fewer than 12 distinct indices below 12"),
    ("order repeats", set_in(["order"], [1, 1]), "order",
     "expected a list of distinct pair indices >= 0"),
    ("order negative", set_in(["order"], [-1]), "order",
     "expected a list of distinct pair indices >= 0"),
    ("order as floats", set_in(["order"], [1.0]), "order",
     "expected a list of distinct pair indices >= 0"),
    ("generator cut short", set_in(["generator"], lambda g: g[:100]), "generator",
     "a generator state torch refuses"),
    ("generator of floats", set_in(["generator"], lambda g: g.float()), "generator",
     "expected a generator state (a uint8 tensor)"),
    ("torch RNG cut short", set_in(["rng", "torch"], lambda g: g[:-1]), "rng",
     "a generator state torch refuses"),
    ("python RNG short", set_in(["rng", "python", 1], lambda keys: keys[:10]), "rng",
     "a Python or NumPy state that cannot be restored"),
    ("numpy RNG position", set_in(["rng", "numpy", 2], 10**6), "rng",
     "a Python or NumPy state that cannot be restored"),
    ("numpy key of 33 bits", set_in(["rng", "numpy", 1], lambda mt: mt + 2**32), "rng",
     "a Python or NumPy state that cannot be restored"),
    ("rng without cuda", set_in(["rng"], lambda r: {k: v for k, v in r.items() if k != "cuda"}),
     "rng", "expected a dict of the states"),
    ("Adam moment of another shape", set_in(["optimizer", "state", 0, "exp_avg"],
                                            lambda t: t[:1]), "optimizer",
     "'exp_avg' of parameter 0 is not a finite tensor of shape"),
    ("Adam moment NaN", set_in(["optimizer", "state", 1, "exp_avg_sq"],
                               lambda t: t * math.nan), "optimizer",
     "'exp_avg_sq' of parameter 1 is not a finite tensor"),
    ("Adam second moment negative", set_in(["optimizer", "state", 1, "exp_avg_sq"],
                                           lambda t: t - 1.0), "optimizer",
     "'exp_avg_sq' of parameter 1 holds a negative number (Adam's second moment"),
    ("Adam without groups", set_in(["optimizer", "param_groups"], []), "optimizer",
     "expected Adam's state of the model's"),
    ("Adam with amsgrad", set_in(["optimizer", "param_groups", 0, "amsgrad"], True), "optimizer",
     "'amsgrad' is True, Adam here has False"),
    ("Adam betas", set_in(["optimizer", "param_groups", 0, "betas"], (0.9, 0.999)), "optimizer",
     "'betas' is (0.9, 0.999), Adam here has (0.9, 0.98)"),
    ("recipe without a key", set_in(["recipe"], lambda r: {k: v for k, v in r.items()
                                                           if k != "seed"}),
     "recipe", "has no 'seed'"),
    # a recipe il.train would refuse is a damaged file, not a value the user should pass
    ("recipe lr -1", set_in(["recipe", "lr"], -1.0), "recipe",
     "lr: expected a learning rate > 0.0, got -1.0"),
    ("recipe lr NaN", set_in(["recipe", "lr"], math.nan), "recipe",
     "lr: expected a finite learning rate > 0.0, got nan"),
    ("recipe batch_size 0", set_in(["recipe", "batch_size"], 0), "recipe",
     "batch_size: expected an integer >= 1, got 0"),
    ("recipe schedule unknown", set_in(["recipe", "schedule"], "triangle"), "recipe",
     "schedule: expected one of ('constant', 'noam', 'cosine'), got 'triangle'"),
    ("recipe with an unknown key", set_in(["recipe"], lambda r: {**r, "momentum": 0.9}),
     "recipe", "expected the keywords"),
    ("data of the wrong shape", set_in(["data"], {"sources": "0" * 64}), "data",
     "expected the sha256 in hex of source sentences"),
]


@pytest.mark.parametrize("what, change, field, says", HAND_MADE, ids=[h[0] for h in HAND_MADE])
def test_a_hand_made_state_that_does_not_fit_is_one_value_error(saved, tmp_path, what, change,
                                                               field, says):
    path = rewrite(saved, tmp_path / "h.pt", change)
    with pytest.raises(ValueError) as info:
        resume(path)
    message = str(info.value)
    assert message.startswith(f"resume: '{path}' has a malformed training state: field "
                              f"{field!r}"), message
    assert says in message and "\n" not in message


def test_an_old_checkpoint_without_checksums_is_refused_clearly(saved, tmp_path):
    def strip(training):
        del training["digest"], training["data"]
    path = rewrite(saved, tmp_path / "old.pt", strip, recompute=False)
    with pytest.raises(ValueError, match=r"^resume: '.*old.pt' has a training state without "
                                         r"checksums or data fingerprint"):
        resume(path)


def test_the_command_line_names_resume_and_the_file(saved, tmp_path, capsys):
    pairs = tmp_path / "other.tsv"
    pairs.write_text("".join(f"{s}\t{t}\n" for s, t in PAIRS[:7]), encoding="utf-8")
    code = cli.main(["train", "--pairs", str(pairs), "--steps", "20", "--device", "cpu",
                     "--resume", str(saved), "--out", str(tmp_path / "m.pt")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: --resume: '{saved}' ")


# ---- Hypothesis: random tampering of a checkpoint's resume fields

def _flip(tensor, index):
    tensor = tensor.clone()
    flat = tensor.view(-1)
    flat[index % flat.numel()] += 1
    return tensor


TAMPERINGS = {
    "step": lambda t, n: t.__setitem__("step", n),
    "order": lambda t, n: t.__setitem__("order", t["order"][n % 5:] + t["order"][:n % 5]),
    "order value": lambda t, n: t["order"].__setitem__(n % max(len(t["order"]), 1), n)
    if t["order"] else None,
    "generator": lambda t, n: t.__setitem__("generator", _flip(t["generator"], n)),
    "torch rng": lambda t, n: t["rng"].__setitem__("torch", _flip(t["rng"]["torch"], n)),
    "python rng": lambda t, n: t["rng"]["python"][1].__setitem__(n % 625, n),
    "numpy rng": lambda t, n: t["rng"]["numpy"].__setitem__(2, n),
    "loss history": lambda t, n: t["history"]["loss"].__setitem__(
        n % len(t["history"]["loss"]), [math.nan, math.inf, -1.0, 0.0, 1e300][n % 5]),
    "recipe": lambda t, n: t["recipe"].__setitem__("batch_size", n),
    "adam moment": lambda t, n: t["optimizer"]["state"][n % 3].__setitem__(
        "exp_avg", _flip(t["optimizer"]["state"][n % 3]["exp_avg"], n)),
    "adam step": lambda t, n: t["optimizer"]["state"][0].__setitem__(
        "step", torch.tensor(float(n))),
    "data": lambda t, n: t.__setitem__("data", f"{n:064x}"),
}


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(TAMPERINGS)), n=st.integers(-3, 10**6),
       recompute=st.booleans())
def test_random_tampering_gives_the_uninterrupted_run_or_one_value_error(saved, straight, kind,
                                                                        n, recompute):
    """A tampered file (checksums left as written) gives the exact uninterrupted result (the
    change happened to change nothing) or one ValueError naming the file and the field. A
    hand-made one (checksums made to match) may train on other numbers, but never fails with
    anything but such a ValueError (no IndexError, no RuntimeError from torch or NumPy)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tampered.pt"
        shutil.copy(saved, path)
        original = torch.load(saved, weights_only=True)["training"]
        rewrite(saved, path, lambda t: TAMPERINGS[kind](t, n), recompute=recompute)
        changed = training_state.digests(
            {k: v for k, v in torch.load(path, weights_only=True)["training"].items()
             if k != "digest"}, {}) != training_state.digests(
            {k: v for k, v in original.items() if k != "digest"}, {})
        try:
            history, state = resume(path)
        except ValueError as error:
            message = str(error)
            assert "\n" not in message
            if message.startswith("resume:"):
                assert message.startswith(f"resume: '{path}' ") and "field '" in message \
                    or "trained on other data" in message, message
            else:  # a recipe field: named as the keyword it is
                assert message.startswith("batch_size: expected ") and message.endswith(
                    f" as in the run being resumed ('{path}'), got 5"), message
            assert changed or kind == "recipe", "an unchanged file was refused"
            return
        if not recompute or not changed:
            assert history.loss == straight[0].loss
            assert all(torch.equal(state[k], v) for k, v in straight[1].items())


# ---- the "it" objective (referent_weight > 0): its read-out and Adam state go on with the run

IT_RECIPE = {**RECIPE, "batch_size": 6, "referent_weight": 1.0}


def it_model(it_pairs, seed=0):
    _, src, tgt = it_pairs
    il.set_seed(seed)
    return il.modules.Transformer(replace(il.TINY, src_vocab_size=len(src),
                                          tgt_vocab_size=len(tgt), dropout=0.1))


def it_train(it_pairs, path, seed=0, **kwargs):
    """(history, weights, the training state written after the last step to ``path``)."""
    model = it_model(it_pairs, seed)
    history = il.train(model, *it_pairs, **{**IT_RECIPE, "checkpoint_every": 12,
                                            "checkpoint_path": path, **kwargs})
    return history, model.state_dict(), torch.load(path, weights_only=True)["training"]


@pytest.fixture(scope="module")
def it_straight(it_pairs, tmp_path_factory):
    return it_train(it_pairs, tmp_path_factory.mktemp("it") / "straight.pt")


@pytest.fixture(scope="module")
def it_saved(it_pairs, tmp_path_factory, kill_at):
    """A run with the objective on killed at step 7, its checkpoint of step 6 left."""
    path = tmp_path_factory.mktemp("it") / "run.pt"
    with pytest.raises(kill_at.error):
        il.train(it_model(it_pairs), *it_pairs, **IT_RECIPE, checkpoint_every=3,
                 checkpoint_path=path, callback=kill_at(7))
    return path


def test_the_it_objective_resumes_to_the_uninterrupted_run(it_pairs, it_saved, it_straight,
                                                          tmp_path):
    """Before: refused ("referent_weight: expected 0 when resuming"). Now the read-out's weights
    and its Adam state come back: the losses, the model and the read-out end bit for bit as in
    the run that was never stopped."""
    saved = torch.load(it_saved, weights_only=True)["training"]
    assert saved["step"] == 6 and set(saved[training_state.REFERENT_KEY]) == {
        "linear.weight", "linear.bias"}
    assert len(saved["optimizer"]["param_groups"]) == 2  # the model's, the read-out's
    history, state, final = it_train(it_pairs, tmp_path / "resumed.pt", seed=9, resume=it_saved)
    straight_history, straight_state, straight_final = it_straight
    assert history.loss == straight_history.loss and history.lr == straight_history.lr
    assert all(torch.equal(state[k], v) for k, v in straight_state.items())
    for key in (training_state.REFERENT_KEY, "optimizer", "rng", "generator", "order"):
        assert final["digest"][key] == straight_final["digest"][key], key
    # the read-out moved after the resume: it was trained, not merely carried along
    moved = final[training_state.REFERENT_KEY]["linear.weight"]
    assert not torch.equal(moved, saved[training_state.REFERENT_KEY]["linear.weight"])


def test_a_run_resumed_with_the_objective_switched_is_refused_by_referent_weight(saved, it_saved,
                                                                                 it_pairs):
    """On where the checkpoint had it off, off (or another weight) where it had it on: one
    error naming referent_weight, what the checkpoint's run had and what was passed."""
    with pytest.raises(ValueError) as info:
        resume(saved, referent_weight=1.0)
    assert str(info.value) == (f"referent_weight: expected 0.0 as in the run being resumed "
                               f"('{saved}'), got 1.0")
    for weight in (0.0, 0.5):
        with pytest.raises(ValueError) as info:
            il.train(it_model(it_pairs), *it_pairs,
                     **{**IT_RECIPE, "referent_weight": weight}, resume=it_saved)
        assert str(info.value) == (f"referent_weight: expected 1.0 as in the run being resumed "
                                   f"('{it_saved}'), got {weight}")



def test_the_command_line_goes_on_with_the_objective_and_names_its_flag(tmp_path, capsys):
    """`--corpus coreference` trains with the objective on (its preset's referent_weight 1.0):
    its checkpoint resumes, and a resume with `--referent-weight 0` names the flag."""
    out = tmp_path / "run.pt"
    common = ["train", "--corpus", "coreference", "--device", "cpu", "--checkpoint-every", "2"]
    assert cli.main([*common, "--steps", "2", "--out", str(out)]) == 0
    assert cli.main([*common, "--steps", "3", "--resume", str(out), "--out", str(out)]) == 0
    assert training_state.load_training_state(out)[3]["step"] == 3
    capsys.readouterr()
    code = cli.main([*common, "--steps", "4", "--referent-weight", "0", "--resume", str(out),
                     "--out", str(tmp_path / "other.pt")])
    assert code == 2
    assert capsys.readouterr().err == (f"error: --referent-weight: expected 1.0 as in the run "
                                       f"being resumed ('{out}'), got 0.0\n")
# (what is changed, which checkpoint, the change, the field named, what the message says)
IT_HAND_MADE = [
    ("read-out taken away", "it", lambda t: t.pop(training_state.REFERENT_KEY), "referent",
     "expected the read-out's weights, as the recipe's referent_weight is 1.0, got none"),
    ("read-out of another shape", "it", set_in([training_state.REFERENT_KEY, "linear.bias"],
                                               lambda b: b[:-1]), "referent",
     "expected the read-out's finite weight"),
    ("read-out NaN", "it", set_in([training_state.REFERENT_KEY, "linear.weight"],
                                  lambda w: w * math.nan), "referent",
     "expected the read-out's finite weight"),
    ("read-out's Adam group taken away", "it", set_in(["optimizer", "param_groups"],
                                                      lambda g: g[:1]), "optimizer",
     "and, as a second group, the read-out's 2"),
    ("read-out's Adam moment NaN", "it", lambda t: t["optimizer"]["state"][
        max(t["optimizer"]["state"])].__setitem__("exp_avg", torch.full((1,), math.nan)),
     "optimizer", "is not a finite tensor of shape"),
    ("read-out in a run without it", "off", lambda t: t.__setitem__(
        training_state.REFERENT_KEY, {"linear.weight": torch.zeros(2, 32),
                                      "linear.bias": torch.zeros(2)}), "referent",
     "expected no read-out, as the recipe's referent_weight is 0.0, got one"),
]


@pytest.mark.parametrize("what, which, change, field, says", IT_HAND_MADE,
                         ids=[h[0] for h in IT_HAND_MADE])
def test_a_hand_made_read_out_that_does_not_fit_is_one_value_error(saved, it_saved, it_pairs,
                                                                   tmp_path, what, which, change,
                                                                   field, says):
    path = rewrite(it_saved if which == "it" else saved, tmp_path / "h.pt", change)
    with pytest.raises(ValueError) as info:
        if which == "it":
            il.train(it_model(it_pairs), *it_pairs, **IT_RECIPE, resume=path)
        else:
            resume(path)
    message = str(info.value)
    assert message.startswith(f"resume: '{path}' has a malformed training state: field "
                              f"{field!r}"), message
    assert says in message and "\n" not in message


def test_a_read_out_changed_after_writing_is_refused_by_name(it_saved, it_pairs, tmp_path):
    def change(training):
        training[training_state.REFERENT_KEY]["linear.bias"][0] += 1
    path = rewrite(it_saved, tmp_path / "t.pt", change, recompute=False)
    with pytest.raises(ValueError) as info:
        il.train(it_model(it_pairs), *it_pairs, **IT_RECIPE, resume=path)
    assert str(info.value) == (f"resume: '{path}' has a damaged training state: field "
                               f"'referent' was changed after the checkpoint was written (its "
                               f"sha256 does not match)")
