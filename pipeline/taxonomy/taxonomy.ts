import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { readYamlFile, toYaml, writeFileAtomic } from '../yaml-file.js';
import {
  explorationFile,
  observableKind,
  sourcesFile,
  taxonomyTreeFile,
  treeKinds,
  type ExplorationState,
  type Need,
  type ObservableKind,
  type SourceRecord,
  type TaxonomyNode,
  type TaxonomyTree,
  type TreeKind,
} from './taxonomy-schema.js';

/** The default location of the shipped trees, relative to a project root. */
export const DEFAULT_TAXONOMY_DIR = 'cases/taxonomy';

export interface LocatedNode {
  path: string;
  node: TaxonomyNode;
  parent: TaxonomyNode | undefined;
  depth: number;
}

const HEADERS: Record<TreeKind | 'sources' | 'exploration', string> = {
  risks: ' Vera risk taxonomy (what harm). Edit by hand or with `vera explore`; format: docs/pipeline.md.',
  attacks: ' Vera attack-method taxonomy (how the harm is induced). Edit by hand or with `vera explore`; format: docs/pipeline.md.',
  environments: ' Vera environment taxonomy (where the agent acts). Edit by hand or with `vera explore`; format: docs/pipeline.md.',
  sources: ' Every source id that taxonomy evidence cites. `vera explore` adds the documents it reads.',
  exploration: ' `vera explore` state between runs: the next query frontier and the documents already read.',
};

/**
 * The three trees, the source registry and the exploration state, as one mutable value.
 * Explore mutates it; compose reads it.
 */
export class Taxonomy {
  constructor(
    readonly trees: Record<TreeKind, TaxonomyTree>,
    readonly sources: Record<string, SourceRecord>,
    readonly exploration: ExplorationState,
    /**
     * Risk observables declared by hand, by path, that a rebuild keeps (`empty`): where a harm shows
     * is an editorial decision about verifiers, not something the sources say — like a tree's
     * description, it survives `--fresh` and goes back on the node of the same path when saved.
     */
    private readonly declaredObservables: ReadonlyMap<string, ObservableKind[]> = new Map(),
  ) {}

  static async load(dir: string): Promise<Taxonomy> {
    const trees = {} as Record<TreeKind, TaxonomyTree>;
    for (const kind of treeKinds) {
      const tree = await readYamlFile(join(dir, `${kind}.yaml`), taxonomyTreeFile);
      if (tree.tree !== kind) throw new Error(`${join(dir, `${kind}.yaml`)}:1 tree: expected "${kind}", found "${tree.tree}"`);
      trees[kind] = tree;
    }
    const sources = (await readYamlFile(join(dir, 'sources.yaml'), sourcesFile)).sources;
    const explorationPath = join(dir, 'exploration.yaml');
    const exploration = (await exists(explorationPath))
      ? await readYamlFile(explorationPath, explorationFile)
      : { schema: 'vera.exploration/v1' as const, frontier: [], processed: [] };
    const taxonomy = new Taxonomy(trees, sources, exploration);
    taxonomy.checkIntegrity();
    return taxonomy;
  }

  /** The same trees with nothing in them (each tree's description and the risks' observables kept): where a rebuild starts. */
  static empty(like: Taxonomy): Taxonomy {
    const trees = {} as Record<TreeKind, TaxonomyTree>;
    for (const kind of treeKinds) trees[kind] = { ...like.trees[kind], nodes: [], pending: [], redirects: {}, rejected: [] };
    const observables = new Map<string, ObservableKind[]>(like.declaredObservables);
    for (const { path, node } of like.walk('risks')) if (node.observables) observables.set(path, node.observables);
    return new Taxonomy(trees, {}, { schema: 'vera.exploration/v1', frontier: [], processed: [] }, observables);
  }

  async save(dir: string): Promise<void> {
    for (const { path, node } of this.walk('risks')) {
      const declared = this.declaredObservables.get(path);
      if (declared && !node.observables) node.observables = declared;
    }
    for (const kind of treeKinds) {
      const tree = this.trees[kind];
      const canonical = { ...tree, nodes: tree.nodes.map(canonicalNode), pending: tree.pending, redirects: sortedRecord(tree.redirects) };
      await writeFileAtomic(join(dir, `${kind}.yaml`), toYaml(canonical, HEADERS[kind]));
    }
    await writeFileAtomic(join(dir, 'sources.yaml'), toYaml({ schema: 'vera.sources/v1', sources: sortedRecord(this.sources) }, HEADERS.sources));
    await writeFileAtomic(join(dir, 'exploration.yaml'), toYaml(this.exploration, HEADERS.exploration));
  }

  /** Duplicate sibling ids and evidence that names an unregistered source are errors in the files. */
  checkIntegrity(): void {
    for (const kind of treeKinds) {
      const seen = new Set<string>();
      for (const { path, node } of this.walk(kind)) {
        if (seen.has(path)) throw new Error(`${kind}.yaml: node "${path}" appears twice`);
        seen.add(path);
        for (const id of node.evidence) {
          if (!Object.hasOwn(this.sources, id)) throw new Error(`${kind}.yaml: node "${path}" cites source "${id}", which sources.yaml does not list`);
        }
      }
    }
  }

  /** Every node, depth first, with its path. */
  *walk(kind: TreeKind): Generator<LocatedNode> {
    function* visit(nodes: TaxonomyNode[], prefix: string, parent: TaxonomyNode | undefined, depth: number): Generator<LocatedNode> {
      for (const node of nodes) {
        const path = prefix ? `${prefix}/${node.id}` : node.id;
        yield { path, node, parent, depth };
        yield* visit(node.children, path, node, depth + 1);
      }
    }
    yield* visit(this.trees[kind].nodes, '', undefined, 0);
  }

  /** The node at `path`, following redirects left by merges. */
  find(kind: TreeKind, path: string): LocatedNode | undefined {
    const resolved = this.resolve(kind, path);
    for (const located of this.walk(kind)) if (located.path === resolved) return located;
    return undefined;
  }

  /** `path` after redirects (a merged node's id leads to the node it became). */
  resolve(kind: TreeKind, path: string): string {
    const redirects = this.trees[kind].redirects;
    let current = path;
    for (let hops = 0; hops < 50 && Object.hasOwn(redirects, current); hops++) current = redirects[current]!;
    return current;
  }

  has(kind: TreeKind, path: string): boolean {
    return this.find(kind, path) !== undefined;
  }

  leaves(kind: TreeKind): LocatedNode[] {
    return [...this.walk(kind)].filter(({ node }) => node.children.length === 0);
  }

  /** A node's needs: its own, or the nearest ancestor's (a new leaf inherits its branch's needs). */
  needsOf(kind: TreeKind, path: string): Need[] {
    return this.nearest(kind, path, (at) => this.find(kind, at)?.node.needs) ?? [];
  }

  /** A risk's observables: its own, or the nearest ancestor's; every kind when none is declared. */
  observablesOf(path: string): ObservableKind[] {
    return this.nearest('risks', path, (at) => this.find('risks', at)?.node.observables ?? this.declaredObservables.get(at)) ?? [...observableKind.options];
  }

  /** What `own` says of `path` or of its nearest ancestor that says anything: how declarations are inherited. */
  private nearest<T>(kind: TreeKind, path: string, own: (at: string) => T | undefined): T | undefined {
    const parts = this.resolve(kind, path).split('/');
    for (let n = parts.length; n > 0; n--) {
      const found = own(parts.slice(0, n).join('/'));
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /**
   * The distinct publishers of a node's evidence, in first-cited order: how many organisations or
   * research groups stand behind it (five MITRE entries are one voice, not five). Safety records and
   * sources without a publisher are left out.
   */
  publishersOf(evidence: readonly string[]): string[] {
    return [...new Set(evidence.flatMap((id) => this.sources[id]?.publisher ?? []))];
  }

  /** Nodes at `path`'s parent level: the root list, or the parent's children. */
  siblingsOf(kind: TreeKind, parentPath: string): TaxonomyNode[] | undefined {
    if (parentPath === '') return this.trees[kind].nodes;
    return this.find(kind, parentPath)?.node.children;
  }
}

/** Fields in the documented order; a leaf's empty `children` is left out. */
function canonicalNode(node: TaxonomyNode): Record<string, unknown> {
  return {
    id: node.id,
    name: node.name,
    description: node.description,
    evidence: node.evidence,
    references: node.references,
    ...(node.needs ? { needs: node.needs } : {}),
    ...(node.observables ? { observables: node.observables } : {}),
    ...(node.children.length ? { children: node.children.map(canonicalNode) } : {}),
  };
}

function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

export function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
