import { readdir, readFile } from 'node:fs/promises';
import { basename, extname, join, relative, sep } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { documentKind, publisher, unverifiedReason } from '../../taxonomy/taxonomy-schema.js';
import { conceptOperation } from '../summary-agent.js';
import { extractPdfText } from './pdf-text.js';
import { canonicalSourceId, type SourceDocument } from './source-document.js';

/** A document may declare more concepts than a model reply may hold (a framework lists many). */
const declaredConcepts = z.array(conceptOperation).max(200);

const TEXT_EXTENSIONS = new Set(['.md', '.markdown', '.txt']);

/**
 * Documents from a local folder (searched recursively): Markdown and plain text, and PDF when the
 * optional `pdfjs-dist` package is installed. A Markdown file may start with front matter:
 *
 *   ---
 *   id: arxiv:2403.02691        # the source id evidence cites (default doc:<path without extension>)
 *   title: InjecAgent …         # default: the first "# " heading, else the file name
 *   url: https://arxiv.org/abs/2403.02691   # two files with one URL are one source
 *   kind: paper                 # paper | advisory | technique | note | report | framework
 *   publisher: …                # who issued it: the organisation, or a paper's research group
 *   unverified: …               # only when the URL and title could not be confirmed: why
 *   concepts:                   # optional: what the document supports, as the summary agent would say
 *     - { operation: update, tree: attacks, node: prompt-injection/indirect, term: indirect prompt injection, phase: inference }
 *   ---
 */
export async function loadDocumentFolder(dir: string): Promise<SourceDocument[]> {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (error) {
    throw new Error(`cannot read the document folder ${dir}: ${(error as Error).message}`);
  }
  const files = entries
    .filter((e) => e.isFile() && (TEXT_EXTENSIONS.has(extname(e.name).toLowerCase()) || extname(e.name).toLowerCase() === '.pdf'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
  const docs: SourceDocument[] = [];
  for (const file of files) {
    const rel = relative(dir, file).split(sep).join('/');
    const origin = `docs:${rel}`;
    const fallbackId = `doc:${rel.replace(/\.[^.]+$/, '')}`;
    if (extname(file).toLowerCase() === '.pdf') {
      const text = await extractPdfText(file);
      docs.push({ id: canonicalSourceId(fallbackId), title: firstLine(text) || basename(file), text, kind: 'paper', origin });
      continue;
    }
    docs.push(parseTextDocument(await readFile(file, 'utf8'), { file: rel, origin, fallbackId }));
  }
  return docs;
}

export function parseTextDocument(source: string, at: { file: string; origin: string; fallbackId: string }): SourceDocument {
  let body = source;
  let meta: Record<string, unknown> = {};
  let lineOf = (_path: ReadonlyArray<string | number>) => 1;
  const front = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(source);
  if (front) {
    const lines = new LineCounter();
    const yamlDoc = parseDocument(front[1]!, { lineCounter: lines });
    if (yamlDoc.errors.length > 0) {
      const first = yamlDoc.errors[0]!;
      throw new Error(`${at.file}:${(first.linePos?.[0].line ?? 0) + 1}: the front matter is not valid YAML (${first.message.split('\n')[0]})`);
    }
    const parsed: unknown = yamlDoc.toJS();
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) meta = parsed as Record<string, unknown>;
    // Lines count from the file's first line: the opening "---" is line 1.
    lineOf = (path) => {
      const node = yamlDoc.getIn(path, true) as { range?: [number, number, number] } | undefined;
      return node?.range ? lines.linePos(node.range[0]).line + 1 : 1;
    };
    body = source.slice(front[0].length);
  }
  const text = (key: string) => (typeof meta[key] === 'string' && (meta[key] as string).trim() ? (meta[key] as string).trim() : undefined);
  const kind = documentKind.safeParse(text('kind') ?? 'note');
  if (!kind.success) throw new Error(`${at.file}: front matter kind: expected paper, advisory, technique, note, report or framework`);
  const heading = /^#\s+(.+)$/m.exec(body)?.[1]?.trim();
  const doc: SourceDocument = {
    id: canonicalSourceId(text('id') ?? at.fallbackId),
    title: text('title') ?? heading ?? basename(at.file),
    text: body.trim(),
    kind: kind.data,
    origin: at.origin,
  };
  const url = text('url');
  if (url) doc.url = url;
  for (const [key, schema] of [
    ['publisher', publisher],
    ['unverified', unverifiedReason],
  ] as const) {
    if (meta[key] === undefined) continue;
    const value = schema.safeParse(meta[key]);
    if (!value.success) throw new Error(`${at.file}:${lineOf([key])}: front matter ${key}: ${value.error.issues[0]!.message}`);
    doc[key] = value.data;
  }
  if (meta.concepts !== undefined) {
    const concepts = declaredConcepts.safeParse(meta.concepts);
    if (!concepts.success) {
      const issue = concepts.error.issues[0]!;
      const path = ['concepts', ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))];
      const field = path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
      throw new Error(`${at.file}:${lineOf(path)}: front matter ${field}: ${issue.message}`);
    }
    doc.concepts = concepts.data;
  }
  return doc;
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean)
      ?.slice(0, 200) ?? ''
  );
}
