import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { isPlainObject } from '../engine/json.js';
import { closest } from '../engine/suggest.js';
import { packageRoot } from '../sandbox/container/image.js';

/**
 * The bundled taxonomy's risk and attack ids (cases/taxonomy), for telling a typo from a project's
 * own category. Reports group runs by these paths, so `data-exfiltation/credential-leak` silently
 * made a row of its own. A path the bundled tree has is fine; one that was merged away names its
 * new place; one whose first unknown segment is an edit or two from a known sibling is a typo;
 * anything else is a project's own category or leaf, and is accepted.
 */

interface Tree {
  paths: Set<string>;
  redirects: Map<string, string>;
}

let trees: { risks: Tree; attacks: Tree } | undefined;

function loadTree(file: string): Tree {
  const paths = new Set<string>();
  const redirects = new Map<string, string>();
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch {
    return { paths, redirects };
  }
  const walk = (nodes: unknown, prefix: string) => {
    if (!Array.isArray(nodes)) return;
    for (const node of nodes) {
      if (!isPlainObject(node) || typeof node.id !== 'string') continue;
      const path = prefix ? `${prefix}/${node.id}` : node.id;
      paths.add(path);
      walk(node.children, path);
    }
  };
  if (isPlainObject(doc)) {
    walk(doc.nodes, '');
    if (isPlainObject(doc.redirects)) for (const [from, to] of Object.entries(doc.redirects)) if (typeof to === 'string') redirects.set(from, to);
  }
  return { paths, redirects };
}

function bundled(): { risks: Tree; attacks: Tree } {
  if (trees) return trees;
  const dir = join(packageRoot(), 'cases', 'taxonomy');
  return (trees = { risks: loadTree(join(dir, 'risks.yaml')), attacks: loadTree(join(dir, 'attacks.yaml')) });
}

/** Why `path` reads as a mistyped bundled id, or undefined (a bundled id, or a project's own). */
export function taxonomyIdProblem(kind: 'risks' | 'attacks', path: string): string | undefined {
  const tree = bundled()[kind];
  if (tree.paths.size === 0 || tree.paths.has(path)) return undefined;
  const moved = tree.redirects.get(path);
  if (moved) return `"${path}" was merged into "${moved}" in the bundled ${kind} taxonomy: use that`;
  const segments = path.split('/');
  for (let i = 0; i < segments.length; i++) {
    const prefix = segments.slice(0, i).join('/');
    const here = prefix ? `${prefix}/${segments[i]}` : segments[i]!;
    if (tree.paths.has(here)) continue;
    const siblings = [...tree.paths]
      .filter((p) => (prefix ? p.startsWith(`${prefix}/`) && p.split('/').length === i + 1 : !p.includes('/')))
      .map((p) => p.split('/')[i]!);
    const near = closest(segments[i]!, siblings);
    if (near === undefined) return undefined;
    const meant = [...segments.slice(0, i), near, ...segments.slice(i + 1)].join('/');
    return `"${segments[i]}" is not in the bundled ${kind} taxonomy${prefix ? ` under "${prefix}"` : ''}; did you mean "${meant}"? (A category of your own needs a name that is not one edit from a bundled one.)`;
  }
  return undefined;
}
