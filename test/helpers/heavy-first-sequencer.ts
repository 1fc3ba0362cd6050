import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Vitest starts the files it has no timing for by size, largest first, which on a fresh clone (CI)
 * starts the two files that take minutes — small files that run the whole library — last, and the
 * suite ends minutes after the rest. These go first in their project, whatever the cache says.
 */
const HEAVY = ['test/library-policies.test.ts', 'test/library.test.ts'];

export default class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = HEAVY.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
      return i < 0 ? HEAVY.length : i;
    };
    // Stable: projects keep their order, and so do the other files.
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => (a.spec.project.name === b.spec.project.name ? rank(a.spec) - rank(b.spec) || a.i - b.i : a.i - b.i))
      .map(({ spec }) => spec);
  }
}
