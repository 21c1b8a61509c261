"""il.Recipe: every training choice declared once (default, limits, choices, the page's limits),
checked in one place, and followed by il.train, the presets, the command line, chapter 10 and
the schema the page reads."""
import dataclasses
import hashlib
import json
import types
from dataclasses import replace

import pytest

import illustrated as il
from illustrated.commands import cli
from illustrated import recipe as rc
from illustrated.commands import web_export
from illustrated.book import ch10
from illustrated.data.pairs_file import build_vocab

PAIRS = [("a b c", "c b a"), ("b c", "c b"), ("c a b a", "a b a c"), ("a", "a")]
SRC, TGT = build_vocab([s for s, _ in PAIRS]), build_vocab([t for _, t in PAIRS])


def model():
    il.set_seed(0)
    return il.modules.Transformer(replace(il.TINY, src_vocab_size=len(SRC),
                                          tgt_vocab_size=len(TGT), d_model=16, n_heads=2,
                                          d_ff=32, n_layers=1, dropout=0.0))


@pytest.mark.parametrize("changes, message", [
    ({"lr": -1.0}, "lr: expected a learning rate > 0.0, got -1.0"),
    ({"steps": True}, "steps: expected an integer >= 1, got bool True"),
    ({"schedule": "triangle"}, "schedule: expected one of ('constant', 'noam', 'cosine'), "
                               "got 'triangle'"),
    ({"tokens_per_batch": -5}, "tokens_per_batch: expected a number of tokens (0 = batch by "
                               "batch_size) >= 0, got -5"),
    ({"adam_betas": (0.9, 1.0)}, "adam_betas: expected a decay rate in [0.0, 1.0), got 1.0"),
    ({"precision": "fp16"}, "precision: expected one of ('fp32', 'bf16'), got 'fp16'"),
])
def test_a_bad_field_is_one_error_naming_it_wherever_it_is_given(changes, message):
    with pytest.raises(ValueError) as made:
        il.Recipe(**changes)
    assert str(made.value) == message
    with pytest.raises(ValueError) as trained:  # the keyword of il.train: the same check
        il.train(model(), PAIRS, SRC, TGT, progress=False, **changes)
    assert str(trained.value) == message


def test_an_override_that_is_no_field_and_a_recipe_of_another_type_are_refused():
    with pytest.raises(TypeError, match=r"^momentum: expected a field of il.Recipe \(steps, "):
        il.train(model(), PAIRS, SRC, TGT, momentum=0.9)
    with pytest.raises(ValueError, match=r"^recipe: expected an il.Recipe or None, got dict"):
        il.train(model(), PAIRS, SRC, TGT, {"steps": 3})


def test_a_recipe_and_the_same_keywords_train_the_same():
    recipe = il.Recipe(steps=4, lr=1e-2, warmup=1, schedule="cosine", batch_size=3)
    by_recipe = il.train(model(), PAIRS, SRC, TGT, recipe, device="cpu", progress=False)
    by_keywords = il.train(model(), PAIRS, SRC, TGT, steps=4, lr=1e-2, warmup=1,
                           schedule="cosine", batch_size=3, device="cpu", progress=False)
    overridden = il.train(model(), PAIRS, SRC, TGT, il.Recipe(steps=9, batch_size=3), steps=4,
                          lr=1e-2, warmup=1, schedule="cosine", device="cpu", progress=False)
    assert by_recipe.loss == by_keywords.loss == overridden.loss and len(by_recipe.loss) == 4


def test_one_presets_table_gives_the_corpora_settings_and_the_command_lines():
    for corpus in il.data.CORPORA:
        assert il.SETTINGS[corpus] == {"model": dict(rc.PRESETS[corpus].model),
                                       "train": dict(rc.PRESETS[corpus].train)}
        assert rc.PRESETS[corpus].recipe == il.Recipe(**il.SETTINGS[corpus]["train"])
    assert set(cli.PRESETS) == {"tiny", "small", "base"}
    sizes, train = cli.PRESETS["base"]
    base = replace(il.TINY, **sizes)
    assert base == replace(il.PAPER_BASE, src_vocab_size=1, tgt_vocab_size=1)  # Table 3
    assert train["tokens_per_batch"] == 25_000  # paper §5.1


def test_the_schema_holds_every_field_with_its_default_limits_and_choices():
    schema = rc.schema()
    assert list(schema["properties"]) == [f.name for f in dataclasses.fields(il.Recipe)]
    defaults = il.Recipe()
    for name, p in schema["properties"].items():
        value = getattr(defaults, name)
        assert p["default"] == (list(value) if isinstance(value, tuple) else value)
    assert schema["properties"]["lr"]["exclusiveMinimum"] == 0.0
    assert schema["properties"]["label_smoothing"]["exclusiveMaximum"] == 1.0
    assert schema["properties"]["schedule"]["enum"] == list(il.training.schedules.SCHEDULES)
    assert schema["properties"]["steps"]["x-page"] == [1, 3000]
    assert schema["x-page-model"]["d_model"] == [8, 128]
    assert schema["properties"]["adam_betas"]["default"] == [0.9, 0.98]  # paper §5.3


def doctor(monkeypatch, name, **changes):
    """Change the declaration of the Recipe field ``name`` (its default or metadata) for a test."""
    field = {f.name: f for f in dataclasses.fields(il.Recipe)}[name]
    for key in ("default",):
        if key in changes:
            monkeypatch.setattr(field, key, changes.pop(key))
    monkeypatch.setattr(field, "metadata", types.MappingProxyType({**field.metadata, **changes}))


def test_the_command_line_chapter_10_and_the_schema_follow_a_changed_declaration(
        monkeypatch, capsys):
    doctor(monkeypatch, "warmup", default=33, low=5, page=(5, 77),
           description="doctored warm-up")
    doctor(monkeypatch, "schedule", choices=("constant", "cosine"))
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["train", "--corpus", "post", "--warmup", "3"])
    assert "argument --warmup: expected a value >= 5, got '3'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["train", "--corpus", "post", "--schedule", "noam"])
    assert "argument --schedule: invalid choice: 'noam'" in capsys.readouterr().err
    help_text = " ".join(cli.build_parser()._subparsers._group_actions[0].choices["train"]
                         .format_help().split())
    assert "--warmup WARMUP doctored warm-up (default: the corpus's or the preset's own, else " \
           "33)" in help_text
    assert ch10.train_limits()["warmup"] == (5, 77)
    assert rc.schema()["properties"]["warmup"]["x-page"] == [5, 77]
    with pytest.raises(ValueError, match="warmup: expected a number of steps >= 5, got 4"):
        il.Recipe(warmup=4)


def test_the_page_export_writes_the_schema_as_one_more_member_of_its_set(tmp_path):
    index = web_export.export_site(tmp_path, corpora=("post",))
    entry = index["recipe"]
    data = (tmp_path / entry["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"] and len(data) == entry["bytes"]
    assert json.loads(data) == json.loads(json.dumps(web_export.page_schema()))
    assert {k: v for k, v in json.loads(data).items() if k != "x-pairs"} == json.loads(
        json.dumps(rc.schema()))
    train = json.loads((tmp_path / index["models"]["post"]["files"]["train"]).read_text())
    assert train["train_settings"]["schedule"] == il.Recipe.schedule  # the Recipe's default


def test_the_page_and_the_kernel_twin_read_a_fields_label_and_name_from_its_declaration(
        monkeypatch):
    """A field's page metadata (label, step, how a run says it) is declared once: the schema the
    page reads, the kernel twin's control and a run's name follow a doctored one."""
    from illustrated.book import ch10, runs
    shown = {**rc.recipe_fields()["warmup"].metadata["shown"], "label": "ramp",
             "said": "ramp {}", "step": 5}
    doctor(monkeypatch, "warmup", shown=shown)
    field = next(f for f in rc.schema()["x-page-fields"] if f["field"] == "warmup")
    assert (field["name"], field["label"], field["step"]) == ("warmup", "ramp", 5)
    controls = ch10._train_controls("post", {"post": ch10.recipe("post")})
    assert controls["warmup"].description == "ramp"
    assert runs.say("warmup", 7) == "ramp 7"
    assert rc.page_name("label_smoothing") == "labelSmoothing"
    assert [f["field"] for f in rc.page_fields()] == list(rc.PAGE_LAYOUT)
