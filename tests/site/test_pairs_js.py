"""A reader's own pairs in the page (site/js/engine/pairs.js) as the package reads them
(illustrated.data.pairs_file): the same pairs, test split and vocabularies for the same file, and
every bad line answered with read_pairs's own message, naming its line."""
from __future__ import annotations

import pytest
from node_runner import requires_node, run_node

pytestmark = requires_node

from illustrated.commands import web_export
from illustrated.data import pairs_file

PAIRS = """
import { readFileSync } from "node:fs";

const { pairsData, readPairs } = await import("./js/engine/pairs.js");
const { limits, files, seeds } = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify(files.map(({ name, bytes }) => {
  const read = readPairs(Uint8Array.from(bytes), name, limits);
  const made = read.problems.length ? [] : seeds.map((seed) => pairsData(read.pairs, seed, limits));
  return { ...read, made: made.map((d) => ({ train: d.train, test: d.test, src: d.src_tokens, tgt: d.tgt_tokens,
    maxLen: d.config.max_len })) };
})));
"""


def _pairs(n: int) -> list[tuple[str, str]]:
    """n pairs of a toy language, words repeated so that counts tie and differ."""
    nouns = ["chat", "chien", "maison", "arbre", "été", "Œuf", "zèbre", "ami"]
    return [(f"le {nouns[i % 8]} {nouns[(i * 3) % 8]} numéro {i % 7}",
             f"the {nouns[(i * 5) % 8]} number {i % 7} .") for i in range(n)]


def _run(files: dict, seeds=(0,)) -> list:
    limits = web_export.page_schema()["x-pairs"]
    return run_node(PAIRS, {"limits": limits, "seeds": list(seeds),
                         "files": [{"name": n, "bytes": list(b)} for n, b in files.items()]})


@pytest.mark.parametrize("n", [30, 300])
def test_the_page_reads_splits_and_counts_a_pairs_file_as_the_package(tmp_path, n):
    text = "\ufeff" + "".join(f"{s}\t{t}\r\n" + ("\n" if i % 9 == 0 else "")
                               for i, (s, t) in enumerate(_pairs(n)))
    path = tmp_path / "mine.tsv"
    path.write_bytes(text.encode("utf-8"))
    [out] = _run({str(path): path.read_bytes()}, seeds=(0, 3))
    pairs = pairs_file.read_pairs(path)
    assert out["problems"] == [] and [tuple(p) for p in out["pairs"]] == pairs
    for seed, made in zip((0, 3), out["made"]):
        train, test = pairs_file.split_pairs(pairs, seed=seed)
        src = pairs_file.build_vocab([s for s, _ in train])
        tgt = pairs_file.build_vocab([t for _, t in train])
        assert made["src"] == list(src.tokens) and made["tgt"] == list(tgt.tokens)
        assert made["train"] == [[src.encode(s), tgt.encode(t)] for s, t in train]
        assert [x[2] for x in made["test"]] == [s for s, _ in test]
        assert [x[0] for x in made["test"]] == [src.encode(s) for s, _ in test]
    assert out["made"][0]["test"] != out["made"][1]["test"]  # the seed moves the split


BAD = {
    "no tab": b"un chat\tthe cat\nle chien the dog\n",
    "two tabs": b"un chat\tthe cat\nle\tchien\tthe dog\n",
    "empty side": b"un chat\tthe cat\nle chien\t \n",
    "special token": b"un chat\tthe cat\nle <eos> chien\tthe dog\n",
    "too long": b"un chat\tthe cat\n" + b"a " * 257 + b"\tb\n",
    "binary": b"un chat\tthe cat\n\x00\x01\x02\tx\n",
    "not utf-8": b"un chat\tthe cat\nle ch\xe9at\tthe cat\n",
    "too few": b"un chat\tthe cat\n\n",
    "empty": b"",
}


def test_every_bad_line_is_answered_with_the_packages_message(tmp_path):
    files = {}
    for label, data in BAD.items():
        path = tmp_path / f"{label.replace(' ', '_')}.tsv"
        path.write_bytes(data)
        files[str(path)] = data
    out = _run(files)
    for (name, _), got in zip(files.items(), out):
        with pytest.raises(ValueError) as error:
            pairs_file.read_pairs(name)
        assert got["problems"] == [str(error.value)], (name, got)


def test_the_page_names_every_bad_line_at_once():
    data = b"un chat\tthe cat\nno tab here\nle\tchien\tthe dog\nun chien\tthe dog\n\tx\n"
    [out] = _run({"line": data})
    assert out["problems"] == [
        "line 2: expected 'source<TAB>target', got no tab in 'no tab here'",
        "line 3: expected one tab between source and target, got 2 tabs",
        "line 5: expected a non-empty source, got an empty one"]
    assert out["pairs"] == [["un chat", "the cat"], ["un chien", "the dog"]]
