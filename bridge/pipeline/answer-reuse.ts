// One lookup per person, not per record. When the installation keeps answers (and the job is not
// forced), a candidate whose normalized request this installation's target answered within the
// re-enrichment age, under the target's current data version, gets that kept answer without a lookup;
// candidates of one slice asking the same follow a single lookup. Answers are kept sealed (the data
// folder's key, context `reusable-answer`) and purged past the re-enrichment age, or all of them once
// the installation stops keeping any.
import type { Enricher } from '../../core/client/enricher.ts';
import type { EnrichmentResponse } from '../../core/contract/schemas.ts';
import type { SecretBox } from '../../core/secrets/secret-box.ts';
import { retryWhileBusy } from '../../core/storage/errors.ts';
import { type BatchRun, type Candidate, DAY_MS, type Enriched, type EnrichRound } from '../batch-run.ts';
import type { Installation, StoredAnswer } from '../model.ts';
import type { KeptAnswerStore } from '../store.ts';
import { z } from 'zod';

/** The SecretBox context kept answers are sealed under: they open nowhere else. */
const ANSWER_CONTEXT = 'reusable-answer';

const KeptResponseSchema = z.looseObject({});

/** A kept answer's response, or undefined when it cannot be opened (sealed under another key). */
function openAnswer(box: SecretBox, answer: StoredAnswer): EnrichmentResponse | undefined {
  try {
    return KeptResponseSchema.parse(JSON.parse(box.open(answer.sealedAnswer, ANSWER_CONTEXT))) as EnrichmentResponse;
  } catch {
    return undefined;
  }
}

/** The lookups a slice makes, the answers it reuses, and the candidates waiting on a lookup (by hash). */
export interface ReusePlan {
  readonly lookups: Candidate[];
  readonly reused: Enriched[];
  readonly followers: Map<string, Candidate[]>;
}

/**
 * Splits a slice's candidates into the lookups to make and the answers to reuse. A candidate is
 * answered without a lookup when the installation keeps answers, the job is not forced, and either
 * an answer kept for its input hash is younger than the re-enrichment age and of the target's current
 * data version, or an earlier candidate of the slice has the same hash (it follows that lookup).
 * Without `box` no answer is reused.
 */
export async function reuseAnswers(
  store: KeptAnswerStore,
  box: SecretBox | undefined,
  run: BatchRun,
  enricher: Enricher,
  candidates: readonly Candidate[],
  /**
   * Record id → the input hash of an answer to take instead of its own: a household member's
   * (households.ts householdAliases). Its career is not taken: the answer was another person's.
   */
  aliases: ReadonlyMap<string, string> = new Map(),
): Promise<ReusePlan> {
  const { installation } = run;
  const followers = new Map<string, Candidate[]>();
  if (box === undefined || !installation.settings.reuseAnswers) return { lookups: [...candidates], reused: [], followers };
  const now = run.now();
  const notBefore = new Date(now.getTime() - installation.settings.reenrichAfterDays * DAY_MS).toISOString();
  const reusable = candidates.filter((c) => !c.work.force);
  const kept =
    reusable.length === 0
      ? new Map<string, StoredAnswer>()
      : await store.findAnswers(
          installation.id,
          reusable.flatMap((c) => [c.hash, ...(aliases.has(c.work.recordId) ? [aliases.get(c.work.recordId) ?? c.hash] : [])]),
          notBefore,
        );
  // Answers an earlier slice of this batch looked up (saved with the batch, so not in the store yet).
  for (const answer of run.answers) kept.set(answer.inputHash, answer);
  // The target's data version now: the in-process service knows it; for a remote endpoint, the
  // version its newest kept answer carried stands in (its next lookup reveals a new one).
  const reported = enricher.currentDataVersion?.();
  const version = kept.size === 0 ? undefined : reported !== undefined ? reported : await store.latestAnswerVersion(installation.id);
  const lookups: Candidate[] = [];
  const reused: Enriched[] = [];
  const looking = new Set<string>();
  for (const candidate of candidates) {
    if (candidate.work.force) {
      lookups.push(candidate);
      continue;
    }
    const alias = aliases.get(candidate.work.recordId);
    const own = kept.get(candidate.hash);
    const answer = own ?? (alias === undefined ? undefined : kept.get(alias));
    const response = answer !== undefined && answer.dataVersion === version ? openAnswer(box, answer) : undefined;
    if (answer !== undefined && response !== undefined) {
      const taken = answer === own ? response : { ...response, career: null };
      reused.push({
        work: candidate.work,
        record: candidate.record,
        hash: candidate.hash,
        outcome: { kind: 'ok', response: { ...taken, id: candidate.work.recordId }, attempts: 0, dataVersion: answer.dataVersion },
        latencyMs: null,
        at: now,
        reusedFrom: `${answer.object}/${answer.recordId}`,
      });
    } else if (looking.has(candidate.hash)) {
      followers.set(candidate.hash, [...(followers.get(candidate.hash) ?? []), candidate]);
    } else if (alias !== undefined && looking.has(alias)) {
      // A household member's lookup in this slice answers for the household.
      followers.set(alias, [...(followers.get(alias) ?? []), candidate]);
    } else {
      looking.add(candidate.hash);
      lookups.push(candidate);
    }
  }
  return { lookups, reused, followers };
}

/** What this slice's lookups answered, sealed, for the next record asking the same (saved with the batch). */
export function keepAnswers(box: SecretBox | undefined, run: BatchRun, object: string, enriched: readonly Enriched[]): void {
  if (box === undefined || !run.installation.settings.reuseAnswers) return;
  for (const item of enriched) {
    if (item.reusedFrom !== undefined) continue;
    run.answers.push({
      installationId: run.installation.id,
      inputHash: item.hash,
      object,
      recordId: item.work.recordId,
      sealedAnswer: box.seal(JSON.stringify(item.outcome.response), ANSWER_CONTEXT),
      dataVersion: item.outcome.dataVersion,
      answeredAt: item.at.toISOString(),
    });
  }
}

/**
 * The records that followed a lookup of this slice: its answer when it got one. Otherwise they go
 * back to the queue to be tried on their own, unless the round stopped (a quota pause, a timeout, a
 * shutdown), which holds them with the rest of the slice.
 */
export function followLookups(
  run: BatchRun,
  object: string,
  round: EnrichRound,
  followers: ReadonlyMap<string, readonly Candidate[]>,
  signal: AbortSignal | undefined,
): Enriched[] {
  const out: Enriched[] = [];
  const stopped = round.quotaResetsAt !== undefined || round.endpointTimedOut || signal?.aborted === true;
  for (const [hash, group] of followers) {
    const lead = round.enriched.find((item) => item.hash === hash);
    for (const candidate of group) {
      if (lead !== undefined) {
        // A household member following another person's lookup takes its household alone.
        const response = candidate.hash === hash ? lead.outcome.response : { ...lead.outcome.response, career: null };
        out.push({
          work: candidate.work,
          record: candidate.record,
          hash: candidate.hash,
          outcome: { ...lead.outcome, response: { ...response, id: candidate.work.recordId } },
          latencyMs: null,
          at: lead.at,
          reusedFrom: `${object}/${lead.work.recordId}`,
        });
      } else if (!stopped) {
        run.dispose(candidate.work, { kind: 'release' });
      }
    }
  }
  return out;
}

/** Removes kept answers past the re-enrichment age, or all of them once the installation stops keeping any. */
export async function purgeAnswers(store: KeptAnswerStore, box: SecretBox | undefined, installation: Installation, now: () => Date): Promise<void> {
  if (box === undefined) return;
  const { reuseAnswers: keeping, reenrichAfterDays } = installation.settings;
  const before = keeping ? new Date(now().getTime() - reenrichAfterDays * DAY_MS).toISOString() : '9999-12-31T23:59:59.999Z';
  await retryWhileBusy(() => store.purgeAnswers(installation.id, before));
}
