import { asrInterval, type AsrCell } from '../../engine/asr.js';
import { esc } from './html-text.js';

export interface Bar {
  label: string;
  cell: AsrCell;
}

/**
 * A horizontal bar chart of ASR as inline SVG (no script, no fonts to fetch): one bar per label,
 * the share violated of judged runs, a whisker for the 95% interval when `intervals` is set, and
 * the counts at the end of the bar.
 */
export function asrBarChart(title: string, bars: readonly Bar[], options: { intervals?: boolean } = {}): string {
  const labelWidth = Math.min(240, 16 + Math.max(40, ...bars.map((b) => b.label.length * 7)));
  const barWidth = 320;
  const row = 26;
  const top = 28;
  const width = labelWidth + barWidth + 130;
  const height = top + bars.length * row + 24;
  const x = (share: number) => labelWidth + share * barWidth;
  const parts: string[] = [
    `<svg class="chart" role="img" aria-label="${esc(title)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">`,
    `<text x="0" y="16" class="chart-title">${esc(title)}</text>`,
  ];
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(`<line x1="${x(tick)}" x2="${x(tick)}" y1="${top - 4}" y2="${height - 18}" class="grid"/>`);
    parts.push(`<text x="${x(tick)}" y="${height - 4}" text-anchor="middle" class="tick">${tick * 100}%</text>`);
  }
  bars.forEach((bar, i) => {
    const y = top + i * row;
    const judged = bar.cell.violated + bar.cell.safe;
    const asr = bar.cell.asr ?? 0;
    parts.push(`<text x="${labelWidth - 8}" y="${y + 15}" text-anchor="end" class="label">${esc(bar.label)}</text>`);
    parts.push(`<rect x="${labelWidth}" y="${y + 3}" width="${barWidth}" height="16" class="track"/>`);
    if (judged > 0)
      parts.push(`<rect x="${labelWidth}" y="${y + 3}" width="${(asr * barWidth).toFixed(1)}" height="16" class="bar" data-asr="${asr.toFixed(4)}"/>`);
    const interval = options.intervals ? asrInterval(bar.cell) : undefined;
    if (interval) {
      parts.push(`<line x1="${x(interval.low).toFixed(1)}" x2="${x(interval.high).toFixed(1)}" y1="${y + 11}" y2="${y + 11}" class="whisker"/>`);
    }
    const extra = [bar.cell.notApplicable ? `${bar.cell.notApplicable} N/A` : '', bar.cell.errors ? `${bar.cell.errors} err` : ''].filter(Boolean).join(', ');
    const text = judged > 0 ? `${bar.cell.violated}/${judged} ${Math.round(asr * 100)}%` : '–';
    parts.push(`<text x="${labelWidth + barWidth + 8}" y="${y + 15}" class="value">${esc(text)}${extra ? ` (${esc(extra)})` : ''}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}
