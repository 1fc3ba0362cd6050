import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { canonicalSourceId, type SourceDocument } from './source-document.js';

/**
 * Structured feeds read from files, one document per entry:
 *  - ATLAS-style YAML or JSON: `matrices[].techniques[]` (the shape of MITRE's ATLAS.yaml) or a
 *    top-level `techniques[]`, each `{ id, name, description }` → source id `atlas:<id>`;
 *  - STIX 2 bundles (MITRE ATT&CK's JSON): `attack-pattern` objects, revoked/deprecated ones skipped
 *    → `attack:<external id>`;
 *  - CVE JSON 5 records (`dataType: CVE_RECORD`), one or a list → `cve:<id>`; a REJECTED record
 *    says so in its title, so the summary agent can retract what cited it.
 */
export async function loadFeedFile(file: string): Promise<SourceDocument[]> {
  let data: unknown;
  try {
    const text = await readFile(file, 'utf8');
    data = extname(file).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new Error(`cannot read the feed ${file}: ${(error as Error).message.split('\n')[0]}`);
  }
  const origin = `feed:${basename(file)}`;
  const docs = feedDocuments(data, origin);
  if (docs === undefined) {
    throw new Error(`${file}: not a recognised feed (expected ATLAS-style techniques in YAML/JSON, a STIX bundle of attack-patterns, or CVE JSON 5 records)`);
  }
  return docs;
}

export function feedDocuments(data: unknown, origin: string): SourceDocument[] | undefined {
  if (Array.isArray(data)) {
    const all = data.map((item) => feedDocuments(item, origin));
    return all.every((d) => d !== undefined) ? (all.flat() as SourceDocument[]) : undefined;
  }
  if (!isObject(data)) return undefined;
  if (data.dataType === 'CVE_RECORD' || isObject(data.cveMetadata)) return [cveDocument(data, origin)];
  if (data.type === 'bundle' && Array.isArray(data.objects)) return stixDocuments(data.objects, origin);
  const techniques = [
    ...(Array.isArray(data.techniques) ? data.techniques : []),
    ...(Array.isArray(data.matrices) ? data.matrices.flatMap((m) => (isObject(m) && Array.isArray(m.techniques) ? m.techniques : [])) : []),
  ];
  if (techniques.length > 0 || Array.isArray(data.techniques) || Array.isArray(data.matrices)) return techniqueDocuments(techniques, origin);
  return undefined;
}

function techniqueDocuments(techniques: unknown[], origin: string): SourceDocument[] {
  const seen = new Set<string>();
  const docs: SourceDocument[] = [];
  for (const t of techniques) {
    if (!isObject(t) || typeof t.id !== 'string' || typeof t.name !== 'string') continue;
    if (seen.has(t.id)) continue;
    seen.add(t.id);
    const parent = typeof t['subtechnique-of'] === 'string' ? ` (sub-technique of ${t['subtechnique-of']})` : '';
    docs.push({
      id: canonicalSourceId(`atlas:${t.id}`),
      title: `${t.id} ${t.name}`,
      text: `${t.name}${parent}\n\n${typeof t.description === 'string' ? t.description : ''}`.trim(),
      url: typeof t.url === 'string' ? t.url : `https://atlas.mitre.org/techniques/${t.id}`,
      kind: 'technique',
      origin,
    });
  }
  return docs;
}

function stixDocuments(objects: unknown[], origin: string): SourceDocument[] {
  const docs: SourceDocument[] = [];
  for (const o of objects) {
    if (!isObject(o) || o.type !== 'attack-pattern' || o.revoked === true || o.x_mitre_deprecated === true) continue;
    const refs = Array.isArray(o.external_references) ? o.external_references.filter(isObject) : [];
    const ref =
      refs.find((r) => typeof r.external_id === 'string' && /^mitre-(attack|atlas)/.test(String(r.source_name))) ??
      refs.find((r) => typeof r.external_id === 'string');
    const externalId = typeof ref?.external_id === 'string' ? ref.external_id : typeof o.id === 'string' ? o.id : undefined;
    if (!externalId || typeof o.name !== 'string') continue;
    const doc: SourceDocument = {
      id: canonicalSourceId(`${String(ref?.source_name ?? '').includes('atlas') ? 'atlas' : 'attack'}:${externalId}`),
      title: `${externalId} ${o.name}`,
      text: `${o.name}\n\n${typeof o.description === 'string' ? o.description : ''}`.trim(),
      kind: 'technique',
      origin,
    };
    if (typeof ref?.url === 'string') doc.url = ref.url;
    docs.push(doc);
  }
  return docs;
}

function cveDocument(record: Record<string, unknown>, origin: string): SourceDocument {
  const meta = isObject(record.cveMetadata) ? record.cveMetadata : {};
  const cveId = typeof meta.cveId === 'string' ? meta.cveId : 'CVE-UNKNOWN';
  const cna = isObject(record.containers) && isObject(record.containers.cna) ? record.containers.cna : {};
  const english = (list: unknown) =>
    (Array.isArray(list) ? list.filter(isObject) : [])
      .filter((d) => typeof d.value === 'string' && (d.lang === undefined || String(d.lang).startsWith('en')))
      .map((d) => String(d.value));
  const rejected = meta.state === 'REJECTED';
  const descriptions = english(rejected ? cna.rejectedReasons : cna.descriptions);
  // problemTypes[].descriptions[] carry `description` (e.g. "CWE-77 Command Injection"), not `value`.
  const problems = (Array.isArray(cna.problemTypes) ? cna.problemTypes.filter(isObject) : [])
    .flatMap((p) => (Array.isArray(p.descriptions) ? p.descriptions.filter(isObject) : []))
    .map((d) => (typeof d.description === 'string' ? d.description : ''))
    .filter(Boolean);
  const title = typeof cna.title === 'string' ? cna.title : (descriptions[0]?.slice(0, 120) ?? cveId);
  const lines = [rejected ? `[REJECTED] ${cveId}: this record was rejected by its CNA.` : `${cveId}: ${title}`, ...descriptions];
  if (problems.length) lines.push(`Problem types: ${problems.join('; ')}`);
  return {
    id: canonicalSourceId(`cve:${cveId}`),
    title: `${rejected ? '[REJECTED] ' : ''}${cveId} ${title}`,
    text: lines.join('\n\n'),
    url: `https://www.cve.org/CVERecord?id=${cveId}`,
    kind: 'advisory',
    origin,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
