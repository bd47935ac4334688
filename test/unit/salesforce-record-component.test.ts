// The Salesforce record component (manifests/salesforce/force-app/main/default/lwc/enrichbridgeRecord and
// its Apex controller) against the code it talks to: every Apex class parses; the controller calls the
// per-record route through the Named Credential the metadata declares; the External Credential sends the
// org's secret in the header the route reads, from a parameter an admin fills in, never a value; the
// permission set grants the principal the credential declares and the controller; every file resolves to
// its metadata type by source-deploy-retrieve's registry; and the view and answers the component's jest
// tests use are valid record views and action answers, so they cannot drift from the bridge.
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ApexErrorListener, ApexParserFactory } from '@apexdevtools/apex-parser';
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ActionResultSchema } from '../../bridge/record-actions.ts';
import { RECORD_STATUSES, RecordViewSchema } from '../../bridge/record-view.ts';
import { RECORD_ACTIONS } from '../../bridge/model.ts';
import { SALESFORCE_RECORD_ACTIONS, SALESFORCE_RECORD_ROUTE, SALESFORCE_RECORD_SECRET_HEADER } from '../../connectors/salesforce/paths.ts';
import { parseRecordCredential, recordCredential } from '../../connectors/salesforce/record-routes.ts';
import {
  APEX_CLASSES,
  EXTERNAL_CREDENTIAL_FILE,
  PERSON_ACCOUNT_TEST_FILE,
  NAMED_CREDENTIAL_FILE,
  PUBLIC_BASE_PLACEHOLDER,
  RECORD_COMPONENT,
  RECORD_COMPONENT_META_FILE,
  RECORD_CONTROLLER,
  RECORD_CREDENTIAL,
  RECORD_PERMISSION_SET_FILE,
  RECORD_PRINCIPAL,
  RECORD_SECRET_PARAMETER,
  SALESFORCE_MANIFEST_DIR,
  SOURCE_DIR,
  generatedManifests,
} from '../../scripts/salesforce-manifest.ts';

const read = (file: string): string => readFileSync(path.join(SALESFORCE_MANIFEST_DIR, file), 'utf8');
const allFiles = readdirSync(SALESFORCE_MANIFEST_DIR, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => path.relative(SALESFORCE_MANIFEST_DIR, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
  .sort();
const COMPONENT_DIR = `${SOURCE_DIR}/lwc/${RECORD_COMPONENT}`;
const controller = read(`${SOURCE_DIR}/classes/${RECORD_CONTROLLER}.cls`);

/** Every syntax error of an Apex source, lexer and parser both. */
function apexSyntaxErrors(source: string): string[] {
  const errors: string[] = [];
  class Collect extends ApexErrorListener {
    apexSyntaxError(line: number, column: number, message: string): void {
      errors.push(`${line}:${column} ${message}`);
    }
  }
  const { parser } = ApexParserFactory.createLexerAndParser(source, new Collect());
  parser.compilationUnit();
  return errors;
}

describe('Apex classes', () => {
  const classes = allFiles.filter((file) => file.endsWith('.cls'));

  it('are the record controller and its test in force-app, the callout and its test in apex/, and the person-Account trigger test in person-accounts/', () => {
    expect(classes).toEqual(
      [
        ...APEX_CLASSES.map((name) => `${SOURCE_DIR}/classes/${name}.cls`),
        'apex/EnrichbridgeCallout.cls',
        'apex/EnrichbridgeCalloutTest.cls',
        PERSON_ACCOUNT_TEST_FILE,
      ].sort(),
    );
  });

  it('parse without a syntax error (@apexdevtools/apex-parser)', () => {
    for (const file of classes) expect(apexSyntaxErrors(read(file)), file).toEqual([]);
  });

  it('the parser does report a broken class', () => {
    expect(apexSyntaxErrors('public class Broken { void f( { }').length).toBeGreaterThan(0);
    expect(apexSyntaxErrors("public class Lexed { String s = 'unterminated; }").length).toBeGreaterThan(0);
  });

  it('ship an HttpCalloutMock test of the view, each action, a refused action and an error answer', () => {
    const test = read(`${SOURCE_DIR}/classes/${RECORD_CONTROLLER}Test.cls`);
    expect(test).toMatch(/^@IsTest/);
    expect(test).toContain('implements HttpCalloutMock');
    for (const action of Object.keys(SALESFORCE_RECORD_ACTIONS)) expect(test).toContain(`'${action}'`);
    expect(test).toContain('answering(409,');
    expect(test).toMatch(/answering\((401|5\d\d),/);
    expect(test).toContain('EnrichbridgeRecordController.getView(');
  });
});

describe('the record controller', () => {
  it('calls the per-record route through the Named Credential', () => {
    expect(controller).toContain(`'callout:${RECORD_CREDENTIAL}${SALESFORCE_RECORD_ROUTE}/'`);
  });

  it('posts exactly the route’s actions', () => {
    const actions = /ACTIONS = new Set<String>\{ ([^}]*) \}/.exec(controller)?.[1] ?? '';
    expect(actions.split(',').map((a) => a.trim().replace(/'/g, ''))).toEqual(Object.keys(SALESFORCE_RECORD_ACTIONS));
    expect(Object.values(SALESFORCE_RECORD_ACTIONS).sort()).toEqual([...RECORD_ACTIONS].sort());
  });

  it('sends the org, the user and the e-mail from UserInfo, and never a secret of its own', () => {
    for (const call of ['UserInfo.getOrganizationId()', 'UserInfo.getUserId()', 'UserInfo.getUserEmail()']) expect(controller).toContain(call);
    expect(controller).not.toMatch(/setHeader\('X-Enrichbridge-Org-Secret'/);
    expect(controller).not.toContain('Crypto.');
  });
});

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  isArray: (name) => name.endsWith('Parameters') || name === 'object',
});

describe('the credentials and the permission set', () => {
  const ExternalCredential = z.object({
    ExternalCredential: z.object({
      authenticationProtocol: z.literal('Custom'),
      externalCredentialParameters: z.array(
        z
          .object({
            parameterGroup: z.string(),
            parameterName: z.string(),
            parameterType: z.string(),
            parameterValue: z.string().optional(),
            sequenceNumber: z.string(),
          })
          .strict(),
      ),
    }),
  });
  const credential = ExternalCredential.parse(xml.parse(read(EXTERNAL_CREDENTIAL_FILE))).ExternalCredential;

  it('the External Credential has one named principal and sends its secret parameter as the header the route reads', () => {
    const parameters = credential.externalCredentialParameters;
    expect(parameters.filter((p) => p.parameterType === 'NamedPrincipal').map((p) => p.parameterName)).toEqual([RECORD_PRINCIPAL]);
    expect(parameters.filter((p) => p.parameterType === 'AuthHeader')).toEqual([
      {
        parameterGroup: 'DefaultGroup',
        parameterName: SALESFORCE_RECORD_SECRET_HEADER,
        parameterType: 'AuthHeader',
        parameterValue: `{!$Credential.${RECORD_CREDENTIAL}.${RECORD_SECRET_PARAMETER}}`,
        sequenceNumber: '1',
      },
    ]);
    // No value but the header's formula: the secret is entered in the org, never shipped.
    expect(parameters.filter((p) => p.parameterValue !== undefined)).toHaveLength(1);
  });

  it('the Named Credential points at the public host, authenticated by that External Credential', () => {
    const named = z
      .object({
        NamedCredential: z.object({
          namedCredentialType: z.literal('SecuredEndpoint'),
          namedCredentialParameters: z.array(z.record(z.string(), z.string())),
          generateAuthorizationHeader: z.literal('false'),
        }),
      })
      .parse(xml.parse(read(NAMED_CREDENTIAL_FILE))).NamedCredential;
    expect(named.namedCredentialParameters).toContainEqual({ parameterName: 'Url', parameterType: 'Url', parameterValue: PUBLIC_BASE_PLACEHOLDER });
    expect(named.namedCredentialParameters).toContainEqual({
      externalCredential: RECORD_CREDENTIAL,
      parameterName: 'ExternalCredential',
      parameterType: 'Authentication',
    });
  });

  it('the permission set grants the controller and the credential’s principal', () => {
    const set = z
      .object({
        PermissionSet: z.object({
          classAccesses: z.object({ apexClass: z.string(), enabled: z.literal('true') }),
          externalCredentialPrincipalAccesses: z.object({ enabled: z.literal('true'), externalCredentialPrincipal: z.string() }),
        }),
      })
      .parse(xml.parse(read(RECORD_PERMISSION_SET_FILE))).PermissionSet;
    expect(set.classAccesses.apexClass).toBe(RECORD_CONTROLLER);
    expect(set.externalCredentialPrincipalAccesses.externalCredentialPrincipal).toBe(`${RECORD_CREDENTIAL}-${RECORD_PRINCIPAL}`);
  });

  it('the component is exposed on Contact and Lead record pages', () => {
    const bundle = z
      .object({
        LightningComponentBundle: z.object({
          isExposed: z.literal('true'),
          targets: z.object({ target: z.literal('lightning__RecordPage') }),
          targetConfigs: z.object({
            targetConfig: z.object({ '@_targets': z.literal('lightning__RecordPage'), objects: z.object({ object: z.array(z.string()) }) }),
          }),
        }),
      })
      .parse(xml.parse(read(RECORD_COMPONENT_META_FILE))).LightningComponentBundle;
    expect(bundle.targetConfigs.targetConfig.objects.object).toEqual(['Contact', 'Lead']);
  });
});

describe('source-deploy-retrieve', () => {
  // What `sf project deploy start` resolves each file to: its registry's folder and suffix per type. (The full
  // ComponentSet check in salesforce-manifests.test.ts needs Node 22; the registry is plain JSON.)
  const registry = z
    .object({ types: z.record(z.string(), z.object({ name: z.string(), directoryName: z.string(), suffix: z.string().optional() }).loose()) })
    .parse(createRequire(import.meta.url)('@salesforce/source-deploy-retrieve/lib/src/registry/metadataRegistry.json'));
  const typeOf = (name: string) => Object.values(registry.types).find((type) => type.name === name);

  it.each([
    ['ApexClass', `${SOURCE_DIR}/classes/${RECORD_CONTROLLER}.cls-meta.xml`],
    ['ExternalCredential', EXTERNAL_CREDENTIAL_FILE],
    ['NamedCredential', NAMED_CREDENTIAL_FILE],
    ['PermissionSet', RECORD_PERMISSION_SET_FILE],
  ])('resolves %s from its folder and suffix', (name, file) => {
    const type = typeOf(name);
    expect(type, name).toBeDefined();
    expect(file.startsWith(`${SOURCE_DIR}/${type?.directoryName}/`)).toBe(true);
    expect(file.endsWith(`.${type?.suffix}-meta.xml`)).toBe(true);
    expect(generatedManifests().has(file)).toBe(true);
  });

  it('resolves the component as a bundle in lwc/, its tests kept out by .forceignore', () => {
    expect(typeOf('LightningComponentBundle')?.directoryName).toBe('lwc');
    expect(RECORD_COMPONENT_META_FILE).toBe(`${COMPONENT_DIR}/${RECORD_COMPONENT}.js-meta.xml`);
    expect(read('.forceignore')).toContain('**/__tests__/**');
  });
});

describe("the component's test data", () => {
  const data = (name: string): unknown => JSON.parse(read(`${COMPONENT_DIR}/__tests__/fixtures/${name}.json`));

  it('holds a valid record view for every status, and one whose budget forbids Enrich now', () => {
    const views = z.record(z.string(), RecordViewSchema).parse(data('views'));
    for (const status of RECORD_STATUSES) expect(views[status]?.status.value, status).toBe(status);
    expect(views.budget_spent?.actions.enrich_now).toMatchObject({ allowed: false, reason: 'budget_spent' });
  });

  it('holds a valid answer for each action, an Undo that left a field alone and a refused one', () => {
    const answers = z.record(z.string(), ActionResultSchema).parse(data('actions'));
    for (const action of RECORD_ACTIONS) expect(answers[action]).toMatchObject({ ok: true, action });
    expect(answers.undo).toMatchObject({ leftAlone: ['WF_Career_Job_Title__c'] });
    expect(answers.refused_undo).toMatchObject({ ok: false, action: 'undo' });
  });
});

describe('the record credential', () => {
  it('is the installation id and the secret, split at the last dot', () => {
    expect(recordCredential('inst_abc', 'S3cr-et_')).toBe('inst_abc.S3cr-et_');
    expect(parseRecordCredential('inst_abc.S3cr-et_')).toEqual({ installationId: 'inst_abc', secret: 'S3cr-et_' });
    for (const malformed of ['', 'inst_abc', '.secret', 'inst_abc.']) expect(parseRecordCredential(malformed), malformed).toBeNull();
  });
});
