"""The training widget's run bench (issue 33): names by what differs from the recipe, the
label-smoothing floor as the smoothed target's entropy, every run on one chart and in a table,
in the page's params and in the kernel twin."""
import json
import math

import numpy as np
import pytest

import illustrated as il
from illustrated.book import ch10, runs


@pytest.mark.parametrize("corpus", ["post", "fr-en"])
def test_the_floor_is_the_entropy_of_the_smoothed_target(corpus):
    V = len(il.data.load_corpus(corpus)[2])
    for i, floor in enumerate(runs.floors(corpus)):
        eps = i / 100
        right, other = 1 - eps + eps / V, eps / V  # closed form: one right word, V - 1 others
        want = -right * math.log(right) - (V - 1) * (other * math.log(other) if other else 0)
        assert floor == pytest.approx(want, abs=6e-5)
    assert runs.floors(corpus)[0] == 0.0


def test_the_frequency_only_loss_is_the_entropy_of_the_target_tokens():
    """The post's two targets, "i am a student" and "thanks", are 7 tokens with their <eos>:
    <eos> twice, five words once each."""
    want = -(2 / 7) * math.log(2 / 7) - 5 * (1 / 7) * math.log(1 / 7)
    assert runs.frequency_loss("post") == pytest.approx(want, abs=1e-4)
    # a corpus of more distinct words is harder to guess by frequency alone
    assert runs.frequency_loss("fr-en") > runs.frequency_loss("post")


def test_a_run_is_named_by_what_differs_from_the_recipe():
    recipe = {"corpus": "reverse", "steps": 200, "lr": 0.01, "schedule": "cosine",
              "labelSmoothing": 0.0, "normFirst": "post"}
    same = dict(recipe)
    assert runs.run_name(same, recipe) == "the recipe"
    assert runs.run_name(same, recipe, ["normFirst"]) == "post-LN"
    assert runs.run_name({**recipe, "lr": 0.01, "schedule": "noam", "normFirst": "pre"}, recipe) \
        == "noam, pre-LN"
    assert runs.run_name({**recipe, "labelSmoothing": 0.1, "lr": 0.003}, recipe) == \
        "lr 0.003, label smoothing 0.1"


def test_the_widget_carries_floors_and_the_comparison():
    page = ch10.train_widget("post", corpora=["post", "copy"],
                             compare=("labelSmoothing", [0.0, 0.1])).html()
    params = json.loads(page.split('data-params="')[1].split('"')[0].replace("&quot;", '"'))
    assert params["compare"] == {"option": "labelSmoothing", "values": [0.0, 0.1]}
    assert params["floors"]["post"] == runs.floors("post") and len(params["floors"]["copy"]) == 51
    assert params["baselines"] == {"post": runs.frequency_loss("post"),
                                   "copy": runs.frequency_loss("copy")}


def test_the_widget_carries_the_book_runs_of_its_recipes():
    """The reference curves drawn faint under a run: PyTorch's losses of each corpus's recipe
    and of each compared value, named as the page names such a run; a corpus too slow to train
    at build time (coreference, about 200 s) has none."""
    page = ch10.train_widget("post", corpora=["post", "copy", "coreference"],
                             compare=("labelSmoothing", [0.0, 0.1]), steps=30).html()
    params = json.loads(page.split('data-params="')[1].split('"')[0].replace("&quot;", '"'))
    refs = {r["name"]: r for r in params["references"]}
    assert list(refs) == ["copy, label smoothing 0", "post, label smoothing 0",
                          "post, label smoothing 0.1"]
    assert runs.reference_estimate("coreference", ch10.recipe("coreference")) > \
        runs.REFERENCE_BUDGET_S
    post = refs["post, label smoothing 0.1"]
    assert post["values"]["steps"] == 30 and len(post["losses"]) == 30
    want = runs.train_values("post", {**params["settings"]["post"], "labelSmoothing": 0.1})[2].loss
    assert post["losses"] == [round(float(x), 4) for x in want]
    assert len(refs["copy, label smoothing 0"]["losses"]) == ch10.recipe("copy")["steps"]
    assert refs["post, label smoothing 0"]["losses"][-1] < post["losses"][-1]  # no floor at 0


def test_the_kernel_twin_trains_pairs_typed_in_its_box(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    pairs = il.data.load_corpus("copy", "train")[0][:30]
    box = ch10._train_kernel("post", ["post"], {"post": ch10.recipe("post")},
                             {"ownPairs": True, "floors": {"post": runs.floors("post")}})
    choice, controls, buttons, typed = box.children[:4]
    train = buttons.children[0]
    choice.value = "pairs"
    assert typed.layout.display == "" and controls.children[0].value == 300  # the tiny preset
    controls.children[0].value = 20
    typed.value = "un\tone\nno tab here\n"
    train.click()
    assert "Not trained: line 2: expected 'source<TAB>target', got no tab in 'no tab here'" in \
        capsys.readouterr().out  # printed in the Output widget in a kernel
    typed.value = "\n".join(f"{s}\t{t}" for s, t in pairs)
    train.click()
    model, (src_vocab, tgt_vocab), cfg = il.load_checkpoint(tmp_path / "run1-pairs.pt")
    kept = il.data.pairs_file.split_pairs(pairs, seed=0)[0]
    assert src_vocab.tokens == il.data.pairs_file.build_vocab([s for s, _ in kept]).tokens
    assert cfg.d_model == 32 and box.children[-1].children[0].options == ("pairs, 20 steps",)


def test_every_run_on_one_chart_and_in_a_table(legible, width):
    kept = [{"name": "post-LN", "losses": [3.0, 2.0, 1.9], "floor": 0, "seconds": 1.5,
             "settings": "reverse", "exact_match": 0.0, "file": "run1.pt", "baseline": 2.5574},
            {"name": "pre-LN", "losses": [3.0, 1.0, 0.1], "floor": 0.7, "seconds": 1.6,
             "settings": "reverse, pre-LN", "exact_match": 0.73, "file": "run2.pt",
             "baseline": 2.5574}]
    fig = runs.draw_runs(kept, log=True, width=width)
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == [
        "post-LN", "pre-LN", "floor of pre-LN: 0.700",
        "knows only how often each token occurs: 2.557"]  # once for the two runs' corpus
    assert ax.get_xlabel() == "step" and ax.get_ylabel() == "loss (nats)" and ax.get_yscale() == "log"
    legible(fig, width)
    table = runs.table_html(kept)
    assert table.count("<tr>") == 3 and "73.0 %" in table and "0.100" in table


def test_the_kernel_twin_keeps_every_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    corpora = ["post"]
    settings = {"post": {**ch10.recipe("post"), "steps": 20}}
    params = {"floors": {"post": runs.floors("post")},
              "compare": {"option": "labelSmoothing", "values": [0.0, 0.1]}}
    box = ch10._train_kernel("post", corpora, settings, params)
    both = box.children[2].children[1]
    assert both.description == "Train label smoothing 0, then label smoothing 0.1"
    both.click()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["run1-post.pt", "run2-post.pt"]
    pick, remove, clear = box.children[-1].children
    assert list(pick.options) == ["label smoothing 0", "label smoothing 0.1"]
    pick.value = "label smoothing 0"
    remove.click()
    assert list(pick.options) == ["label smoothing 0.1"]
    clear.click()
    assert list(pick.options) == []
    model, _, cfg = il.load_checkpoint(tmp_path / "run2-post.pt")
    assert cfg.d_model == settings["post"]["dModel"]
    assert np.isfinite(next(model.parameters()).detach().numpy()).all()


def test_the_kernel_twins_it_switch(tmp_path, monkeypatch):
    """The twin offers the "it" objective where the corpus has labels, as the page does: on by
    the recipe for coreference, off and disabled for post; a run with it says so in its name
    and trains with the recipe's referent_weight, one without trains with 0."""
    monkeypatch.chdir(tmp_path)
    corpora = ["post", "coreference"]
    settings = {c: {**ch10.recipe(c), "steps": 5} for c in corpora}
    weights = []
    real = runs.train
    monkeypatch.setattr(runs, "train", lambda *a, **k: weights.append(k["referent_weight"])
                        or real(*a, **k))
    box = ch10._train_kernel("coreference", corpora, settings,
                             {"floors": {c: runs.floors(c) for c in corpora}})
    choice, controls, (train, _log), pick = (box.children[0], box.children[1].children,
                                             box.children[2].children, box.children[-1].children[0])
    switch = next(c for c in controls if "“it”" in c.description)
    assert switch.value and not switch.disabled
    train.click()
    switch.value = False
    train.click()
    assert weights == [settings["coreference"]["referentWeight"], 0.0] and weights[0] > 0
    assert list(pick.options) == ["coreference, “it” objective", "coreference, no “it” objective"]
    choice.value = "post"
    assert switch.disabled and not switch.value


def test_one_layer_and_one_head_are_said_in_the_singular():
    """A reader's finding: the runs table read "1 layers" (the page's runs.js says it the same way)."""
    assert [runs.say(k, 1) for k in ("nLayers", "nHeads", "steps")] == ["1 layer", "1 head", "1 step"]
    assert [runs.say(k, 2) for k in ("nLayers", "nHeads", "steps")] == ["2 layers", "2 heads", "2 steps"]
