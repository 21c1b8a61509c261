"""site/js/engine/estimate.js: the time the reader's own pairs take in the page, said before Train,
from the pairs trained on, the steps, the batch and a measured step; a corpus one pass over which
needs more steps than the page allows, or more than its budget of seconds, is said too large."""
from __future__ import annotations

from node_runner import requires_node, run_node

pytestmark = requires_node

ESTIMATE = """
import { readFileSync } from "node:fs";
const { pairsEstimate, PAGE_BUDGET_S } = await import("./js/engine/estimate.js");
const cases = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify({ budget: PAGE_BUDGET_S, out: cases.map((c) => pairsEstimate(c)) }));
"""


def test_the_estimate_counts_passes_and_seconds_and_says_too_large():
    base = {"steps": 300, "batchSize": 64, "msPerStep": 40, "maxSteps": 3000}
    out = run_node(ESTIMATE, [{**base, "trainPairs": 27}, {**base, "trainPairs": 2700},
                           {**base, "trainPairs": 270_000},
                           {**base, "trainPairs": 100_000, "msPerStep": 400}])
    budget, (small, middle, huge, slow) = out["budget"], out["out"]
    assert small["passes"] == 300 * 64 / 27 and small["seconds"] == 12 and not small["tooLarge"]
    assert small["text"] == ("27 pairs to train on: 300 steps of 64 show each about 711 times, about "
                             "12 s at 40 ms per step (measured on this device).")
    assert middle["passSteps"] == 43 and not middle["tooLarge"]
    assert middle["text"].startswith("2,700 pairs to train on: 300 steps of 64 show each about 7.1 times")
    assert huge["passSteps"] == 4219 and huge["tooLarge"]  # more steps than the page allows
    assert huge["text"] == (
        "Too large to train in the page in reasonable time: 270,000 pairs to train on, 64 a step, "
        "need 4,219 steps for one pass over them, about 2.8 min at 40 ms per step (measured on "
        "this device); the page allows at most 3,000 steps. These 300 steps show each pair 0.07 "
        "times. Train them with python -m illustrated train --pairs FILE.tsv instead.")
    assert slow["passSteps"] == 1563 and slow["passSeconds"] > budget and slow["tooLarge"]
    assert "about 10 min at 400 ms per step" in slow["text"]
