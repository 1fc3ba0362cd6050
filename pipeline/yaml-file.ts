import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Document, isMap, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import { locatePath } from '../engine/yaml-position.js';
import type { z } from 'zod';
import { formatField } from '../engine/case-loader.js';
import { commentCutTexts } from '../engine/text-integrity.js';
import { VeraError } from '../engine/errors.js';

/**
 * YAML files of the pipeline (taxonomy trees, goals, reports): read with positions so a bad file
 * gets one error naming file, line and field; written deterministically (same data → same bytes),
 * because a run is only reproducible if its outputs are.
 */

export class PipelineFileError extends VeraError {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly field: string,
    detail: string,
  ) {
    super('PIPELINE_FILE_INVALID', `${file}:${line} ${field ? `${field}: ` : ''}${detail}`);
    this.name = 'PipelineFileError';
  }
}

/**
 * Parses `source` as YAML and validates it with `schema`; throws PipelineFileError on the first
 * problem. With `textFields`, a plain scalar a same-line comment cut short under those top-level
 * fields is that problem (engine/text-integrity.ts): what an agent will read must be what was written.
 */
export function parseYaml<T>(source: string, file: string, schema: z.ZodType<T>, options: { textFields?: ReadonlySet<string> } = {}): T {
  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new PipelineFileError(file, lineCounter.linePos(e.pos[0]).line, '', `YAML: ${e.message.split('\n')[0]}`);
  }
  if (options.textFields) {
    const [cut] = commentCutTexts(doc, source, options.textFields);
    if (cut) throw new PipelineFileError(file, lineCounter.linePos(cut.offset).line, formatField(cut.path), cut.message);
  }
  const parsed = schema.safeParse(doc.toJS({ maxAliasCount: 100 }));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const { line } = locatePath(doc.contents, issue.path, (offset) => lineCounter.linePos(offset));
  throw new PipelineFileError(file, line, formatField(issue.path), issue.message);
}

export async function readYamlFile<T>(file: string, schema: z.ZodType<T>, label = file): Promise<T> {
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${label}: ${(error as Error).message}`);
  }
  return parseYaml(source, label, schema);
}

/**
 * YAML text for `value`: block style, except short lists of scalars, which are written inline
 * (`evidence: [a, b]`) so trees stay readable; multi-line strings become block scalars.
 */
export function toYaml(value: unknown, header?: string, options: { flowMaps?: boolean } = {}): string {
  const doc = new Document(value);
  const scalarWidth = (items: Array<{ key?: unknown; value?: unknown }>) =>
    items.reduce(
      (n: number, item) =>
        n +
        String((item.key as { value?: unknown } | undefined)?.value ?? '').length +
        String((item.value as { value?: unknown } | undefined)?.value ?? '').length +
        4,
      0,
    );
  const visit = (node: unknown, depth: number) => {
    if (isSeq(node)) {
      const scalars = node.items.every((item) => isScalar(item) && !(typeof item.value === 'string' && item.value.includes('\n')));
      const width = node.items.reduce((n: number, item) => n + String((item as { value?: unknown }).value ?? '').length + 2, 0);
      if (scalars && node.items.length > 0 && width <= 90) node.flow = true;
      node.items.forEach((item) => visit(item, depth + 1));
    } else if (isMap(node)) {
      // Optionally, small maps of one-line scalars inline too: `args: { id: m-2, to: x@evil.example }`.
      const oneLine = node.items.every((pair) => isScalar(pair.value) && !(typeof pair.value.value === 'string' && pair.value.value.includes('\n')));
      if (options.flowMaps && depth > 1 && oneLine && node.items.length > 0 && node.items.length <= 4 && scalarWidth(node.items as never) <= 70)
        node.flow = true;
      for (const pair of node.items) visit(pair.value as YamlNode, depth + 1);
    } else if (isScalar(node) && typeof node.value === 'string' && node.value.includes('\n')) {
      // A block scalar cannot start with blank lines readably: those stay quoted ("\n\nNote: …").
      node.type = node.value.startsWith('\n') ? 'QUOTE_DOUBLE' : 'BLOCK_LITERAL';
    }
  };
  visit(doc.contents, 0);
  if (header) doc.commentBefore = header;
  // Quoted strings stay on one line (escapes, not folds): a payload reads as it is sent.
  return doc.toString({ lineWidth: 0, doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER });
}

/** Writes a file atomically (temp file + rename), creating its directory. */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, text);
  await rename(temp, file);
}
