import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeChangelog } from '../../pipeline/explore/changelog.js';
import { explore } from '../../pipeline/explore/explore.js';
import { DEFAULT_CREATE_THRESHOLD } from '../../pipeline/explore/operations.js';
import { loadFeedbackRecords, type FeedbackRecord } from '../../pipeline/explore/records-feedback.js';
import { ArxivSource } from '../../pipeline/explore/sources/arxiv.js';
import { DocumentCorpus } from '../../pipeline/explore/sources/document-corpus.js';
import { loadFeedFile } from '../../pipeline/explore/sources/feeds.js';
import { loadDocumentFolder } from '../../pipeline/explore/sources/local-folder.js';
import type { DocumentSource, SourceDocument } from '../../pipeline/explore/sources/source-document.js';
import { MODEL_FLAGS_USAGE, modelFlags, number, openPipelineModel } from '../../pipeline/llm/model-flags.js';
import { DEFAULT_TAXONOMY_DIR, Taxonomy } from '../../pipeline/taxonomy/taxonomy.js';
import { isRecordSource } from '../../pipeline/taxonomy/taxonomy-schema.js';
import type { CliCommand } from '../main.js';
import { findFiles } from '../find-files.js';
import { CaseUsage } from '../../pipeline/explore/case-usage.js';

/**
 * `vera explore`: reads documents (local folders, feed files, arXiv when reachable) with the
 * summary agent and updates the taxonomy trees under cases/taxonomy/, writing a changelog.
 */
export const exploreCommand: CliCommand = {
  name: 'explore',
  summary: 'update the risk/attack/environment trees from documents (LLM summary agent)',
  usage: [
    'vera explore [--docs <dir>]… [--feed <file>]… [--arxiv [--arxiv-endpoint <url>]] [--query <text>]…',
    '             [--records <dir>]… [--budget 20] [--per-query 3] [--max-queries 5] [--max-iterations 20] [--threshold 5]',
    `             [--taxonomy ${DEFAULT_TAXONOMY_DIR}] [--write-to <dir>] [--out .vera/explore] [--dry-run] [--repairs 1]`,
    '             [--cases cases]… [--confirm-retractions]',
    `             ${MODEL_FLAGS_USAGE}`,
    '  --records    safety records of past runs (typically .vera/records; default none): risk and attack leaves',
    '               with violations (ASR > 0) or mostly N/A runs become the first queries, and violated runs',
    '               become evidence (source "record:<case>@<threat model>") of the nodes they exercised —',
    '               supporting existing nodes only, never counting toward the sources a new leaf needs',
    "  --declared   no model: apply each document's front-matter concepts (rebuilds the bundled trees:",
    '               vera explore --declared --fresh --docs cases/taxonomy/corpus --budget 1000)',
    "  --fresh      start from empty trees (the files' descriptions and the risks' observables kept) instead of the current ones",
    '  --confirm-retractions  delete a node a retraction leaves without evidence even when cases (under --cases,',
    '               default cases/) use it; without it such a deletion is held and reported in the changelog',
  ].join('\n'),
  async run(args, io) {
    const { values } = parseArgs({
      args,
      allowPositionals: false,
      options: {
        docs: { type: 'string', multiple: true },
        feed: { type: 'string', multiple: true },
        arxiv: { type: 'boolean' },
        'arxiv-endpoint': { type: 'string' },
        query: { type: 'string', multiple: true },
        records: { type: 'string', multiple: true },
        budget: { type: 'string' },
        'per-query': { type: 'string' },
        'max-queries': { type: 'string' },
        'max-iterations': { type: 'string' },
        threshold: { type: 'string' },
        taxonomy: { type: 'string' },
        'write-to': { type: 'string' },
        out: { type: 'string' },
        'dry-run': { type: 'boolean' },
        declared: { type: 'boolean' },
        fresh: { type: 'boolean' },
        cases: { type: 'string', multiple: true },
        repairs: { type: 'string' },
        'confirm-retractions': { type: 'boolean' },
        ...modelFlags,
      },
    });
    const at = (p: string) => resolve(io.cwd, p);
    const int = (flag: string, fallback: number, min = 1) =>
      values[flag as keyof typeof values] === undefined ? fallback : number(String(values[flag as keyof typeof values]), `--${flag}`, { min, integer: true });
    const budget = int('budget', 20);
    const threshold = int('threshold', DEFAULT_CREATE_THRESHOLD);

    const sources: DocumentSource[] = [];
    const documents: SourceDocument[] = [];
    for (const dir of values.docs ?? []) documents.push(...(await loadDocumentFolder(at(dir))));
    for (const file of values.feed ?? []) documents.push(...(await loadFeedFile(at(file))));
    if (documents.length > 0) sources.push(new DocumentCorpus('local', documents));
    if (values.arxiv) {
      const arxiv = new ArxivSource(values['arxiv-endpoint'] ? { endpoint: values['arxiv-endpoint'] } : {});
      const problem = await arxiv.probe();
      if (problem) io.err(`vera explore: ${problem}`);
      else sources.push(arxiv);
    }
    if (sources.length === 0) {
      io.err('vera explore: no document source to read: give --docs <dir>, --feed <file> or --arxiv (when the network allows)');
      return 1;
    }

    const records: FeedbackRecord[] = [];
    for (const dir of values.records ?? []) {
      const found = await loadFeedbackRecords(dir, io.cwd);
      if (found.length === 0) io.out(`--records ${dir}: no safety records (vera.record/v1 JSON files) found`);
      records.push(...found);
    }

    // The cases whose rows a retraction could delete (held unless --confirm-retractions).
    const usage = await CaseUsage.of(await findFiles(values.cases ?? ['cases'], /\.case\.ya?ml$/, io.cwd).catch(() => []));
    const taxonomyDir = at(values.taxonomy ?? DEFAULT_TAXONOMY_DIR);
    const current = await Taxonomy.load(taxonomyDir);
    const taxonomy = values.fresh ? Taxonomy.empty(current) : current;
    const opened = values.declared ? undefined : await openPipelineModel(values);
    const model = opened?.model;
    try {
      if (values.declared && values.arxiv) {
        io.err('vera explore: --declared reads local documents only; drop --arxiv');
        return 1;
      }
      const result = await explore({
        taxonomy,
        sources,
        ...(model ? { model } : {}),
        budget,
        threshold,
        perQuery: int('per-query', 3),
        maxQueries: int('max-queries', 5),
        maxIterations: int('max-iterations', 20),
        repairs: int('repairs', 1, 0),
        ...(values.query?.length ? { queries: values.query } : {}),
        ...(values.records?.length ? { records } : {}),
        retractions: {
          usedBy: (tree, path) => usage.usedBy(tree, path),
          confirmRetractions: values['confirm-retractions'] ?? false,
        },
        log: (line) => io.out(line),
      });
      if (values.records?.length) {
        const evidence = result.changelog.filter((e) => e.operation === 'update' && e.sources.some(isRecordSource)).length;
        io.out(
          `records: ${records.length} runs read; ${result.recordQueries.length} queries from them (${result.recordQueries.map((q) => JSON.stringify(q.query)).join(', ') || 'none'}); ${evidence} record citations added to nodes`,
        );
      }

      const outDir = at(values.out ?? '.vera/explore');
      const changelogFile = join(outDir, 'changelog.yaml');
      await writeChangelog(changelogFile, result, { model: model?.model ?? 'declared (front-matter concepts)', budget, threshold });
      const count = (op: string) => result.changelog.filter((e) => e.operation === op).length;
      io.out(
        `read ${result.retrieved} documents in ${result.iterations} iteration(s), stopped: ${result.stopReason}; ` +
          `created ${count('create')}, pending ${count('pending')}, updated ${count('update')}, merged ${count('merge')}, ` +
          `deleted ${count('delete')}, rejected ${count('reject')}, invalid replies ${count('invalid-reply')}` +
          (count('flag') ? `; flagged ${count('flag')} (see the changelog)` : ''),
      );
      for (const held of result.changelog.filter((e) => e.operation === 'hold')) io.err(`vera explore: held ${held.tree}:${held.node}: ${held.detail}`);
      if (values['dry-run']) io.out(`dry run: trees not written; changelog: ${changelogFile}`);
      else {
        const target = at(values['write-to'] ?? values.taxonomy ?? DEFAULT_TAXONOMY_DIR);
        await taxonomy.save(target);
        io.out(`trees written to ${target}; changelog: ${changelogFile}`);
      }
      return 0;
    } finally {
      await opened?.close();
    }
  },
};
