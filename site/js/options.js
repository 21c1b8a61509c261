// The options of translate(), checked as decoding.py checks its arguments (_check_beam_args),
// with the defaults filled in.

/** Every option translate() takes. */
export const OPTIONS = ["beamSize", "topBeams", "alpha", "maxLen", "returnSteps", "topK"];

function refuse(name, what, value) {
  throw new Error(`${name}: expected ${what}, got ${JSON.stringify(value)}`);
}

function known(options) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) refuse("options", "an object", options);
  const unknown = Object.keys(options).filter((key) => !OPTIONS.includes(key));
  if (unknown.length) refuse("options", `only ${OPTIONS.join(", ")}`, Object.fromEntries(unknown.map((k) => [k, options[k]])));
  return options;
}

function checkInt(name, value, low, high) {
  if (!Number.isInteger(value) || value < low || value > high) refuse(name, `an integer in [${low}, ${high}]`, value);
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
  const { beamSize = 1, topBeams = 1, alpha = 0, returnSteps = false, topK = 0 } = known(options);
  const maxLen = options.maxLen ?? Math.min(50, config.max_len);  // decoding.py's 50, or the model's
  checkInt("beamSize", beamSize, 1, Number.MAX_SAFE_INTEGER);
  checkInt("topBeams", topBeams, 1, beamSize);
  checkInt("maxLen", maxLen, 1, config.max_len);
  checkInt("topK", topK, 0, config.tgt_tokens.length);
  if (typeof alpha !== "number" || !Number.isFinite(alpha) || alpha < 0) {
    refuse("alpha", "a finite number >= 0 (a length-penalty exponent)", alpha);
  }
  if (typeof returnSteps !== "boolean") refuse("returnSteps", "true or false", returnSteps);
  return { beamSize, topBeams, alpha, maxLen, returnSteps, topK };
}
