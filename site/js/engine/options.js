// The options of translate(), checked as decoding.py checks its arguments (_check_beam_args),
// with the defaults filled in; and the one way the page refuses an option (train()'s too).

/** Every option translate() takes. */
const OPTIONS = ["beamSize", "topBeams", "alpha", "maxLen", "returnSteps", "topK"];

/** Throws the package's one-line error: "<name>: expected <what>, got <value>" ("got nothing": undefined). */
export function refuse(name, what, value) {
  const got = value === undefined ? "nothing" : typeof value === "number" ? String(value) : JSON.stringify(value);
  throw new Error(`${name}: expected ${what}, got ${got}`);
}

/** Refuses value unless it is a number in [low, high], and an integer if `integer`. */
export function checkRange(name, value, [low, high, integer]) {
  const inside = typeof value === "number" && value >= low && value <= high;
  if (!inside || (integer && !Number.isInteger(value))) {
    refuse(name, `${integer ? "an integer" : "a number"} in [${low}, ${high}]`, value);
  }
}

function known(options) {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    refuse("options", "an object", options);
  }
  const unknown = Object.keys(options).filter((key) => !OPTIONS.includes(key));
  const named = Object.fromEntries(unknown.map((k) => [k, options[k]]));
  if (unknown.length) refuse("options", `only ${OPTIONS.join(", ")}`, named);
  return options;
}

/** {beamSize, topBeams, alpha, maxLen, returnSteps, topK (next words kept per step of the best; 0: none)} from
 * the caller's options and the model's {corpus}.json; throws naming an unknown option or a value it refuses. */
export function decodeOptions(options, config) {
  const { beamSize = 1, topBeams = 1, alpha = 0, returnSteps = false, topK = 0 } = known(options);
  const maxLen = options.maxLen ?? Math.min(50, config.max_len);  // decoding.py's 50, or the model's
  checkRange("beamSize", beamSize, [1, Number.MAX_SAFE_INTEGER, 1]);
  checkRange("topBeams", topBeams, [1, beamSize, 1]);
  checkRange("maxLen", maxLen, [1, config.max_len, 1]);
  checkRange("topK", topK, [0, config.tgt_tokens.length, 1]);
  if (typeof alpha !== "number" || !Number.isFinite(alpha) || alpha < 0) {
    refuse("alpha", "a finite number >= 0 (a length-penalty exponent)", alpha);
  }
  if (typeof returnSteps !== "boolean") refuse("returnSteps", "true or false", returnSteps);
  return { beamSize, topBeams, alpha, maxLen, returnSteps, topK };
}
