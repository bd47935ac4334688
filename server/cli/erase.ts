// `enrichbridge erase` and `enrichbridge subject-report`: an operator answering a person's deletion
// request (everything we hold on them, in every installation, erased, the properties we wrote blanked,
// and the person suppressed) or access request (what the service would answer about them, and which
// installations hold our data on them). The records are found by the keyed hashes of the identifiers
// they were enriched with; nothing printed names another person.
import { Command } from 'commander';
import { personDigests, requestOf } from '../../core/suppression/operations.ts';
import { erasePerson } from '../../bridge/person-erasure.ts';
import { accountName } from '../http/console/format.ts';
import { plural } from '../plural.ts';
import { withRuntime } from '../runtime/compose.ts';
import { type IdentifierFlags, actorOf, identifiersFrom, withIdentifierOptions, withSuppressorOn } from './suppress.ts';

export function eraseCommands(): Command[] {
  const erase = withIdentifierOptions(
    new Command('erase').description(
      "a person's deletion request: erase what every installation holds on them (state, log entries, kept answers), blank the properties " +
        'we wrote in each CRM, and put them on the suppression list',
    ),
  )
    .option('--keep-crm-values', 'leave the properties we wrote in the CRMs as they are (blanked by default)')
    .option('--by <who>', 'who asks, for the audit trail (default: cli:<user>)')
    .action(async (flags: IdentifierFlags & { keepCrmValues?: boolean; by?: string }) => {
      const identifiers = identifiersFrom(flags);
      await withRuntime((bridge, opened) =>
        withSuppressorOn(opened.store, async (suppressor) => {
          const done = await erasePerson({ store: bridge.pipelineStore, connectorFor: bridge.connectorFor, suppressor }, identifiers, {
            blankCrm: flags.keepCrmValues !== true,
            actor: actorOf(flags.by),
          });
          if (done.installations.length === 0) console.log('no installation holds a record enriched with these identifiers');
          for (const one of done.installations) {
            const crm =
              flags.keepCrmValues === true
                ? 'CRM values left as they are'
                : `properties blanked on ${plural(one.blanked, 'record')}` +
                  (one.notBlanked === 0 ? '' : `, ${plural(one.notBlanked, 'record')} the CRM did not take`);
            console.log(`${accountName(one.installation)} (${one.installation.id}): ${plural(one.records, 'record')} erased; ${crm}`);
          }
          console.log(
            `suppressed: ${plural(done.suppressed.added, 'new entry', 'new entries')}; ${plural(done.suppressed.people, 'person', 'people')} in the active snapshot`,
          );
          if (done.installations.some((one) => one.notBlanked > 0)) process.exitCode = 1;
        }),
      );
    });

  const report = withIdentifierOptions(
    new Command('subject-report').description(
      "a person's access request: what the service would answer about them from the active snapshot, and which installations hold our data on them",
    ),
  )
    .option('--json', 'print JSON')
    .action(async (flags: IdentifierFlags & { json?: boolean }) => {
      const identifiers = identifiersFrom(flags);
      await withRuntime((bridge, opened) =>
        withSuppressorOn(opened.store, async (suppressor, matcher) => {
          const digests = personDigests(suppressor.list, identifiers);
          const listed = (await suppressor.store.find(suppressor.list.entriesOf(identifiers, 'person'))).length > 0;
          // The snapshot's own answer, before any suppression: what we hold, which is what the person asks about.
          const answer = matcher === null ? null : await matcher.match(requestOf(identifiers), { career: true });
          const records = await bridge.pipelineStore.recordsWithIdentifiers(digests);
          const held = [];
          for (const record of records) {
            const installation = await bridge.pipelineStore.findInstallation(record.installationId);
            const state = (await bridge.pipelineStore.recordStates(record.installationId, record.object, [record.recordId])).get(record.recordId);
            held.push({
              installation: installation === undefined ? record.installationId : accountName(installation),
              installationId: record.installationId,
              object: record.object,
              recordId: record.recordId,
              enrichedAt: state?.enrichedAt ?? null,
              propertiesWritten: Object.keys(state?.written ?? {}).sort(),
            });
          }
          const report = {
            suppressed: listed,
            snapshot: matcher === null ? null : matcher.dataVersion,
            household: answer?.household ?? null,
            career: answer?.career ?? null,
            installations: held,
          };
          if (flags.json === true) {
            console.log(JSON.stringify(report, null, 2));
            return;
          }
          console.log(`on the suppression list: ${listed ? 'yes (production answers nothing about them)' : 'no'}`);
          if (matcher === null) console.log('no data snapshot is loaded: the service holds no household or career data');
          else {
            console.log(`data snapshot ${matcher.dataVersion}:`);
            console.log(`  household: ${report.household === null ? 'none matched' : JSON.stringify(report.household)}`);
            console.log(`  career: ${report.career === null ? 'none matched' : JSON.stringify(report.career)}`);
          }
          console.log(held.length === 0 ? 'no installation holds a record enriched with these identifiers' : 'installations holding our data on them:');
          for (const one of held) {
            console.log(
              `  ${one.installation}: ${one.object} ${one.recordId}, enriched ${one.enrichedAt ?? '?'}, properties ${one.propertiesWritten.join(', ') || 'none'}`,
            );
          }
        }),
      );
    });

  return [erase, report];
}
