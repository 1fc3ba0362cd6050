import { readdir, readFile } from 'node:fs/promises';
import { basename, extname, join, relative, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { sourceRecord } from '../../taxonomy/taxonomy-schema.js';
import { extractPdfText } from './pdf-text.js';
import { canonicalSourceId, type SourceDocument } from './source-document.js';

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
  const front = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(source);
  if (front) {
    try {
      const parsed: unknown = parseYaml(front[1]!);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) meta = parsed as Record<string, unknown>;
    } catch (error) {
      throw new Error(`${at.file}: the front matter is not valid YAML (${(error as Error).message.split('\n')[0]})`);
    }
    body = source.slice(front[0].length);
  }
  const text = (key: string) => (typeof meta[key] === 'string' && (meta[key] as string).trim() ? (meta[key] as string).trim() : undefined);
  const kind = sourceRecord.shape.kind.safeParse(text('kind') ?? 'note');
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
  return doc;
}

function firstLine(text: string): string {
  return text.split('\n').map((l) => l.trim()).find(Boolean)?.slice(0, 200) ?? '';
}
