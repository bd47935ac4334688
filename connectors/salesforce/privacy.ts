// A person's privacy request as Salesforce keeps it: Data Protection and Privacy's Individual, which a
// Contact or Lead points to (IndividualId). "Forget this Individual" (ShouldForget) is the org's record
// of an erasure request: we forget the person for this installation (bridge/person-erasure.ts
// forgetRecords: erased, the fields we wrote blanked, never enriched here again). "Don't Process"
// (HasOptedOutProcessing) and "Don't Profile" (HasOptedOutProfiling; an enrichment is profiling) leave
// the record unenriched, as an exclusion.
//
// We learn of it two ways. Every read of a record for an enrichment carries the three flags, so the
// pipeline forgets or skips it then. And no outbound message fires when an Individual changes, so an
// hourly sweep per installation asks for the records flagged to be forgotten since the last sweep
// (one query per object, oldest change first, resumed from a saved watermark) and forgets them: that is
// what reaches a record enriched before its person asked.
//
// An org without Data Protection and Privacy, or whose integration user cannot read Individual,
// answers INVALID_FIELD: remembered per installation in this process for a day, during which records are
// read without the flags and the sweep is not tried (said in the operator's log once a day).
import type { CrmRecord, PrivacyRequest } from '../../bridge/connector.ts';
import type { InboundDeliveries } from '../../bridge/deliveries.ts';
import type { NewJob } from '../../bridge/job-queue.ts';
import type { CrmValue, Installation } from '../../bridge/model.ts';
import type { ForgottenRecords } from '../../bridge/person-erasure.ts';
import { checked } from '../../bridge/record-controls.ts';
import { type SalesforceApi, SalesforceApiError } from './api.ts';
import { SALESFORCE_IDENTITY_FIELDS, SALESFORCE_OBJECTS, type SalesforceObject, readSalesforceValue } from './fields.ts';
import { PERSON_ACCOUNT, PERSON_ACCOUNT_IDENTITY_FIELDS, contactFieldName } from './person-accounts.ts';

/** Read with every record: the Individual's flags, through the IndividualId lookup. */
export const PRIVACY_FIELDS = ['Individual.ShouldForget', 'Individual.HasOptedOutProcessing', 'Individual.HasOptedOutProfiling'] as const;

export const SALESFORCE_PRIVACY_JOB = 'salesforce.privacy';
export const PRIVACY_SWEEP_EVERY_MS = 60 * 60_000;
/** How long an org found without a readable Individual is read without the flags before they are tried again. */
export const INDIVIDUAL_RECHECK_MS = 24 * 3600_000;
/** Query pages (2,000 records each) per object per sweep; the next sweep resumes from the watermark. */
const PAGES_PER_SWEEP = 10;
/** A sweep starts this long before the last one's watermark: an Individual saved as it read is read again, not missed. */
const OVERLAP_MS = 10 * 60_000;

/** The privacy request a record read with PRIVACY_FIELDS carries. */
export function privacyRequestOf(properties: Readonly<Record<string, CrmValue>>): PrivacyRequest | null {
  // A Contact's or Lead's Individual, or a person Account's (PersonIndividual).
  const flag = (name: string) => checked(properties[`Individual.${name}`]) || checked(properties[`PersonIndividual.${name}`]);
  if (flag('ShouldForget')) return 'forget';
  if (flag('HasOptedOutProcessing') || flag('HasOptedOutProfiling')) return 'do_not_process';
  return null;
}

/** Whether Salesforce refused a read for a field or relationship it does not know (here: Individual). */
export function isInvalidField(error: unknown): boolean {
  return error instanceof SalesforceApiError && error.errorCode === 'INVALID_FIELD';
}

/** Installations whose org did not let us read Individual, and until when that is believed (this process only). */
class IndividualAccess {
  private readonly unreadableUntil = new Map<string, number>();

  readable(installationId: string, now = Date.now()): boolean {
    const until = this.unreadableUntil.get(installationId);
    if (until === undefined) return true;
    if (until > now) return false;
    this.unreadableUntil.delete(installationId);
    return true;
  }

  /** Marks the installation's Individual unreadable; true when it was not already (worth a log line). */
  markUnreadable(installationId: string, now = Date.now()): boolean {
    const fresh = this.readable(installationId, now);
    this.unreadableUntil.set(installationId, now + INDIVIDUAL_RECHECK_MS);
    return fresh;
  }
}

export const individualAccess = new IndividualAccess();

export function privacySweepJob(installationId: string): NewJob {
  return { installationId, kind: SALESFORCE_PRIVACY_JOB, payload: {}, maxAttempts: 1, dedupeKey: `${SALESFORCE_PRIVACY_JOB}:${installationId}` };
}

const watermarkLedger = (installationId: string, object: string) => `salesforce-privacy:${installationId}:${object}`;

export interface PrivacySweepDeps {
  readonly api: SalesforceApi;
  readonly deliveries: InboundDeliveries;
  /** Forgets records of the installation (bridge/person-erasure.ts forgetRecords, with its connector). */
  readonly forget: (object: string, records: readonly CrmRecord[]) => Promise<ForgottenRecords>;
  readonly now?: () => Date;
}

export interface PrivacySweep {
  /** Records found flagged "Forget this Individual" since the last sweep. */
  readonly read: number;
  /** Of those, with fields of ours blanked in the org (or gone), and refused. */
  readonly blanked: number;
  readonly notBlanked: number;
  /** The org has no readable Individual: nothing was swept. */
  readonly unavailable: boolean;
}

type SweptObject = SalesforceObject | typeof PERSON_ACCOUNT;

/** The installation's objects the sweep reads: those it enriches (Contacts and Leads when it names none; person Accounts where it names Account). */
function sweptObjects(installation: Installation): SweptObject[] {
  const known: readonly string[] = [...SALESFORCE_OBJECTS, PERSON_ACCOUNT];
  const named = installation.settings.objects.filter((o): o is SweptObject => known.includes(o));
  return installation.settings.objects.length === 0 ? [...SALESFORCE_OBJECTS] : named;
}

const identityFields = (object: SweptObject): readonly string[] =>
  object === PERSON_ACCOUNT ? PERSON_ACCOUNT_IDENTITY_FIELDS : SALESFORCE_IDENTITY_FIELDS[object];

/**
 * Forgets the records of the installation whose Individual was flagged "Forget this Individual" since the
 * last sweep. The watermark moves after each page is forgotten, so an interrupted sweep resumes.
 */
export async function sweepForgetRequests(installation: Installation, deps: PrivacySweepDeps): Promise<PrivacySweep> {
  const now = deps.now ?? (() => new Date());
  if (!individualAccess.readable(installation.id)) return { read: 0, blanked: 0, notBlanked: 0, unavailable: true };
  let read = 0;
  let blanked = 0;
  let notBlanked = 0;
  for (const object of sweptObjects(installation)) {
    const ledger = watermarkLedger(installation.id, object);
    const started = now();
    const last = await deps.deliveries.latest(ledger, started);
    const since = last === null ? null : new Date(Date.parse(last.id) - OVERLAP_MS);
    let watermark: string | null = null;
    let pages = 0;
    let complete = true;
    try {
      for await (const page of deps.api.forgetRequests(object, identityFields(object), since)) {
        const records = page.map(({ id, fields }) => ({
          id,
          properties: Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, readSalesforceValue(contactFieldName(name), value)])),
        }));
        const done = await deps.forget(object, records);
        read += records.length;
        blanked += done.blanked;
        notBlanked += done.notBlanked;
        watermark = page.reduce<string | null>(
          (latest, r) => (r.changedAt !== null && (latest === null || r.changedAt > latest) ? r.changedAt : latest),
          watermark,
        );
        if (watermark !== null) await saveWatermark(deps.deliveries, ledger, new Date(watermark.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')), now());
        pages += 1;
        if (pages >= PAGES_PER_SWEEP) {
          complete = false;
          break;
        }
      }
    } catch (error) {
      if (!isInvalidField(error)) throw error;
      individualAccess.markUnreadable(installation.id);
      return { read, blanked, notBlanked, unavailable: true };
    }
    // Everything up to the sweep's start was read: the next one starts there (less the overlap).
    if (complete) await saveWatermark(deps.deliveries, ledger, started, now());
  }
  return { read, blanked, notBlanked, unavailable: false };
}

/** The watermark: one row of the deliveries ledger, replaced (kept within its memory window; lost, the next sweep reads every flagged record again, which forgets nothing twice). */
async function saveWatermark(deliveries: InboundDeliveries, ledger: string, at: Date, now: Date): Promise<void> {
  await deliveries.forget(ledger);
  await deliveries.remember(ledger, [at.toISOString()], now);
}
