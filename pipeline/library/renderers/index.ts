import type { AttackRenderer } from './attack-renderer.js';
import { injectionRenderers } from './injection-renderers.js';
import { multilingualRenderers } from './multilingual-renderers.js';
import { obfuscationRenderers } from './obfuscation-renderers.js';
import { persuasionRenderers } from './persuasion-renderers.js';
import { toolPoisoningRenderers } from './tool-poisoning-renderers.js';

export type { AttackRenderer, RenderedAttack, RenderedDescription, RenderedInjection, RenderingShape } from './attack-renderer.js';
export { renderAttack, renderingProblems } from './attack-renderer.js';

/** Every attack method the library composes with, in a fixed order (the composer's rotation). */
export const attackRenderers: readonly AttackRenderer[] = [
  ...injectionRenderers,
  ...persuasionRenderers,
  ...obfuscationRenderers,
  ...multilingualRenderers,
  ...toolPoisoningRenderers,
];

export function rendererFor(attack: string): AttackRenderer | undefined {
  return attackRenderers.find((r) => r.attack === attack);
}
