// The README opens with the two commands; the persona table (docs/api.md) is what QA engineers read: it
// must say what the code answers.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PERSONAS } from '../../core/sandbox/personas.ts';

const readme = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
const api = readFileSync(path.resolve(import.meta.dirname, '../../docs/api.md'), 'utf8');

describe('README', () => {
  it('opens with the two commands a newcomer types', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(firstBlock).toContain('npm install && npm start');
    expect(firstBlock).toContain('npm test');
  });

  it.each(PERSONAS.map((p) => [p.n, p] as const))('lists persona %i with the identifiers the sandbox matches on', (_n, p) => {
    const row = api.split('\n').find((line) => line.startsWith(`| ${p.n} | ${p.first_name} ${p.last_name} |`));
    expect(row).toBeDefined();
    expect(row).toContain(`\`${p.email}\``);
    expect(row).toContain(`\`${p.phone}\``);
    expect(row).toContain(`\`${p.address}\`, ${p.city}, ${p.state} \`${p.zipcode}\``);
    expect(row).toContain(p.category.replaceAll('_', ' '));
  });
});
