// A model's vocabularies, as illustrated.commands.web_export writes them ({corpus}.json), and the turn of
// a sentence into source ids (Vocab.encode in src/illustrated/data/vocab.py), except that an
// unknown word is an error naming it instead of <unk>: the toy models know only their corpus.
import { tokenize } from "./tokenizer.js";

/** The special tokens (data/vocab.py SPECIALS): never words of a sentence. */
export const SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"];

/** Token <-> id of one vocabulary; tokens[i] has id i. */
export class Vocab {
  constructor(tokens) {
    this.tokens = tokens;
    this.ids = new Map(tokens.map((token, id) => [token, id]));
  }

  spell(ids) {
    return ids.map((id) => this.tokens[id]);
  }
}

/** {tokens, ids} of a sentence for a model (models.js); an Error names every word the model
 * does not know, or refuses a blank or too long sentence. */
export function sourceIds(model, sentence) {
  const tokens = tokenize(sentence);
  const known = (t) => model.srcVocab.ids.has(t) && !SPECIALS.includes(t);
  const unknown = [...new Set(tokens.filter((t) => !known(t)))];
  if (unknown.length) {
    const words = unknown.map((w) => JSON.stringify(w)).join(", ");
    throw new Error(`sentence: unknown word${unknown.length > 1 ? "s" : ""} ${words} for the ` +
      `"${model.corpus}" model (it knows the ${model.srcVocab.tokens.length - SPECIALS.length} words of its corpus)`);
  }
  if (tokens.length > model.config.max_len) {
    throw new Error(`sentence: ${tokens.length} tokens, more than the model's max_len=${model.config.max_len}`);
  }
  return { tokens, ids: tokens.map((t) => model.srcVocab.ids.get(t)) };
}
