import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { atLeast, findDocument, requireRole, targetFolder, userRole } from './access.js';
import { addDocument, documentArg, folderArg, log, nowIso, saveVersion, tool } from './drive.js';
import { exposing } from './exposure.js';
import { checkSheetSize, withCells } from './sheets.js';
import { documentType, type DriveDocument, type DriveState } from './state.js';
import { itemSummary } from './views.js';

/** Creating documents and changing what they say: text, spreadsheet cells and rows, copies. */

const rowsArg = (what: string) => z.array(z.array(z.string()).describe('One row: cell values, column A first')).describe(what);

function requireText(doc: DriveDocument): void {
  if (doc.type === 'spreadsheet') throw new ToolError(`"${doc.title}" is a spreadsheet; use update_spreadsheet_cells or append_spreadsheet_rows`);
}

function requireSheet(doc: DriveDocument): void {
  if (doc.type !== 'spreadsheet') throw new ToolError(`"${doc.title}" is a text document; use update_document or append_to_document`);
}

function editable(state: DriveState, ref: string): DriveDocument {
  const doc = findDocument(state, ref);
  requireRole(state, doc, 'editor', 'edit it');
  return doc;
}

function saved(state: DriveState, doc: DriveDocument, body: { content?: string; rows?: string[][] }, detail?: string) {
  const version = saveVersion(state, doc, body);
  if (version) log(state, doc, { action: 'edited', version: version.number, ...(detail ? { detail } : {}) });
  return { id: doc.id, title: doc.title, version: doc.versions.at(-1)?.number ?? 0, status: version ? 'updated' : 'unchanged' };
}

export const editTools: ToolSpec<DriveState>[] = [
  tool({
    name: 'create_document',
    description: 'Create a text document or a spreadsheet, at the top of the drive or in a folder you can edit.',
    input: z.object({
      title: z.string().min(1).describe('Title of the new document'),
      type: documentType.optional().describe('document (default) or spreadsheet'),
      folder: folderArg.optional(),
      content: z.string().optional().describe('Text of a document'),
      rows: rowsArg('Rows of a spreadsheet, row 1 first').optional(),
    }),
    handler(state, args, ctx) {
      const type = args.type ?? (args.rows !== undefined ? 'spreadsheet' : 'document');
      if (type === 'spreadsheet' && args.content !== undefined) throw new ToolError('a spreadsheet is written as rows: give rows, not content');
      if (type === 'document' && args.rows !== undefined) throw new ToolError('rows are for spreadsheets: give content, or type spreadsheet');
      if (args.rows) checkSheetSize(args.rows);
      const folder = targetFolder(state, args.folder);
      return exposing(state, ctx, () => {
        const doc = addDocument(state, {
          title: args.title,
          type,
          folder: folder?.id ?? null,
          owner: state.user,
          content: args.content,
          rows: args.rows,
          created: nowIso(state),
        });
        log(state, doc, { action: 'created' });
        return { ...itemSummary(state, doc), version: 1 };
      });
    },
  }),
  tool({
    name: 'update_document',
    description: 'Replace the whole text of a document. The previous text stays in the version history.',
    input: z.object({ document: documentArg, content: z.string().describe('The complete new text') }),
    handler(state, args, ctx) {
      const doc = editable(state, args.document);
      requireText(doc);
      return exposing(state, ctx, () => saved(state, doc, { content: args.content }));
    },
  }),
  tool({
    name: 'append_to_document',
    description: 'Add text at the end of a document, on a new line.',
    input: z.object({ document: documentArg, text: z.string().min(1).describe('Text to add') }),
    handler(state, args, ctx) {
      const doc = editable(state, args.document);
      requireText(doc);
      const joiner = doc.content === '' || doc.content.endsWith('\n') ? '' : '\n';
      return exposing(state, ctx, () => saved(state, doc, { content: `${doc.content}${joiner}${args.text}` }, 'appended'));
    },
  }),
  tool({
    name: 'update_spreadsheet_cells',
    description: 'Write values into cells of a spreadsheet (A1 notation); rows and columns are added as needed.',
    input: z.object({
      document: documentArg,
      cells: z
        .array(z.object({ cell: z.string().min(1).describe('Cell address, e.g. B3'), value: z.string().describe('New value ("" clears the cell)') }))
        .min(1)
        .max(500)
        .describe('The cells to write'),
    }),
    handler(state, args, ctx) {
      const doc = editable(state, args.document);
      requireSheet(doc);
      const rows = withCells(doc.rows ?? [], args.cells);
      checkSheetSize(rows);
      return exposing(state, ctx, () => ({
        ...saved(state, doc, { rows }, `cells ${args.cells.map((c) => c.cell.toUpperCase()).join(', ')}`),
        cells: args.cells.length,
      }));
    },
  }),
  tool({
    name: 'append_spreadsheet_rows',
    description: 'Add rows at the bottom of a spreadsheet.',
    input: z.object({ document: documentArg, rows: rowsArg('Rows to add, in order').min(1).max(1000) }),
    handler(state, args, ctx) {
      const doc = editable(state, args.document);
      requireSheet(doc);
      const rows = [...(doc.rows ?? []).map((r) => [...r]), ...args.rows.map((r) => [...r])];
      checkSheetSize(rows);
      return exposing(state, ctx, () => ({ ...saved(state, doc, { rows }, `${args.rows.length} rows appended`), rowCount: rows.length }));
    },
  }),
  tool({
    name: 'copy_document',
    description:
      "Make a copy of a document you can open, owned by you. The copy has the current content only: no comments, history or sharing. By default it goes into the original's folder when you can edit it, else to the top of the drive.",
    input: z.object({
      document: documentArg,
      title: z.string().min(1).optional().describe('Title of the copy (default "Copy of <title>")'),
      folder: folderArg.optional(),
    }),
    handler(state, args, ctx) {
      const source = findDocument(state, args.document);
      const sourceFolder = state.folders.find((f) => f.id === source.folder);
      const folder =
        args.folder !== undefined
          ? targetFolder(state, args.folder)
          : sourceFolder && !sourceFolder.trashed && atLeast(userRole(state, sourceFolder), 'editor')
            ? sourceFolder
            : null;
      return exposing(state, ctx, () => {
        const copy = addDocument(state, {
          title: args.title ?? `Copy of ${source.title}`,
          type: source.type,
          folder: folder?.id ?? null,
          owner: state.user,
          content: source.content,
          rows: source.rows,
          created: nowIso(state),
        });
        log(state, copy, { action: 'copied', detail: `copy of ${source.id}` });
        return { ...itemSummary(state, copy), copiedFrom: source.id };
      });
    },
  }),
];
