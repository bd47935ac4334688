// An answer as JSON text, exactly what JSON.stringify gives, with the parts many answers share written
// once: a sandbox persona's household and career, as one account is entitled to see them, are the same
// frozen objects for every request that names the persona (service.ts, sandboxResponse), and writing
// them was most of a sandbox answer's serialization.

const written = new WeakMap<object, string>();

/** JSON.stringify(value), kept for a frozen object (it cannot change after it was written). */
function partJson(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return JSON.stringify(value);
  let text = written.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    written.set(value, text);
  }
  return text;
}

/** The answer's JSON: its own keys in order, undefined ones left out, frozen objects from their first writing. */
export function answerJson(answer: object): string {
  let text = '';
  for (const [key, value] of Object.entries(answer)) {
    const part = partJson(value);
    if (part === undefined) continue;
    text += `${text === '' ? '{' : ','}${JSON.stringify(key)}:${part}`;
  }
  return text === '' ? '{}' : `${text}}`;
}
