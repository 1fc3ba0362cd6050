/** The parts of a JUnit file that CI dashboards read, per testcase, with run-specific noise removed. */
export interface JunitCase {
  classname: string;
  properties: Record<string, string>;
  failure?: string;
  skipped: boolean;
}

function unescapeXml(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Canary values are fresh per run: replace them so two runs of the same cases compare equal. */
export function normalizeRunNoise(text: string): string {
  return text.replace(/cnry-[A-Za-z0-9]+/g, 'cnry-…').replace(/sk-vera-[A-Za-z0-9]+/g, 'sk-vera-…');
}

export function parseJunit(xml: string): Record<string, JunitCase> {
  const out: Record<string, JunitCase> = {};
  for (const m of xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const body = m[3] ?? '';
    const properties = Object.fromEntries([...body.matchAll(/<property name="([^"]+)" value="([^"]*)"/g)].map((p) => [p[1]!, unescapeXml(p[2]!)]));
    const failure = /<failure message="([^"]*)"/.exec(body);
    const entry: JunitCase = { classname: m[1]!, properties, skipped: /<skipped/.test(body) };
    if (failure) entry.failure = normalizeRunNoise(unescapeXml(failure[1]!));
    out[unescapeXml(m[2]!)] = entry;
  }
  return out;
}
