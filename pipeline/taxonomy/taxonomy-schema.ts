import { z } from 'zod';

/**
 * The three taxonomy trees (risks, attack methods, environments) as stored under cases/taxonomy/.
 * A node's id is one path segment; its full id is the `/`-path from the root
 * (`data-exfiltration/credential-leak`), which is what cases put in `taxonomy.risk`.
 * docs/pipeline.md documents the format.
 */

export const treeKinds = ['risks', 'attacks', 'environments'] as const;
export const treeKind = z.enum(treeKinds);
export type TreeKind = z.infer<typeof treeKind>;

export const nodeId = z.string().regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'a node id is lower-case letters, digits and "-"');
export const nodePath = z
  .string()
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\/[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'a node path is "/"-separated node ids, e.g. data-exfiltration/credential-leak');
/**
 * Source ids are lower-case: `owasp-llm01-2025`, `arxiv:2402.01234`, `cve:cve-2025-0001`, `doc:notes/x`,
 * and for safety records `record:<case id>@<threat model>` (the `@` keeps case and threat model apart,
 * since both contain `-`).
 */
export const sourceId = z.string().regex(/^[a-z0-9][a-z0-9:._/@-]*$/, 'a source id is lower-case letters, digits and ":._/@-"');

export const RECORD_SOURCE_PREFIX = 'record:';

/** A safety record as evidence (`vera explore --records`), not a document. */
export function isRecordSource(id: string): boolean {
  return id.startsWith(RECORD_SOURCE_PREFIX);
}

/** A citation of a public framework entry (written for humans; `evidence` holds the source ids). */
export const reference = z.strictObject({
  framework: z.string().min(2),
  id: z.string().min(1),
  name: z.string().min(2),
  url: z.url(),
});
export type Reference = z.infer<typeof reference>;

const oneOrMany = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]));

/**
 * What a risk (or attack) needs from an environment's tools: an action (one of several) on a
 * resource (one of several; omitted = any). Compose keeps a tuple only when the environment's
 * declared capabilities meet every need (pipeline/capabilities.ts).
 */
export const need = z.strictObject({ action: oneOrMany, resource: oneOrMany.optional() });
export type Need = z.infer<typeof need>;

/**
 * Where a risk's harm shows, as a verifier reads it (risk trees only): a change of the environment's
 * state, data leaving through an external channel, a tool call, or the agent's words. A compiled
 * case's verifier must see one of its risk's observables on every way it can hold (inherited by
 * children; a leaf may narrow its branch's).
 */
export const observableKind = z.enum(['state', 'egress', 'tool-call', 'response']);
export type ObservableKind = z.infer<typeof observableKind>;

export interface TaxonomyNode {
  id: string;
  name: string;
  description: string;
  evidence: string[];
  references: Reference[];
  needs?: Need[];
  observables?: ObservableKind[];
  children: TaxonomyNode[];
}

export const taxonomyNode: z.ZodType<TaxonomyNode> = z.strictObject({
  id: nodeId,
  name: z.string().min(2),
  description: z.string().min(10, 'describe the class in a sentence'),
  evidence: z.array(sourceId).default([]),
  references: z.array(reference).default([]),
  needs: z.array(need).optional(),
  observables: z.array(observableKind).min(1).optional(),
  get children() {
    return z.array(taxonomyNode).default([]);
  },
}) as unknown as z.ZodType<TaxonomyNode>;

/** One distinct `needs` list proposed for a pending candidate, with the sources that proposed it. */
export const needsProposal = z.strictObject({
  needs: z.array(need).min(1),
  sources: z.array(sourceId).min(1),
});
export type NeedsProposal = z.infer<typeof needsProposal>;

/** A candidate leaf waiting for enough distinct sources (see `createThreshold`). */
export const pendingNode = z.strictObject({
  path: nodePath,
  name: z.string().min(2),
  description: z.string().min(1),
  evidence: z.array(sourceId).min(1),
  terms: z.array(z.string()).default([]),
  /** What the leaf will get on promotion: the needs at least half of the sources in `proposedNeeds` named. */
  needs: z.array(need).optional(),
  /**
   * Every distinct needs list proposed so far, kept so the agreement is recomputed over all the
   * sources (also across runs) rather than frozen at the first proposal.
   */
  proposedNeeds: z.array(needsProposal).optional(),
});
export type PendingNode = z.infer<typeof pendingNode>;

/** A concept refused as out of scope, with the reason and the sources that proposed it. */
export const rejectedConcept = z.strictObject({
  term: z.string().min(1),
  reason: z.string().min(1),
  sources: z.array(sourceId).default([]),
});
export type RejectedConcept = z.infer<typeof rejectedConcept>;

export const taxonomyTreeFile = z.strictObject({
  schema: z.literal('vera.taxonomy/v1'),
  tree: treeKind,
  description: z.string().default(''),
  nodes: z.array(taxonomyNode),
  pending: z.array(pendingNode).default([]),
  /** Ids of merged nodes → the node they became (`old/path: new/path`). */
  redirects: z.record(nodePath, nodePath).default({}),
  rejected: z.array(rejectedConcept).default([]),
});
export type TaxonomyTree = z.infer<typeof taxonomyTreeFile>;

/** What a document can be (front matter `kind`). */
export const documentKind = z.enum(['framework', 'paper', 'advisory', 'technique', 'note', 'report']);
export type DocumentKind = z.infer<typeof documentKind>;

/**
 * Who issued a source: the organisation behind it (MITRE for CWE, ATLAS, ATT&CK and CAPEC; OWASP for
 * its lists; NIST; CISA; a vendor for its own documentation), and for a paper or benchmark its authors'
 * research group (one group's papers are one publisher). Declared per document (front matter
 * `publisher`) and copied into sources.yaml; a leaf's sources must come from ≥ 3 distinct publishers.
 * Publishers are compared as written, so one organisation is always spelled one way.
 */
export const publisher = z.string().trim().min(2, 'name the organisation or research group that issued the source');
/**
 * Set on a citation whose URL and title could not be confirmed against the published source: why
 * (front matter `unverified`). A citation without it was checked.
 */
export const unverifiedReason = z.string().trim().min(10, 'say why the citation could not be verified');

export const sourceRecord = z.strictObject({
  title: z.string().min(1),
  url: z.url().optional(),
  /** Who issued it (`publisher`); absent on safety records, which are this project's own runs. */
  publisher: publisher.optional(),
  /** Why its URL and title could not be confirmed; absent when they were. */
  unverified: unverifiedReason.optional(),
  /** A document's kind, or `record`: a violated safety record of a past run (`vera explore --records`). */
  kind: z.enum([...documentKind.options, 'record']).default('note'),
  /** Where the document was read (`docs:papers/x.md`, `feed:atlas.yaml`, `arxiv`). */
  origin: z.string().optional(),
  /** Set when a later document retracted this one. */
  retractedBy: z.array(sourceId).optional(),
});
export type SourceRecord = z.infer<typeof sourceRecord>;

export const sourcesFile = z.strictObject({
  schema: z.literal('vera.sources/v1'),
  sources: z.record(sourceId, sourceRecord),
});
export type SourcesFile = z.infer<typeof sourcesFile>;

/** Exploration state carried between runs: the next query frontier and the documents already read. */
export const explorationFile = z.strictObject({
  schema: z.literal('vera.exploration/v1'),
  frontier: z.array(z.string()).default([]),
  processed: z.array(sourceId).default([]),
});
export type ExplorationState = z.infer<typeof explorationFile>;
