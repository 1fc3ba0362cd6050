import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The metadata of a GGUF file (v2/v3): read from its header, never trusted from a package's
 * description — which model it really is, its licence, its chat template. Only the key/value part
 * is read; the tensors are the runtime's business.
 *
 * Layout: `GGUF`, uint32 version, uint64 tensor count, uint64 key/value count, then key/value
 * pairs (a string key, a uint32 value type, the value). Strings are a uint64 length and bytes;
 * arrays a uint32 item type, a uint64 count and the items. All little-endian.
 */

export type GgufValue = string | number | bigint | boolean | GgufValue[];

export interface GgufHeader {
  version: number;
  tensorCount: number;
  metadata: Record<string, GgufValue>;
}

/** Arrays longer than this (token lists) are summarised by their length only. */
const MAX_ARRAY_ITEMS = 16;

class Reader {
  private buffer = Buffer.alloc(0);
  private offset = 0;
  private position = 0;

  constructor(private readonly fd: number) {}

  private need(n: number): void {
    if (this.buffer.length - this.offset >= n) return;
    const rest = this.buffer.subarray(this.offset);
    const chunk = Buffer.alloc(Math.max(n, 1 << 20));
    const read = readSync(this.fd, chunk, 0, chunk.length, this.position);
    this.position += read;
    this.buffer = Buffer.concat([rest, chunk.subarray(0, read)]);
    this.offset = 0;
    if (this.buffer.length < n) throw new Error('the file ends inside its GGUF header');
  }

  u8(): number {
    this.need(1);
    return this.buffer.readUInt8(this.offset++);
  }
  u32(): number {
    this.need(4);
    const v = this.buffer.readUInt32LE(this.offset);
    this.offset += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.buffer.readBigUInt64LE(this.offset);
    this.offset += 8;
    return v;
  }
  bytes(n: number): Buffer {
    this.need(n);
    const v = this.buffer.subarray(this.offset, this.offset + n);
    this.offset += n;
    return v;
  }
  string(): string {
    const length = Number(this.u64());
    if (length > 64 * 1024 * 1024) throw new Error(`a GGUF string of ${length} bytes: not a GGUF file`);
    return this.bytes(length).toString('utf8');
  }

  value(type: number): GgufValue {
    switch (type) {
      case 0:
        return this.u8();
      case 1:
        return this.bytes(1).readInt8(0);
      case 2:
        return this.bytes(2).readUInt16LE(0);
      case 3:
        return this.bytes(2).readInt16LE(0);
      case 4:
        return this.u32();
      case 5:
        return this.bytes(4).readInt32LE(0);
      case 6:
        return this.bytes(4).readFloatLE(0);
      case 7:
        return this.u8() !== 0;
      case 8:
        return this.string();
      case 9: {
        const itemType = this.u32();
        const count = Number(this.u64());
        const items: GgufValue[] = [];
        for (let i = 0; i < count; i++) {
          const item = this.value(itemType);
          if (i < MAX_ARRAY_ITEMS) items.push(item);
        }
        return count > MAX_ARRAY_ITEMS ? [...items, `… ${count} items`] : items;
      }
      case 10:
        return this.u64();
      case 11:
        return this.bytes(8).readBigInt64LE(0);
      case 12:
        return this.bytes(8).readDoubleLE(0);
      default:
        throw new Error(`unknown GGUF value type ${type}`);
    }
  }
}

export function readGgufHeader(file: string): GgufHeader {
  const fd = openSync(file, 'r');
  try {
    const r = new Reader(fd);
    const magic = r.bytes(4).toString('latin1');
    if (magic !== 'GGUF') throw new Error(`${file} is not a GGUF file (it starts with ${JSON.stringify(magic)})`);
    const version = r.u32();
    if (version < 2 || version > 3) throw new Error(`${file}: GGUF version ${version} is not one this reader knows (2, 3)`);
    const tensorCount = Number(r.u64());
    const kvCount = Number(r.u64());
    const metadata: Record<string, GgufValue> = {};
    for (let i = 0; i < kvCount; i++) {
      const key = r.string();
      metadata[key] = r.value(r.u32());
    }
    return { version, tensorCount, metadata };
  } finally {
    closeSync(fd);
  }
}

/** What the install records of a header: who the model is, and what it says of itself. */
export function describeGguf(header: GgufHeader): Record<string, string | number | boolean> {
  const m = header.metadata;
  const text = (key: string) => (typeof m[key] === 'string' ? (m[key] as string) : undefined);
  const arch = text('general.architecture') ?? '';
  const template = text('tokenizer.chat_template');
  const out: Record<string, string | number | boolean> = { ggufVersion: header.version, tensors: header.tensorCount, architecture: arch };
  for (const [from, to] of [
    ['general.name', 'name'],
    ['general.basename', 'basename'],
    ['general.size_label', 'sizeLabel'],
    ['general.license', 'license'],
    ['general.organization', 'organization'],
  ] as const) {
    const v = text(from);
    if (v !== undefined) out[to] = v;
  }
  const fileType = m['general.file_type'];
  if (typeof fileType === 'number') out.fileType = fileType;
  const context = m[`${arch}.context_length`];
  if (typeof context === 'number') out.contextLength = context;
  out.chatTemplate = template ? (/<tool_call>/.test(template) ? 'embedded, with tool calls' : 'embedded') : 'none';
  return out;
}
