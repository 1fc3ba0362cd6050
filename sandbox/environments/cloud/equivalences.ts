import { perFieldUpdate, type RouteEquivalence } from '../../route-equivalence.js';

/** Other routes to a cloud change: security settings changed one at a time. */
export const cloudEquivalences: RouteEquivalence[] = [perFieldUpdate({ name: 'cloud/settings-one-by-one', tool: 'update_security_settings', keys: [] })];
