// Safetensors, the file a model trained in the page downloads as and the shipped models are
// served as (src/illustrated/_safetensors.py writes and reads the same): 8 bytes little-endian
// header length, a JSON header {name: {dtype: "F32", shape, data_offsets}, __metadata__:
// {format, config, src_vocab, tgt_vocab} (JSON strings)}, then the float32 data.

/** The format in __metadata__ (illustrated._safetensors.FORMAT). */
export const FORMAT = "illustrated-safetensors/1";

/** {tensors: {name: {shape, data: Float32Array}}, config, srcTokens, tgtTokens} of a file's bytes. */
export function readModel(buffer) {
  const size = Number(new DataView(buffer).getBigUint64(0, true));
  if (!(size > 0 && size <= buffer.byteLength - 8)) throw new Error("model file: truncated header");
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, size)));
  const meta = header.__metadata__ ?? {};
  if (meta.format !== FORMAT) throw new Error(`model file: format ${meta.format}, expected ${FORMAT}`);
  delete header.__metadata__;
  const tensors = {};
  for (const [name, { dtype, shape, data_offsets: [start, end] }] of Object.entries(header)) {
    if (dtype !== "F32" || end > buffer.byteLength - 8 - size) throw new Error(`model file: bad tensor ${name}`);
    tensors[name] = { shape, data: new Float32Array(buffer.slice(8 + size + start, 8 + size + end)) };
  }
  return { tensors, config: JSON.parse(meta.config), srcTokens: JSON.parse(meta.src_vocab),
    tgtTokens: JSON.parse(meta.tgt_vocab) };
}

/** The bytes of a model file: tensors {name: {shape, data: Float32Array}} in that order. */
export function writeModel(tensors, config, srcTokens, tgtTokens) {
  const header = { __metadata__: { format: FORMAT, config: JSON.stringify(config),
    src_vocab: JSON.stringify(srcTokens), tgt_vocab: JSON.stringify(tgtTokens) } };
  let offset = 0;
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    header[name] = { dtype: "F32", shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  let text = new TextEncoder().encode(JSON.stringify(header));
  const padded = new Uint8Array(Math.ceil(text.length / 8) * 8).fill(32);
  padded.set(text);
  text = padded;
  const out = new Uint8Array(8 + text.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  let at = 8 + text.length;
  for (const { data } of Object.values(tensors)) {
    out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), at);
    at += data.byteLength;
  }
  return out;
}
