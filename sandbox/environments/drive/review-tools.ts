import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { atLeast, findDocument, requireRole, userRole } from './access.js';
import { documentArg, log, newId, nowIso, saveVersion, tool } from './drive.js';
import { exposing } from './exposure.js';
import type { DocumentComment, DocumentVersion, DriveDocument, DriveState } from './state.js';

/** Comments on documents, and the version history: restoring an old version, deleting one. */

const commentArg = z.string().min(1).describe('Comment id, as shown by read_document (e.g. cm-3)');
const versionArg = z.int().min(1).describe('Version number, as listed by list_document_versions');

function getComment(doc: DriveDocument, id: string): DocumentComment {
  const comment = doc.comments.find((c) => c.id === id.trim());
  if (!comment) throw new ToolError(`"${doc.title}" has no comment "${id}"`);
  return comment;
}

/** Its author, or an editor of the document, may resolve or delete a comment. */
function requireCommentControl(state: DriveState, doc: DriveDocument, comment: DocumentComment, action: string): void {
  requireRole(state, doc, 'commenter', `${action} comments`);
  if (comment.author !== state.user && !atLeast(userRole(state, doc), 'editor')) {
    throw new ToolError(`comment ${comment.id} is by ${comment.author}; only its author or an editor can ${action} it`);
  }
}

function getVersion(doc: DriveDocument, number: number): DocumentVersion {
  const v = doc.versions.find((x) => x.number === number);
  if (!v) throw new ToolError(`"${doc.title}" has no version ${number} (versions: ${doc.versions.map((x) => x.number).join(', ') || 'none'})`);
  return v;
}

export const reviewTools: ToolSpec<DriveState>[] = [
  tool({
    name: 'add_document_comment',
    description: 'Comment on a document, optionally on a passage of its text. Needs commenter access.',
    input: z.object({
      document: documentArg,
      body: z.string().min(1).describe('Text of the comment'),
      quote: z.string().min(1).optional().describe('The passage of the document the comment is about (must appear in it)'),
    }),
    handler(state, args, ctx) {
      const doc = findDocument(state, args.document);
      requireRole(state, doc, 'commenter', 'comment on it');
      if (args.quote !== undefined && !doc.content.includes(args.quote)) throw new ToolError(`the quoted passage is not in "${doc.title}"`);
      return exposing(state, ctx, () => {
        const comment: DocumentComment = {
          id: newId(state, 'cm'),
          author: state.user,
          body: args.body,
          time: nowIso(state),
          quote: args.quote ?? '',
          resolved: false,
        };
        doc.comments.push(comment);
        log(state, doc, { action: 'commented', detail: comment.id });
        return { document: doc.id, comment: { ...comment } };
      });
    },
  }),
  tool({
    name: 'resolve_document_comment',
    description: 'Mark a comment on a document as resolved.',
    input: z.object({ document: documentArg, comment: commentArg }),
    handler(state, args) {
      const doc = findDocument(state, args.document);
      const comment = getComment(doc, args.comment);
      requireCommentControl(state, doc, comment, 'resolve');
      if (comment.resolved) throw new ToolError(`comment ${comment.id} is already resolved`);
      comment.resolved = true;
      log(state, doc, { action: 'comment_resolved', detail: comment.id });
      return { document: doc.id, comment: comment.id, resolved: true };
    },
  }),
  tool({
    name: 'delete_document_comment',
    description: 'Delete a comment from a document.',
    input: z.object({ document: documentArg, comment: commentArg }),
    handler(state, args) {
      const doc = findDocument(state, args.document);
      const comment = getComment(doc, args.comment);
      requireCommentControl(state, doc, comment, 'delete');
      doc.comments.splice(doc.comments.indexOf(comment), 1);
      log(state, doc, { action: 'comment_deleted', detail: `${comment.id} by ${comment.author}` });
      return { document: doc.id, comment: comment.id, status: 'deleted' };
    },
  }),
  tool({
    name: 'restore_document_version',
    description: 'Make an earlier version the current content of a document. This saves a new version; the history is kept. Needs editor access.',
    input: z.object({ document: documentArg, version: versionArg }),
    handler(state, args, ctx) {
      const doc = findDocument(state, args.document);
      requireRole(state, doc, 'editor', 'restore its versions');
      const v = getVersion(doc, args.version);
      if (v === doc.versions.at(-1)) throw new ToolError(`version ${v.number} is already the current version of "${doc.title}"`);
      return exposing(state, ctx, () => {
        const saved = saveVersion(state, doc, { content: v.content, rows: v.rows });
        log(state, doc, { action: 'version_restored', version: v.number, ...(saved ? { detail: `saved as version ${saved.number}` } : {}) });
        return { document: doc.id, restored: v.number, version: doc.versions.at(-1)!.number, status: saved ? 'restored' : 'unchanged' };
      });
    },
  }),
  tool({
    name: 'delete_document_version',
    description: "Delete an earlier version from a document's history for good. The current version cannot be deleted. Needs editor access.",
    input: z.object({ document: documentArg, version: versionArg }),
    handler(state, args) {
      const doc = findDocument(state, args.document);
      requireRole(state, doc, 'editor', 'delete its versions');
      const v = getVersion(doc, args.version);
      if (v === doc.versions.at(-1)) throw new ToolError(`version ${v.number} is the current version of "${doc.title}" and cannot be deleted`);
      doc.versions.splice(doc.versions.indexOf(v), 1);
      log(state, doc, { action: 'version_deleted', version: v.number });
      return { document: doc.id, deleted: v.number, remaining: doc.versions.map((x) => x.number) };
    },
  }),
];
