// Python's random.Random(seed).sample(range(n), k), bit for bit (CPython 3.11: the Mersenne Twister MT19937 seeded by
// init_by_array, getrandbits, _randbelow, sample): the page holds out the same test pairs as
// illustrated.data.pairs_file.split_pairs.

const N = 624;

// The generator seeded as random.seed(seed) seeds it for an integer seed >= 0.
function seeded(seed) {
  const mt = new Uint32Array(N);
  mt[0] = 19650218;
  for (let i = 1; i < N; i += 1) mt[i] = Math.imul(1812433253, mt[i - 1] ^ (mt[i - 1] >>> 30)) + i;
  const key = [];
  for (let rest = BigInt(seed); key.length === 0 || rest > 0n; rest >>= 32n) key.push(Number(rest & 0xffffffffn));
  let [i, j] = [1, 0];
  for (let k = Math.max(N, key.length); k > 0; k -= 1) {
    mt[i] = (mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1664525)) + key[j] + j;
    [i, j] = [i + 1, j + 1];
    if (i >= N) [mt[0], i] = [mt[N - 1], 1];
    if (j >= key.length) j = 0;
  }
  for (let k = N - 1; k > 0; k -= 1) {
    mt[i] = (mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1566083941)) - i;
    i += 1;
    if (i >= N) [mt[0], i] = [mt[N - 1], 1];
  }
  mt[0] = 0x80000000;
  return { mt, index: N };
}

// The next 32 random bits (genrand_uint32).
function next(g) {
  const mt = g.mt;
  if (g.index >= N) {
    for (let k = 0; k < N; k += 1) {
      const y = (mt[k] & 0x80000000) | (mt[(k + 1) % N] & 0x7fffffff);
      mt[k] = mt[(k + 397) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    g.index = 0;
  }
  let y = mt[g.index];
  g.index += 1;
  y ^= y >>> 11;
  y ^= (y << 7) & 0x9d2c5680;
  y ^= (y << 15) & 0xefc60000;
  return (y ^ (y >>> 18)) >>> 0;
}

// _randbelow(n) for n < 2^32: k = n.bit_length() random bits, drawn again until below n.
function below(g, n) {
  const k = 32 - Math.clz32(n);
  let r = k ? next(g) >>> (32 - k) : 0;
  while (r >= n) r = k ? next(g) >>> (32 - k) : 0;
  return r;
}

/** random.Random(seed).sample(range(n), k): k distinct indices below n, in Python's order. */
export function sample(seed, n, k) {
  const g = seeded(seed);
  const small = 21 + (k > 5 ? 4 ** Math.ceil(Math.log(k * 3) / Math.log(4)) : 0);
  const out = [];
  if (n <= small) {
    const pool = Array.from({ length: n }, (_, i) => i);
    for (let i = 0; i < k; i += 1) {
      const j = below(g, n - i);
      out.push(pool[j]);
      pool[j] = pool[n - i - 1];
    }
    return out;
  }
  const chosen = new Set();
  for (let i = 0; i < k; i += 1) {
    let j = below(g, n);
    while (chosen.has(j)) j = below(g, n);
    chosen.add(j);
    out.push(j);
  }
  return out;
}
