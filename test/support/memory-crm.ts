// The one test double of the pipeline tests: a CRM (which is outside us). MemoryCrm holds records the
// way a CRM does (string-ish properties, deletes, human edits, per-record write errors, limits), and
// is reachable two ways: in-process through MemoryCrmConnector, or over HTTP (serveMemoryCrm +
// HttpCrmConnector) so a worker in another process writes to the same CRM the test inspects.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { EnrichmentRequest } from '../../core/contract/schemas.ts';
import { CrmError, type CrmConnector, type CrmRecord, type FieldValue, type RecordUpdate, type WriteResult } from '../../bridge/connector.ts';
import type { CrmValue } from '../../bridge/model.ts';

export type Properties = Record<string, CrmValue>;

/** The identity properties a record carries, and the request they map to. */
export const IDENTITY = ['first_name', 'last_name', 'email', 'phone', 'street', 'city', 'state', 'zip', 'company'] as const;

/** `household.net_worth` → `wf_household_net_worth`. */
export function propertyName(key: string): string {
  return `wf_${key.replace('.', '_')}`;
}

function text(value: CrmValue | undefined): string | null {
  if (value === undefined || value === null) return null;
  const s = String(value).trim();
  return s === '' ? null : s;
}

export function recordToRequest(record: CrmRecord): EnrichmentRequest {
  const p = record.properties;
  const address = { address: text(p.street), city: text(p.city), state: text(p.state), zipcode: text(p.zip) };
  const hasAddress = Object.values(address).some((v) => v !== null);
  const email = text(p.email);
  const phone = text(p.phone);
  return {
    first_name: text(p.first_name),
    last_name: text(p.last_name),
    emails: email === null ? [] : [email],
    phones: phone === null ? [] : [phone],
    addresses: hasAddress ? [address] : [],
    company_name: text(p.company),
  };
}

export function formatValue(_key: string, value: FieldValue): CrmValue {
  if (Array.isArray(value)) return value.join(';');
  return value as CrmValue;
}

type Failure = { readonly on: 'read' | 'write'; readonly error: () => Error };

export class MemoryCrm {
  private readonly objects = new Map<string, Map<string, Properties>>();
  /** Every call the connector made, in order. */
  readonly calls: { kind: 'read' | 'write'; object: string; ids: string[] }[] = [];
  /** Every property write a record received, in order (one entry per record per write call). */
  readonly writes: { object: string; id: string; properties: Properties }[] = [];
  private readonly failures: Failure[] = [];
  /** Per-record write errors the next writes answer with (the record is left unchanged). */
  readonly writeErrors = new Map<string, { reason: 'not_found' | 'rejected' | 'transient'; message: string }>();

  private table(object: string): Map<string, Properties> {
    let table = this.objects.get(object);
    if (table === undefined) {
      table = new Map();
      this.objects.set(object, table);
    }
    return table;
  }

  create(object: string, id: string, properties: Properties): void {
    this.table(object).set(id, { ...properties });
  }

  /** A human (or another integration) changes a record. */
  edit(object: string, id: string, properties: Properties): void {
    const record = this.table(object).get(id);
    if (record === undefined) throw new Error(`no ${object} ${id}`);
    Object.assign(record, properties);
  }

  delete(object: string, id: string): void {
    this.table(object).delete(id);
  }

  get(object: string, id: string): Properties | undefined {
    const record = this.table(object).get(id);
    return record === undefined ? undefined : { ...record };
  }

  /** The next read or write call throws this error instead. */
  failNext(on: 'read' | 'write', error: () => Error): void {
    this.failures.push({ on, error });
  }

  private takeFailure(on: 'read' | 'write'): void {
    const index = this.failures.findIndex((f) => f.on === on);
    if (index === -1) return;
    const [failure] = this.failures.splice(index, 1);
    if (failure !== undefined) throw failure.error();
  }

  read(object: string, ids: readonly string[]): CrmRecord[] {
    this.calls.push({ kind: 'read', object, ids: [...ids] });
    this.takeFailure('read');
    const table = this.table(object);
    return ids.flatMap((id) => {
      const properties = table.get(id);
      return properties === undefined ? [] : [{ id, properties: { ...properties } }];
    });
  }

  write(object: string, updates: readonly RecordUpdate[]): WriteResult[] {
    this.calls.push({ kind: 'write', object, ids: updates.map((u) => u.id) });
    this.takeFailure('write');
    const table = this.table(object);
    return updates.map((update): WriteResult => {
      const error = this.writeErrors.get(update.id);
      if (error !== undefined) return { id: update.id, ok: false, ...error };
      const record = table.get(update.id);
      if (record === undefined) return { id: update.id, ok: false, reason: 'not_found', message: 'record does not exist' };
      Object.assign(record, update.properties);
      this.writes.push({ object, id: update.id, properties: { ...update.properties } });
      return { id: update.id, ok: true };
    });
  }
}

abstract class MappingConnector {
  readonly defaultObjects: readonly string[] = ['contact'];
  constructor(readonly maxBatch: number) {}
  toRequest(_object: string, record: CrmRecord): EnrichmentRequest {
    return recordToRequest(record);
  }
  propertyFor(_object: string, key: string): string | null {
    return propertyName(key);
  }
  formatValue(key: string, value: FieldValue): CrmValue {
    return formatValue(key, value);
  }
}

export class MemoryCrmConnector extends MappingConnector implements CrmConnector {
  constructor(
    private readonly crm: MemoryCrm,
    maxBatch = 100,
  ) {
    super(maxBatch);
  }

  read(object: string, ids: readonly string[]): Promise<Map<string, CrmRecord>> {
    return Promise.resolve(new Map(this.crm.read(object, ids).map((r) => [r.id, r])));
  }

  write(object: string, updates: readonly RecordUpdate[]): Promise<WriteResult[]> {
    return Promise.resolve(this.crm.write(object, updates));
  }
}

const CallSchema = z.object({
  object: z.string(),
  ids: z.array(z.string()).optional(),
  updates: z.array(z.object({ id: z.string(), properties: z.record(z.string(), z.unknown()) })).optional(),
});

/** The CRM over HTTP on loopback: POST /read and POST /write, CrmErrors as 429/503 answers. */
export async function serveMemoryCrm(crm: MemoryCrm): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      try {
        const call = CallSchema.parse(JSON.parse(body));
        if (req.url === '/read') send(200, crm.read(call.object, call.ids ?? []));
        else if (req.url === '/write') send(200, crm.write(call.object, (call.updates ?? []) as RecordUpdate[]));
        else send(404, { message: 'no such route' });
      } catch (error) {
        if (error instanceof CrmError) send(error.kind === 'rate_limited' ? 429 : 503, { kind: error.kind, message: error.message, retryAt: error.retryAt });
        else send(500, { message: String(error) });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const ErrorBodySchema = z.object({
  kind: z.enum(['rate_limited', 'limit_exhausted', 'auth', 'transient']).optional(),
  message: z.string(),
  retryAt: z.string().nullable().optional(),
});

/** A connector that reaches a MemoryCrm in another process through serveMemoryCrm. */
export class HttpCrmConnector extends MappingConnector implements CrmConnector {
  constructor(
    private readonly baseUrl: string,
    maxBatch = 100,
  ) {
    super(maxBatch);
  }

  private async call(route: string, payload: unknown): Promise<unknown> {
    const response = await fetch(`${this.baseUrl}${route}`, { method: 'POST', body: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });
    const body: unknown = await response.json();
    if (response.ok) return body;
    const error = ErrorBodySchema.parse(body);
    throw new CrmError(error.kind ?? 'transient', error.message, error.retryAt == null ? null : new Date(error.retryAt));
  }

  async read(object: string, ids: readonly string[]): Promise<Map<string, CrmRecord>> {
    const records = z
      .array(z.object({ id: z.string(), properties: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])) }))
      .parse(await this.call('/read', { object, ids }));
    return new Map(records.map((r) => [r.id, r]));
  }

  async write(object: string, updates: readonly RecordUpdate[]): Promise<WriteResult[]> {
    return (await this.call('/write', { object, updates })) as WriteResult[];
  }
}
