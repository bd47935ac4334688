// The overview's chart of the last 30 days: one bar a day, stacked by outcome kind, drawn as inline SVG
// on the server (no script, no library). The console's CSP refuses inline styles, so every colour is a
// class in console.css (`k-<kind>`); positions are SVG geometry attributes, which the CSP does not
// govern. The chart is one image to a screen reader (role="img", its summary as aria-label); the same
// numbers are the table the overview keeps under it ("Show as a table").
import type { VNode } from 'preact';

export const KINDS = ['enriched', 'no_match', 'skipped', 'failed'] as const;
export type Kind = (typeof KINDS)[number];
export const KIND_LABELS: Record<Kind, string> = { enriched: 'Enriched', no_match: 'No match', skipped: 'Skipped', failed: 'Failed' };
export type KindCounts = Record<Kind, number>;
export const noCounts = (): KindCounts => ({ enriched: 0, no_match: 0, skipped: 0, failed: 0 });
export const dayTotal = (counts: KindCounts): number => KINDS.reduce((sum, kind) => sum + counts[kind], 0);

export interface ChartDay {
  /** A UTC day, yyyy-mm-dd. */
  readonly day: string;
  readonly counts: KindCounts;
}

const number = (n: number) => n.toLocaleString('en-US');

/** The day's counts in words: `2026-11-27: 3 enriched, 1 no match, 0 skipped, 1 failed`. */
export function dayText({ day, counts }: ChartDay): string {
  return `${day}: ${KINDS.map((kind) => `${number(counts[kind])} ${KIND_LABELS[kind].toLowerCase()}`).join(', ')}`;
}

/** What the chart says to a screen reader: the days it covers, the totals by kind, and the busiest day. */
export function chartSummary(days: readonly ChartDay[]): string {
  const first = days[0]?.day;
  const last = days.at(-1)?.day;
  const span = first === undefined || last === undefined ? 'No days' : `Records per day (UTC), ${first} to ${last}`;
  const totals = noCounts();
  for (const { counts } of days) for (const kind of KINDS) totals[kind] += counts[kind];
  if (dayTotal(totals) === 0) return `${span}: no records.`;
  const busiest = days.reduce((top, day) => (dayTotal(day.counts) > dayTotal(top.counts) ? day : top));
  const inAll = KINDS.map((kind) => `${number(totals[kind])} ${KIND_LABELS[kind].toLowerCase()}`).join(', ');
  return `${span}: ${inAll} in all; the busiest day, ${busiest.day}, had ${number(dayTotal(busiest.counts))}.`;
}

// The drawing's own units (the SVG scales to the page's width): the plot, and room for its labels.
const WIDTH = 400;
const HEIGHT = 170;
const LEFT = 36;
const RIGHT = 6;
const TOP = 10;
const BOTTOM = 26;
const PLOT_WIDTH = WIDTH - LEFT - RIGHT;
const PLOT_HEIGHT = HEIGHT - TOP - BOTTOM;
const round = (n: number) => Math.round(n * 100) / 100;

/** The chart: `days` oldest first (left) to newest (right). */
export function OutcomeChart({ days }: { readonly days: readonly ChartDay[] }): VNode {
  const busiest = Math.max(1, ...days.map((day) => dayTotal(day.counts)));
  const slot = PLOT_WIDTH / Math.max(1, days.length);
  const barWidth = round(slot * 0.72);
  const baseline = TOP + PLOT_HEIGHT;
  const first = days[0]?.day;
  const last = days.at(-1)?.day;
  return (
    <div class="chart">
      <svg id="days-chart" role="img" aria-label={chartSummary(days)} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} xmlns="http://www.w3.org/2000/svg">
        <line class="grid" x1={LEFT} x2={WIDTH - RIGHT} y1={TOP} y2={TOP} />
        <line class="axis" x1={LEFT} x2={WIDTH - RIGHT} y1={baseline} y2={baseline} />
        <text class="tick" x={LEFT - 6} y={TOP + 4} text-anchor="end">
          {number(busiest)}
        </text>
        <text class="tick" x={LEFT - 6} y={baseline + 4} text-anchor="end">
          0
        </text>
        {days.map((day, index) => {
          const x = round(LEFT + index * slot + (slot - barWidth) / 2);
          let top = baseline;
          return (
            <g data-day={day.day}>
              <title>{dayText(day)}</title>
              {KINDS.map((kind) => {
                const count = day.counts[kind];
                if (count === 0) return null;
                const height = (count / busiest) * PLOT_HEIGHT;
                top -= height;
                return <rect class={`k-${kind}`} data-kind={kind} x={x} y={round(top)} width={barWidth} height={round(height)} />;
              })}
            </g>
          );
        })}
        {first === undefined ? null : (
          <text class="tick" x={LEFT} y={HEIGHT - 6} text-anchor="start">
            {first}
          </text>
        )}
        {last === undefined || last === first ? null : (
          <text class="tick" x={WIDTH - RIGHT} y={HEIGHT - 6} text-anchor="end">
            {last}
          </text>
        )}
      </svg>
      <ul class="legend" aria-hidden="true">
        {KINDS.map((kind) => (
          <li>
            <span class={`swatch k-${kind}`}></span>
            {KIND_LABELS[kind]}
          </li>
        ))}
      </ul>
    </div>
  );
}
