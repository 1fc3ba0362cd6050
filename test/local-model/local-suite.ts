import { installedModel } from '../../provider/local-model/install.js';

/** The model the local-model suite runs (`VERA_LOCAL_MODEL`, default the one the docs recommend). */
export const LOCAL_SUITE_MODEL = process.env.VERA_LOCAL_MODEL ?? 'qwen2.5-coder-1.5b';

/** The suite needs the model: without it every test fails, saying how to install it (never a skip). */
export async function requireInstalledModel(): Promise<void> {
  if (!(await installedModel(LOCAL_SUITE_MODEL))) {
    throw new Error(`the local-model suite needs ${LOCAL_SUITE_MODEL}: run \`npx vera install-model ${LOCAL_SUITE_MODEL}\` (npm run test:local-model does)`);
  }
}
