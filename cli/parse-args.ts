/** Minimal `--flag value` / `--flag=value` / `--switch` parsing for the vera subcommands. */
export function parseArgs(
  args: readonly string[],
  spec: { values?: string[]; booleans?: string[] /** Value options that may be given more than once (collected in an array). */; repeatable?: string[] },
): { positional: string[]; flags: Record<string, string | boolean | string[]> } {
  const positional: string[] = [];
  const flags: Record<string, string | boolean | string[]> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (spec.booleans?.includes(name)) flags[name] = eq < 0 ? true : arg.slice(eq + 1) !== 'false';
    else if (spec.values?.includes(name)) {
      const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined) throw new Error(`--${name} needs a value`);
      if (spec.repeatable?.includes(name)) flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
      else flags[name] = value;
    } else throw new Error(`unknown option ${arg}`);
  }
  return { positional, flags };
}
