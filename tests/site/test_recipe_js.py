"""site/js/engine/recipe.js reads the page's limits, schedules, defaults, Adam's settings,
d_ff = k x d_model and the training widget's fields (names, labels, input steps, how a run says
them) from recipe.json (il.recipe.schema, written by web_export): the schema as shipped gives the
limits the widget always stated, and a doctored schema moves the page."""
from __future__ import annotations

import copy

from node_runner import requires_node, run_node

pytestmark = requires_node

from illustrated import recipe

READ = """
import { readFileSync } from "node:fs";
globalThis.window = { document: {} };  // dom.js reads window.document when imported
const { recipeFrom, trainOptions } = await import("./js/engine/recipe.js");
const { limitsText } = await import("./js/widgets/fields.js");
const { schema, options } = JSON.parse(readFileSync(0, "utf8"));
const data = { config: { d_model: 32, n_heads: 4, n_layers: 2, norm_first: false },
  train_settings: { steps: 100, lr: 0.003, warmup: 10, schedule: "constant", label_smoothing: 0,
    batch_size: 2 } };
const r = recipeFrom(schema);
const tried = options.map((o) => {
  try { return trainOptions(o, data, r); } catch (e) { return e.message; }
});
const text = limitsText(r).map((x) => x.code ?? x).join("");
console.log(JSON.stringify({ r, text, tried }));
"""


def read(schema: dict, options: list) -> dict:
    return run_node(READ, {"schema": schema, "options": options})


def test_the_shipped_schema_gives_the_limits_the_widget_states():
    out = read(recipe.schema(), [{}, {"steps": 3001}, {"schedule": "linear"},
                                 {"referentWeight": 11}, {"referentWeight": 0.5}])
    assert out["text"] == ("Limits: 1-3,000 steps, learning rate up to 0.05, warm-up up to 1,000 "
                           "steps, label smoothing up to 0.5, d_model 8-128 (an "
                           "even number divisible by n_heads), 1-8 heads, 1-4 layers a side; d_ff is 2 x "
                           "d_model.")
    assert out["r"]["limits"]["labelSmoothing"] == [0, 0.5, 0]
    assert out["r"]["limits"]["seed"] == [0, 2**32 - 1, 1]
    assert out["r"]["betas"] == [0.9, 0.98] and out["r"]["eps"] == 1e-9 and out["r"]["clip"] == 1
    assert out["tried"][0]["steps"] == 100 and out["tried"][0]["seed"] == 0
    assert out["tried"][1] == "steps: expected an integer in [1, 3000], got 3001"
    assert out["tried"][2] == "schedule: expected constant, noam or cosine, got \"linear\""
    # the "it" objective's weight: the recipe's default (off) unless given, within x-page
    assert out["tried"][0]["referentWeight"] == 0
    assert out["tried"][3] == "referentWeight: expected a number in [0, 10], got 11"
    assert out["tried"][4]["referentWeight"] == 0.5


def test_a_doctored_schema_moves_the_pages_limits_choices_and_rules():
    schema = copy.deepcopy(recipe.schema())
    p = schema["properties"]
    p["steps"]["x-page"] = [1, 50]
    p["label_smoothing"]["x-page"] = [0, 0.3]
    p["schedule"]["enum"] = ["constant", "cosine"]
    p["adam_betas"]["default"] = [0.8, 0.9]
    p["seed"]["default"] = 7
    schema["x-page-model"]["d_model"] = [8, 64]
    schema["x-d-ff-per-d-model"] = 4
    out = read(schema, [{"steps": 50}, {"steps": 51}, {"steps": 50, "schedule": "noam"},
                        {"steps": 50, "dModel": 96}])
    assert out["text"] == ("Limits: 1-50 steps, learning rate up to 0.05, warm-up up to 1,000 "
                           "steps, label smoothing up to 0.3, d_model 8-64 (an "
                           "even number divisible by n_heads), 1-8 heads, 1-4 layers a side; d_ff is 4 x "
                           "d_model.")
    assert out["r"]["betas"] == [0.8, 0.9] and out["r"]["dFfPerDModel"] == 4
    assert out["tried"][0]["steps"] == 50 and out["tried"][0]["seed"] == 7
    assert out["tried"][1:] == ["steps: expected an integer in [1, 50], got 51",
                                "schedule: expected constant or cosine, got \"noam\"",
                                "dModel: expected an integer in [8, 64], got 96"]


#: fields.js's problems() (the widget's refusals) on options read from the fields: dom.js reads
#: window.document when it loads, so a bare window stands in (problems() draws nothing).
PROBLEMS = """
import { readFileSync } from "node:fs";
globalThis.window = { document: {} };
const { recipeFrom } = await import("./js/engine/recipe.js");
const { problems } = await import("./js/widgets/fields.js");
const { schema, tried } = JSON.parse(readFileSync(0, "utf8"));
const r = recipeFrom(schema);
const recipe = { steps: 100, lr: 0.003, warmup: 10, labelSmoothing: 0, dModel: 32, nHeads: 4, nLayers: 2,
  seed: 0, schedule: "constant", normFirst: "post", corpus: "post" };
// null in JSON: a field left empty or unreadable, which fields.js's read() gives as undefined
const read = (o) => Object.fromEntries(Object.entries({ ...recipe, ...o }).map(([k, v]) => [k, v ?? undefined]));
console.log(JSON.stringify(tried.map((o) => problems(read(o), r))));
"""


def test_the_widget_refuses_an_empty_field_and_says_d_models_rule_by_the_labels():
    """An empty or unreadable number field is refused by its label ("got nothing"), as an
    out-of-range one is; d_model's rule is the one the limits line states (even, divisible by
    n_heads: 12 with 4 heads passes, an odd multiple of 4), in the labels' words."""
    tried = [{}, {"labelSmoothing": None}, {"labelSmoothing": None, "steps": None},
             {"dModel": 30}, {"dModel": 12}, {"dModel": 36, "nHeads": 8}, {"lr": 5}]
    out = run_node(PROBLEMS, {"schema": recipe.schema(), "tried": tried})
    assert out[0] == {} and out[4] == {}, out
    assert out[1] == {"labelSmoothing": "label smoothing: expected a number in [0, 0.5], got nothing"}
    assert out[2] == {"labelSmoothing": "label smoothing: expected a number in [0, 0.5], got nothing",
                      "steps": "steps: expected an integer in [1, 3000], got nothing"}, out[2]
    assert out[3] == {"dModel": "d_model: expected an even number divisible by n_heads (4), got 30"}
    assert out[5] == {"dModel": "d_model: expected an even number divisible by n_heads (8), got 36"}
    assert out[6] == {"lr": "learning rate: expected a number in [0.00001, 0.05], got 5"}, out[6]


#: runs.js's sayer and runName (a run's name) over recipe.json's fields.
SAY = """
import { readFileSync } from "node:fs";

globalThis.window = { document: {} };
const { recipeFrom } = await import("./js/engine/recipe.js");
const { runName, sayer } = await import("./js/widgets/runs.js");
const { schema, said, named } = JSON.parse(readFileSync(0, "utf8"));
const r = recipeFrom(schema);
const say = sayer(r.fields);
console.log(JSON.stringify({ said: said.map(([k, v]) => say(k, v)),
  named: named.map(([values, recipe, always]) => runName(values, recipe, always, say)),
  fields: r.fields.map((f) => [f.name, f.label, f.control, f.options]) }));
"""


def test_the_page_names_labels_and_says_each_setting_as_the_kernel_twin_does():
    """One declaration (the Recipe's field metadata and PAGE_SETTINGS): the page's run names
    are book/runs.py's, word for word, and its controls are page_fields' in order."""
    from illustrated.book import runs
    said = [("steps", 1), ("steps", 300), ("nLayers", 1), ("nHeads", 2), ("lr", 0.01),
            ("labelSmoothing", 0.1), ("normFirst", "pre"), ("referentWeight", 0),
            ("referentWeight", 1), ("referentWeight", 2.5), ("schedule", "noam"),
            ("corpus", "reverse"), ("seed", 3), ("warmup", 40), ("dModel", 64)]
    base = {"corpus": "reverse", "steps": 200, "lr": 0.01, "schedule": "cosine",
            "labelSmoothing": 0.0, "normFirst": "post"}
    named = [(base, base, []), (base, base, ["normFirst"]),
             ({**base, "schedule": "noam", "normFirst": "pre"}, base, []),
             ({**base, "labelSmoothing": 0.1, "lr": 0.003}, base, ["corpus"])]
    out = run_node(SAY, {"schema": recipe.schema(), "said": said, "named": named})
    assert out["said"] == [runs.say(k, v) for k, v in said]
    assert out["said"][:3] == ["1 step", "300 steps", "1 layer"] and out["said"][6] == "pre-LN"
    assert out["said"][7:10] == ["no “it” objective", "“it” objective", "“it” objective x2.5"]
    assert out["named"] == [runs.run_name(*n) for n in named]
    assert out["named"][2] == "noam, pre-LN"
    fields = recipe.page_fields()
    assert [f[0] for f in out["fields"]] == [f["name"] for f in fields]
    assert [f[1] for f in out["fields"]] == [f["label"] for f in fields]
    menus = {f[0]: f[3] for f in out["fields"] if f[2] == "menu"}
    assert menus == {"corpus": None, "schedule": [[s, s] for s in il_schedules()],
                     "normFirst": [["post", "post-LN"], ["pre", "pre-LN"]]}


def il_schedules() -> list:
    return list(recipe.recipe_fields()["schedule"].metadata["choices"])
