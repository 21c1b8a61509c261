// A reader's own sentence pairs in the page, read as illustrated.data.pairs_file reads a file (source<TAB>target,
// one pair per line, UTF-8, the same limits, the same messages, every bad line named rather than the first only),
// held out as split_pairs holds out its test split (python_random.js) and made into vocabularies as build_vocab
// makes them; the limits, the test share and the model's sizes come from recipe.json's "x-pairs" (web_export).
import { sample } from "./python_random.js";
import { SPACE, tokenize, words } from "./tokenizer.js";
import { SPECIALS, Vocab } from "./vocab.js";

const STRIP = new RegExp(`^[${SPACE}]+|[${SPACE}]+$`, "gu");
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });  // a BOM is read as read_pairs reads it

// Where the first sequence of `line` that is not UTF-8 starts (Python's UnicodeDecodeError.start), or -1.
function badByte(line) {
  const next = (b) => (b >= 0xc2 && b <= 0xdf ? [1, 0x80, 0xbf] : b === 0xe0 ? [2, 0xa0, 0xbf]
    : b === 0xed ? [2, 0x80, 0x9f] : b >= 0xe1 && b <= 0xef ? [2, 0x80, 0xbf] : b === 0xf0 ? [3, 0x90, 0xbf]
      : b >= 0xf1 && b <= 0xf3 ? [3, 0x80, 0xbf] : b === 0xf4 ? [3, 0x80, 0x8f] : null);
  for (let i = 0; i < line.length;) {
    if (line[i] < 0x80) {
      i += 1;
      continue;
    }
    const rule = next(line[i]);
    if (!rule) return i;
    const [count, low, high] = rule;
    const tail = line.subarray(i + 1, i + 1 + count);
    const fits = tail.length === count && tail[0] >= low && tail[0] <= high && tail.every((b) => (b & 0xc0) === 0x80);
    if (!fits) return i;
    i += count + 1;
  }
  return -1;
}

// One side checked as pairs_file._pair checks it: an Error naming `where`, or nothing.
function sideProblem(value, side, where, limits) {
  const tokens = words(value);
  if (!tokens.length) return `${where}: expected a non-empty ${side}, got an empty one`;
  if (!VISIBLE.test(value)) return `${where}: expected a ${side} with a visible character, got only invisible ones`;
  if (tokens.length > limits.max_sentence_tokens) {
    return `${where}: expected a ${side} of at most ${limits.max_sentence_tokens} tokens, got ${tokens.length} ` +
      "(every batch is sized for the longest sentence: split or drop this line)";
  }
  const special = tokens.find((t) => SPECIALS.includes(t));
  return special ? `${where}: expected no special token, got '${special}'` : null;
}

// One line's [source, target], null for a blank line, or {problem}.
function lineOf(bytes, where, first, limits) {
  if (bytes.length > limits.max_line_bytes) {
    return { problem: `${where}: expected a line of at most ${limits.max_line_bytes} bytes, got more (not a file ` +
      "of sentence pairs?)" };
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) return { problem: `${where}: expected text, got the byte 0x00 at column ${nul + 1} (a binary file?)` };
  const at = badByte(bytes);
  if (at >= 0) {
    return { problem: `${where}: expected UTF-8 text, got the byte 0x${bytes[at].toString(16).padStart(2, "0")} at ` +
      `column ${at + 1}` };
  }
  const text = (first ? UTF8.decode(bytes).replace(/^\ufeff/, "") : UTF8.decode(bytes)).replace(/\r+$/, "");
  if (!text.replace(STRIP, "")) return null;
  const parts = text.split("\t");
  if (parts.length < 2) return { problem: `${where}: expected 'source<TAB>target', got no tab in ${repr(text)}` };
  if (parts.length > 2) {
    return { problem: `${where}: expected one tab between source and target, got ${parts.length - 1} tabs` };
  }
  const [source, target] = parts.map((part) => part.replace(STRIP, "").normalize("NFC"));
  const problem = sideProblem(source, "source", where, limits) ?? sideProblem(target, "target", where, limits);
  return problem ? { problem } : [source, target];
}

// Python's repr of a str cut to 60 characters ({text!r:.60}), for the usual text.
const repr = (text) => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`.slice(0, 60);

/** {pairs, problems}: the pairs of `bytes` (a Uint8Array: a file's, or the box's text encoded), and every line's
 * problem, each naming `${name}:${line}` (the box: "line N"), as read_pairs says it; `limits`: recipe.json's
 * x-pairs. */
export function readPairs(bytes, name, limits) {
  if (bytes.length > limits.max_file_bytes) {
    return { pairs: [], problems: [`${name}: expected a file of at most ${limits.max_file_bytes} bytes, got ` +
      `${bytes.length} (not a file of sentence pairs?)`] };
  }
  const [pairs, problems] = [[], []];
  let [start, number] = [0, 1];
  while (start < bytes.length) {
    const end = bytes.indexOf(10, start) < 0 ? bytes.length : bytes.indexOf(10, start);
    const where = name.startsWith("line") ? `line ${number}` : `${name}:${number}`;
    const pair = lineOf(bytes.subarray(start, end), where, number === 1, limits);
    if (pair?.problem) problems.push(pair.problem);
    else if (pair) pairs.push(pair);
    [start, number] = [end + 1, number + 1];
  }
  if (!problems.length && pairs.length < limits.min_pairs) {
    problems.push(`${name.startsWith("line") ? "your pairs" : name}: expected at least ${limits.min_pairs} pairs ` +
      `(some to train on, some to test on), got ${pairs.length}`);
  }
  return { pairs, problems };
}

/** [train, test] as split_pairs(pairs, test_fraction, seed) splits them: both in the pairs' order. */
export function splitPairs(pairs, testFraction, seed) {
  const nTest = Math.min(Math.max(pythonRound(testFraction * pairs.length), 1), pairs.length - 1);
  const held = new Set(sample(seed, pairs.length, nTest));
  return [pairs.filter((_, i) => !held.has(i)), pairs.filter((_, i) => held.has(i))];
}

// Python's round(): halves to even.
function pythonRound(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 ? r - 1 : r;
}

// Python's order of str: by code points (JavaScript's < compares UTF-16 units).
const byCodePoints = (a, b) => {
  const [x, y] = [[...a].map((c) => c.codePointAt(0)), [...b].map((c) => c.codePointAt(0))];
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
};

/** build_vocab(sentences): the specials, then the words by decreasing count, ties in Python's order of str. */
export function buildVocab(sentences) {
  const counts = new Map();
  for (const sentence of sentences) for (const t of tokenize(sentence)) counts.set(t, (counts.get(t) ?? 0) + 1);
  const kept = [...counts.keys()].sort((a, b) => counts.get(b) - counts.get(a) || byCodePoints(a, b));
  return [...SPECIALS, ...kept];
}

/** A {corpus}.train.json for the reader's pairs, as web_export writes one for a corpus and `python -m illustrated
 * train --pairs` builds its model: split with `seed`, vocabularies of the training split, the sizes of x-pairs's
 * config, max_len long enough for the longest pair, the Recipe's defaults as its settings. */
export function pairsData(pairs, seed, schema) {
  const [train, test] = splitPairs(pairs, schema.test_fraction, seed);
  const [src, tgt] = [0, 1].map((side) => new Vocab(buildVocab(train.map((p) => p[side]))));
  const encode = (vocab, s) => tokenize(s).map((t) => vocab.ids.get(t) ?? vocab.ids.get("<unk>"));
  const longest = pairs.reduce((m, [s, t]) => Math.max(m, tokenize(s).length, tokenize(t).length + 1), 0);
  const config = { ...schema.config, max_len: Math.max(schema.config.max_len, longest + 1),
    src_vocab_size: src.tokens.length, tgt_vocab_size: tgt.tokens.length, pad_id: 0, tgt_pad_id: 0 };
  return { corpus: "pairs", config, train_settings: schema.train_settings, src_tokens: src.tokens,
    tgt_tokens: tgt.tokens, bos_id: tgt.ids.get("<bos>"), eos_id: tgt.ids.get("<eos>"),
    train: train.map(([s, t]) => [encode(src, s), encode(tgt, t)]),
    test: test.map(([s, t]) => [encode(src, s), tokenize(t).join(" "), s]) };
}

/** `pairs` ([[source, target], ...], illustrated.train's option) checked by read_pairs's rules, each named
 * "pairs:N"; throws one Error naming every bad pair. */
export function checkedPairs(pairs, limits) {
  const isPair = (p) => Array.isArray(p) && p.length === 2 && p.every((s) => typeof s === "string");
  if (!Array.isArray(pairs) || !pairs.every(isPair)) {
    throw new Error(`pairs: expected a list of [source, target] strings, got ${JSON.stringify(pairs).slice(0, 60)}`);
  }
  const lines = pairs.map(([s, t]) => `${s.replaceAll("\n", " ")}\t${t.replaceAll("\n", " ")}`).join("\n");
  const { pairs: read, problems } = readPairs(new TextEncoder().encode(lines), "pairs", limits);
  if (problems.length) throw new Error(problems.join("; "));
  return read;
}
