"""site/js/widgets/link.js: a page's link holds the training widget's settings as field=value pairs
named as in recipe.json; reading it back gives the same settings, and an unknown field or a value
the page refuses is left out and named."""
from __future__ import annotations

from node_runner import requires_node, run_node

pytestmark = requires_node

from illustrated import recipe

LINK = """
import { readFileSync } from "node:fs";

globalThis.window = { document: {} };
const { recipeFrom } = await import("./js/engine/recipe.js");
const { linkOf, readLink, ignoredLine, isSettings } = await import("./js/widgets/link.js");
const { schema, values, hashes } = JSON.parse(readFileSync(0, "utf8"));
const r = recipeFrom(schema);
const corpora = ["post", "reverse"];
const written = linkOf(values);
console.log(JSON.stringify({ written, back: readLink(written, r, corpora),
  read: hashes.map((h) => ({ settings: isSettings(h), ...readLink(h, r, corpora),
    line: ignoredLine(readLink(h, r, corpora).ignored) })) }));
"""


def test_a_link_reads_back_the_settings_it_holds_and_names_what_it_ignores():
    values = {"corpus": "reverse", "steps": 300, "lr": 0.003, "warmup": 20, "labelSmoothing": 0.1,
              "dModel": 32, "nHeads": 2, "nLayers": 1, "seed": 7, "schedule": "cosine",
              "normFirst": "pre"}
    hashes = ["#corpus=reverse&steps=300&lr=0.003", "#steps=99999&colour=red&lr=0.003",
              "#corpus=klingon&normFirst=middle&dModel=abc", "#the-playground"]
    out = run_node(LINK, {"schema": recipe.schema(), "values": values, "hashes": hashes})
    assert out["written"].startswith("#corpus=reverse&steps=300&lr=0.003&warmup=20&")
    assert out["back"] == {"values": values, "ignored": []}
    first, second, third, anchor = out["read"]
    assert first["values"] == {"corpus": "reverse", "steps": 300, "lr": 0.003} and first["line"] == ""
    assert second["values"] == {"lr": 0.003}
    assert second["line"] == ('From the link, ignored (left at the recipe\'s value): steps=99999 '
                              '(expected an integer in [1, 3000]); unknown field "colour".')
    assert third["values"] == {}
    assert third["ignored"] == ["corpus=klingon (expected one of post, reverse)",
                                "normFirst=middle (expected post or pre)",
                                "dModel=abc (expected an integer in [8, 128])"]
    assert not anchor["settings"] and all(r["settings"] for r in (first, second, third))
