// A V8 CPU profile (`node --cpu-prof`'s .cpuprofile) as a flame graph in SVG, and its self time by
// package or file. Callers at the bottom, callees above; a frame's width is its share of the busy
// samples (idle, program and garbage-collector time left out of the graph, named in the title).
// Frames narrower than a pixel are merged away. The colour says whose code: ours, a package, Node's.

export interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  /** 0-based. */
  readonly lineNumber: number;
  readonly columnNumber: number;
}

/** Where a frame's code was written, when the profile ran a bundle: its source file, or null. */
export type Locate = (frame: CallFrame) => string | null;

export interface CpuProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

export interface CpuProfile {
  readonly nodes: readonly CpuProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const WIDTH = 1200;
const ROW = 16;
/** Rows drawn at most: start-up's module imports nest far deeper than any request's work. */
const MAX_DEPTH = 40;
/** Frames that are not work of the process: left out of the busy time. */
const NOT_WORK = new Set(['(idle)', '(program)']);

interface Frame {
  readonly name: string;
  readonly where: string;
  micros: number;
  readonly children: Map<string, Frame>;
}

/** Microseconds of samples that landed on each node itself. */
function selfMicros(profile: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  return self;
}

/** Where a frame's code lives: a package's name, a Node.js module, or our file (relative to `root`). */
export function whereOf(url: string, root: string): string {
  if (url === '') return '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1] ?? url;
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '').replace(`${root}/`, '');
}

/** Self time in milliseconds by package, Node.js module or our file, most first; idle and program time left out. */
export function selfTimeBy(profile: CpuProfile, root: string, locate: Locate = () => null): [string, number][] {
  const self = selfMicros(profile);
  const totals = new Map<string, number>();
  for (const node of profile.nodes) {
    const micros = self.get(node.id) ?? 0;
    if (micros === 0 || NOT_WORK.has(node.callFrame.functionName)) continue;
    const key = node.callFrame.url === '' ? node.callFrame.functionName || '(anonymous)' : (locate(node.callFrame) ?? whereOf(node.callFrame.url, root));
    totals.set(key, (totals.get(key) ?? 0) + micros / 1000);
  }
  return [...totals].sort((a, b) => b[1] - a[1]);
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function colour(where: string): string {
  if (where.startsWith('node:') || where === '(native)') return '#f2c66d';
  if (/^[@a-z]/.test(where) && !where.includes('/')) return '#8fb9e8';
  if (where.startsWith('@')) return '#8fb9e8';
  return '#f08a5d';
}

/** The flame graph of `profile`, titled `title`. */
export function flameGraphSvg(profile: CpuProfile, title: string, locate: Locate = () => null): string {
  const self = selfMicros(profile);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const root: Frame = { name: 'all', where: '', micros: 0, children: new Map() };
  let left = 0;
  // Fold each node's stack into the tree by name, so the same call path reached twice is one frame.
  const walk = (id: number, parent: Frame): number => {
    const node = byId.get(id);
    if (node === undefined) return 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (NOT_WORK.has(functionName)) {
      left += self.get(id) ?? 0;
      return 0;
    }
    const isRoot = functionName === '(root)';
    const where = locate(node.callFrame) ?? whereOf(url, '');
    const key = `${functionName || '(anonymous)'} ${url}:${lineNumber}`;
    let frame = parent;
    if (!isRoot) {
      frame = parent.children.get(key) ?? { name: functionName || '(anonymous)', where, micros: 0, children: new Map() };
      parent.children.set(key, frame);
    }
    let total = self.get(id) ?? 0;
    for (const child of node.children ?? []) total += walk(child, frame);
    if (!isRoot) frame.micros += total;
    return total;
  };
  const first = profile.nodes[0];
  root.micros = first === undefined ? 0 : walk(first.id, root);
  const busy = root.micros;
  const visible = (frame: Frame): Frame[] => [...frame.children.values()].filter((child) => (child.micros / busy) * WIDTH >= 1);
  const depthOf = (frame: Frame, level = 0): number => (level >= MAX_DEPTH ? 0 : Math.max(0, ...visible(frame).map((child) => 1 + depthOf(child, level + 1))));
  const height = (depthOf(root) + 1) * ROW + 30;
  // Callers at the bottom: level 0 sits on the last row.
  const yOf = (level: number): number => height - 10 - (level + 1) * ROW;
  const rects: string[] = [];
  const draw = (frame: Frame, x: number, level: number): void => {
    if (level >= MAX_DEPTH) return;
    let offset = x;
    for (const child of visible(frame).sort((a, b) => b.micros - a.micros)) {
      const width = (child.micros / busy) * WIDTH;
      const label = `${child.name} (${child.where}) ${((child.micros / busy) * 100).toFixed(1)} %`;
      const text = width > 40 ? escapeXml(child.name.slice(0, Math.floor(width / 6.5))) : '';
      rects.push(
        `<g><title>${escapeXml(label)}</title><rect x="${offset.toFixed(1)}" y="${yOf(level)}" width="${width.toFixed(1)}" height="${ROW - 1}" fill="${colour(child.where)}"/>` +
          (text === '' ? '' : `<text x="${(offset + 3).toFixed(1)}" y="${yOf(level) + 11}">${text}</text>`) +
          '</g>',
      );
      draw(child, offset, level + 1);
      offset += width;
    }
  };
  draw(root, 0, 0);
  const heading = `${title}: ${(busy / 1000).toFixed(0)} ms busy, ${(left / 1000).toFixed(0)} ms idle. Orange: ours; blue: packages; yellow: Node.js.`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="monospace" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="4" y="14" font-size="12">${escapeXml(heading)}</text>`,
    ...rects,
    '</svg>',
    '',
  ].join('\n');
}
