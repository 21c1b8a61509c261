// The word-level tokenizer of src/illustrated/data/tokenizer.py, rule for rule, so that a sentence
// typed in the browser becomes the same tokens as in Python (tests/site/test_browser_js.py
// compares the two on every corpus sentence and on edge cases).

/** Characters split off as tokens of their own (tokenizer.PUNCTUATION). */
export const PUNCTUATION = ".,!?;:";

/** French words that elide before a vowel; the token keeps the apostrophe (tokenizer.ELISIONS). */
export const ELISIONS = ["l", "d", "j", "m", "n", "s", "t", "c", "qu", "jusqu", "lorsqu", "puisqu"];

/** Python's \s on str (str.isspace), for a character class: JavaScript's \s lacks \x1c-\x1f and \x85 and
 * adds \ufeff. */
export const SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const escaped = PUNCTUATION.replace(/[.?]/g, "\\$&");
const DELIMITERS = SPACE + escaped;
// Longest first, as Python sorts them (a stable sort by length, reversed).
const ELIDED = [...ELISIONS].sort((a, b) => b.length - a.length).join("|");
// One pass: a punctuation mark | an elided word at the start of a word, followed by more word |
// a run of anything else that is not a space or punctuation.
const TOKEN = new RegExp(
  `[${escaped}]` +
  `|(?<![^${DELIMITERS}])(?:${ELIDED})'(?=[^${DELIMITERS}])` +
  `|[^${DELIMITERS}]+`, "gu");
const BLANK = new RegExp(`^[${SPACE}]*$`, "u");

/**
 * Split a sentence into lowercase words, the way the toy corpora are written (tokenizer.tokenize):
 * ’ becomes ', everything is lowercased, each of .,!?;: is a token, a French elision is split
 * after its apostrophe (l'animal -> l', animal), accents are kept. Throws for a non-string or
 * a blank sentence.
 */
export function tokenize(sentence) {
  if (typeof sentence !== "string") {
    throw new Error(`sentence: got ${typeof sentence} ${String(sentence)}, expected a string`);
  }
  if (BLANK.test(sentence)) {
    throw new Error(`sentence: got an empty sentence ${JSON.stringify(sentence)}, expected at least one word`);
  }
  const text = sentence.replaceAll("\u2019", "'").toLowerCase().normalize("NFC");
  return text.match(TOKEN) ?? [];
}

/** The tokens of a text by tokenize's rules, unchecked: [] for a blank one (tokenizer.words). */
export const words = (text) => text.replaceAll("\u2019", "'").toLowerCase().normalize("NFC").match(TOKEN) ?? [];

/** Tokens joined back into a sentence, as tokenizer.detokenize joins them: single spaces, an elided word
 * (l', qu') glued to the next token and punctuation to the previous one ("n' a" -> "n'a", "tard ." -> "tard."). */
export function detokenize(tokens) {
  let [out, glue] = ["", true];  // glue: nothing to separate from at the start
  for (const token of tokens) {
    if (!(glue || (token.length === 1 && PUNCTUATION.includes(token)))) out += " ";
    out += token;
    glue = token.endsWith("'") && token.length > 1;
  }
  return out;
}
