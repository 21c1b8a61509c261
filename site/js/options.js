// The options of translate(), checked as decoding.py checks its arguments (_check_beam_args),
// with the defaults filled in.

/** Every option translate() takes. */
export const OPTIONS = ["beamSize", "topBeams", "alpha", "maxLen", "returnSteps", "topK"];

function checkInt(name, value, low, high) {
  if (!Number.isInteger(value) || value < low || value > high) {
    throw new Error(`${name}: expected an integer in [${low}, ${high}], got ${JSON.stringify(value)}`);
  }
}

function checkAlpha(alpha) {
  if (typeof alpha !== "number" || !Number.isFinite(alpha) || alpha < 0) {
    throw new Error(`alpha: expected a finite number >= 0 (a length-penalty exponent), got ${JSON.stringify(alpha)}`);
  }
}

function checkKeys(options, allowed) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new Error(`options: expected an object, got ${JSON.stringify(options)}`);
  }
  const unknown = Object.keys(options).filter((key) => !allowed.includes(key));
  if (unknown.length) {
    throw new Error(`options: unknown ${unknown.join(", ")} (expected ${allowed.join(", ")})`);
  }
}

/**
 * @param {object} options the caller's options
 * @param {{max_len: number, tgt_tokens: string[]}} config the model's sizes ({corpus}.json)
 * @returns {{beamSize: number, topBeams: number, alpha: number, maxLen: number,
 *   returnSteps: boolean, topK: number}} topK: the most probable next words kept per step of the
 *   best hypothesis (0, the default: none)
 * @throws {Error} naming the option, for an unknown one or a value decoding.py would refuse
 */
export function decodeOptions(options, config) {
  checkKeys(options, OPTIONS);
  const { beamSize = 1, topBeams = 1, alpha = 0, returnSteps = false, topK = 0 } = options;
  // decoding.py's default max_len is 50; a model with a shorter max_len caps it.
  const maxLen = options.maxLen ?? Math.min(50, config.max_len);
  checkInt("beamSize", beamSize, 1, Number.MAX_SAFE_INTEGER);
  checkInt("topBeams", topBeams, 1, beamSize);
  checkInt("maxLen", maxLen, 1, config.max_len);
  checkInt("topK", topK, 0, config.tgt_tokens.length);
  checkAlpha(alpha);
  if (typeof returnSteps !== "boolean") {
    throw new Error(`returnSteps: expected true or false, got ${JSON.stringify(returnSteps)}`);
  }
  return { beamSize, topBeams, alpha, maxLen, returnSteps, topK };
}
