// Safetensors, the file of a model trained in the page and of the shipped models (as
// src/illustrated/files/safetensors.py): 8 bytes little-endian header length, a JSON header {name:
// {dtype: "F32", shape, data_offsets}, __metadata__: {format, config, src_vocab, tgt_vocab, digests}
// (JSON strings)}, then the float32 data. ``digests``: each tensor's sha256 as
// safetensors.tensor_digest computes it, which il.load_checkpoint checks.

/** The format of the page's model files and of the index naming them (web_export.FORMAT). */
export const FORMAT = "illustrated-safetensors/1";

/** {tensors: {name: {shape, data: Float32Array}}, config, srcTokens, tgtTokens} of a file. */
export function readModel(buffer) {
  const size = Number(new DataView(buffer).getBigUint64(0, true)), body = 8 + size;
  if (!(size > 0 && body <= buffer.byteLength)) throw new Error("model file: truncated header");
  const { __metadata__: meta = {}, ...header } = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, size)));
  if (meta.format !== FORMAT) throw new Error(`model file: format ${meta.format}, expected ${FORMAT}`);
  const tensors = {};
  for (const [name, { dtype, shape, data_offsets: [start, end] }] of Object.entries(header)) {
    if (dtype !== "F32" || body + end > buffer.byteLength) throw new Error(`model file: bad tensor ${name}`);
    tensors[name] = { shape, data: new Float32Array(buffer.slice(body + start, body + end)) };
  }
  const [config, srcTokens, tgtTokens] = [meta.config, meta.src_vocab, meta.tgt_vocab].map((t) => JSON.parse(t));
  return { tensors, config, srcTokens, tgtTokens };
}

/** Hex sha256 of one float32 tensor: its name, dtype, shape (as Python's json.dumps writes a
 * list) and bytes, each part after its length as 8 bytes little-endian (tensor_digest). */
async function tensorDigest(name, shape, data) {
  const text = new TextEncoder();
  const parts = [text.encode(name), text.encode("float32"), text.encode(`[${shape.join(", ")}]`),
    new Uint8Array(data.buffer, data.byteOffset, data.byteLength)];
  const all = new Uint8Array(parts.reduce((n, part) => n + 8 + part.length, 0));
  parts.reduce((at, part) => {
    new DataView(all.buffer).setBigUint64(at, BigInt(part.length), true);
    all.set(part, at + 8);
    return at + 8 + part.length;
  }, 0);
  const hash = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", all));
  return Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The bytes of a model file: tensors {name: {shape, data: Float32Array}} in that order. */
export async function writeModel(tensors, config, srcTokens, tgtTokens) {
  const digests = {};
  for (const [name, { shape, data }] of Object.entries(tensors)) digests[name] = await tensorDigest(name, shape, data);
  const header = { __metadata__: { format: FORMAT, config: JSON.stringify(config),
    src_vocab: JSON.stringify(srcTokens), tgt_vocab: JSON.stringify(tgtTokens), digests: JSON.stringify(digests) } };
  let offset = 0;
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    header[name] = { dtype: "F32", shape, data_offsets: [offset, (offset += data.byteLength)] };
  }
  const json = new TextEncoder().encode(JSON.stringify(header)), size = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + size + offset).fill(32, 8, 8 + size);  // the header padded with spaces
  new DataView(out.buffer).setBigUint64(0, BigInt(size), true);
  out.set(json, 8);
  Object.values(tensors).reduce((at, { data }) => {
    out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), at);
    return at + data.byteLength;
  }, 8 + size);
  return out;
}
