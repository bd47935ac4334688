// manifests/salesforce/ is data the code depends on: these tests keep it in sync with the code. Every
// XML file parses; the field files are the generated definitions and nothing else; package.xml lists
// exactly the components present; the permission set grants every field; the outbound messages carry
// Id and the identity fields to the outbound-message route; the flows call them; the lead mapping
// pairs fields of the same type; the External Client App holds no secret; the packaged after-insert
// triggers parse, fire when the flows do, and call the trigger route through the Named Credential; the
// optional person-Account trigger is its own project, outside force-app, and hands person Accounts to the
// same Queueable as `Account`; the optional NPSP households project is its own too: exactly the household
// fields on Account, granted by its permission set, and a flow that re-sends an enriched contact moved to
// another household.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ApexErrorListener, ApexParserFactory } from '@apexdevtools/apex-parser';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ENRICHED_AT_FIELD,
  HOUSEHOLD_ACCOUNT_OBJECT,
  SALESFORCE_IDENTITY_FIELDS,
  SALESFORCE_OBJECTS,
  salesforceFields,
  salesforceHouseholdAccountFields,
  type SalesforceFieldDefinition,
} from '../../connectors/salesforce/fields.ts';
import { EVENTS_MAX_IDS } from '../../connectors/salesforce/events.ts';
import {
  SALESFORCE_API_VERSION,
  SALESFORCE_OAUTH_CALLBACK_ROUTE,
  SALESFORCE_OUTBOUND_MESSAGE_ROUTE,
  SALESFORCE_RECORD_SECRET_HEADER,
  SALESFORCE_TRIGGER_ROUTE,
} from '../../connectors/salesforce/paths.ts';
import {
  APEX_CLASSES,
  APEX_TRIGGERS,
  HAND_WRITTEN_SOURCES,
  RECORD_PRINCIPAL,
  RECORD_SENDER,
  SENDER_PERMISSION_SET,
  SENDER_PERMISSION_SET_FILE,
  apexClassMetaFile,
  apexTriggerFile,
  apexTriggerMetaFile,
  ECA_FILE,
  ECA_NAME,
  ECA_OAUTH_FILE,
  ECA_OAUTH_SETTINGS_NAME,
  FLOW_NAMES,
  HOUSEHOLD_DIR,
  HOUSEHOLD_FLOW,
  HOUSEHOLD_FLOW_FILE,
  HOUSEHOLD_FLOW_OBJECT,
  HOUSEHOLD_LINK_FIELD,
  HOUSEHOLD_OBJECT,
  HOUSEHOLD_PACKAGE_XML,
  HOUSEHOLD_PERMISSION_SET,
  HOUSEHOLD_PERMISSION_SET_FILE,
  HOUSEHOLD_SFDX_PROJECT,
  INTEGRATION_USER_PLACEHOLDER,
  LEAD_CONVERT_FILE,
  METADATA_NAMESPACE,
  OUTBOUND_MESSAGE_NAMES,
  PACKAGE_XML,
  PERMISSION_SET_FILE,
  PERMISSION_SET_NAME,
  OUTBOUND_SECRET_PLACEHOLDER,
  PERSON_ACCOUNT_DIR,
  PERSON_ACCOUNT_ENRICHED_AT_FIELD,
  PERSON_ACCOUNT_OBJECT,
  PERSON_ACCOUNT_SFDX_PROJECT,
  PERSON_ACCOUNT_SOURCES,
  PERSON_ACCOUNT_TEST_FILE,
  PERSON_ACCOUNT_TEST_META_FILE,
  PERSON_ACCOUNT_TRIGGER,
  PERSON_ACCOUNT_TRIGGER_FILE,
  PERSON_ACCOUNT_TRIGGER_META_FILE,
  PERSON_ACCOUNT_TRIGGER_TEST,
  PUBLIC_BASE_PLACEHOLDER,
  RECORD_COMPONENT,
  RECORD_CREDENTIAL,
  RECORD_PERMISSION_SET,
  SALESFORCE_MANIFEST_DIR,
  SFDX_PROJECT,
  SOURCE_DIR,
  fieldFile,
  flowFile,
  forceAppObject,
  generatedManifests,
  householdFieldFile,
  householdPackageMembers,
  oauthCallbackUrl,
  packageMembers,
  staleFieldFiles,
  workflowFile,
} from '../../scripts/salesforce-manifest.ts';

const read = (file: string): string => readFileSync(path.join(SALESFORCE_MANIFEST_DIR, file), 'utf8');

/** Every file under manifests/salesforce/, relative to it. */
const allFiles = readdirSync(SALESFORCE_MANIFEST_DIR, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => path.relative(SALESFORCE_MANIFEST_DIR, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
  .sort();
const xmlFiles = allFiles.filter((file) => file.endsWith('.xml'));

/** Elements that may repeat, always parsed as arrays (`value` only as a picklist value). */
const REPEATED = new Set([
  'fieldPermissions',
  'types',
  'members',
  'fields',
  'mappingFields',
  'objectMapping',
  'outboundMessages',
  'actionCalls',
  'processMetadataValues',
  'filters',
]);
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  isArray: (name, jpath) => (name === 'value' ? String(jpath).endsWith('valueSetDefinition.value') : REPEATED.has(name)),
});

/** Parses a metadata file and returns its root element after checking the root and the namespace. */
function parseRoot<T extends z.ZodType>(file: string, root: string, schema: T): z.infer<T> {
  const document = z.record(z.string(), z.unknown()).parse(parser.parse(read(file)));
  const element = z
    .object({ '@_xmlns': z.literal(METADATA_NAMESPACE) })
    .loose()
    .parse(document[root]);
  return schema.parse(element);
}

const Bool = z.enum(['true', 'false']);

const FieldFile = z
  .object({
    '@_xmlns': z.string(),
    fullName: z.string(),
    defaultValue: Bool.optional(),
    description: z.string(),
    externalId: z.literal('false'),
    inlineHelpText: z.string(),
    label: z.string(),
    length: z.string().optional(),
    precision: z.string().optional(),
    required: z.literal('false').optional(),
    scale: z.string().optional(),
    type: z.string(),
    unique: z.literal('false').optional(),
    valueSet: z
      .object({
        restricted: Bool,
        valueSetDefinition: z.object({
          sorted: Bool,
          value: z.array(z.object({ fullName: z.string(), default: z.literal('false'), label: z.string() }).strict()),
        }),
      })
      .optional(),
  })
  .strict();

const PackageFile = z
  .object({
    '@_xmlns': z.string(),
    types: z.array(z.object({ members: z.array(z.string()), name: z.string() }).strict()),
    version: z.string(),
  })
  .strict();

const PermissionSetFile = z
  .object({
    '@_xmlns': z.string(),
    description: z.string(),
    fieldPermissions: z.array(z.object({ editable: Bool, field: z.string(), readable: Bool }).strict()),
    label: z.string(),
  })
  .strict();

const LeadConvertFile = z
  .object({
    '@_xmlns': z.string(),
    objectMapping: z.array(
      z
        .object({
          inputObject: z.string(),
          mappingFields: z.array(z.object({ inputField: z.string(), outputField: z.string() }).strict()),
          outputObject: z.string(),
        })
        .strict(),
    ),
  })
  .strict();

const WorkflowFile = z
  .object({
    '@_xmlns': z.string(),
    outboundMessages: z.array(
      z
        .object({
          fullName: z.string(),
          apiVersion: z.string(),
          description: z.string(),
          endpointUrl: z.string(),
          fields: z.array(z.string()),
          includeSessionId: Bool,
          integrationUser: z.string(),
          name: z.string(),
          protected: Bool,
          useDeadLetterQueue: Bool,
        })
        .strict(),
    ),
  })
  .strict();

const FlowStart = z
  .object({
    locationX: z.string(),
    locationY: z.string(),
    connector: z.object({ targetReference: z.string() }).strict(),
    filterLogic: z.string(),
    filters: z.array(z.object({ field: z.string(), operator: z.string(), value: z.object({ booleanValue: Bool }).strict() }).strict()),
    object: z.string(),
    recordTriggerType: z.string(),
    triggerType: z.string(),
  })
  .strict();

const FlowFile = z
  .object({
    '@_xmlns': z.string(),
    actionCalls: z.array(
      z
        .object({
          name: z.string(),
          label: z.string(),
          locationX: z.string(),
          locationY: z.string(),
          actionName: z.string(),
          actionType: z.string(),
          flowTransactionModel: z.string(),
          nameSegment: z.string(),
        })
        .strict(),
    ),
    apiVersion: z.string(),
    description: z.string(),
    environments: z.string(),
    interviewLabel: z.string(),
    label: z.string(),
    processMetadataValues: z.array(z.object({ name: z.string(), value: z.object({ stringValue: z.string() }) })),
    processType: z.literal('AutoLaunchedFlow'),
    start: FlowStart,
    status: z.string(),
  })
  .strict();

/** The households flow's start also says when an update runs it (doesRequireRecordChangedToMeetCriteria). */
const HouseholdFlowFile = FlowFile.extend({ start: FlowStart.extend({ doesRequireRecordChangedToMeetCriteria: Bool }).strict() }).strict();

const EcaFile = z
  .object({
    '@_xmlns': z.string(),
    contactEmail: z.string(),
    description: z.string(),
    distributionState: z.literal('Local'),
    isProtected: Bool,
    label: z.string(),
  })
  .strict();

const EcaOauthFile = z
  .object({ '@_xmlns': z.string(), commaSeparatedOauthScopes: z.string(), externalClientApplication: z.string(), label: z.string() })
  .strict();

const SfdxProject = z
  .object({
    packageDirectories: z.array(z.object({ path: z.string(), default: z.boolean() }).strict()),
    name: z.string(),
    namespace: z.string(),
    sfdcLoginUrl: z.string(),
    sourceApiVersion: z.string(),
  })
  .strict();

describe('manifests/salesforce files', () => {
  it('parse: every XML file is well-formed with its root in the metadata namespace; the generated ones declare UTF-8', () => {
    expect(xmlFiles.length).toBeGreaterThanOrEqual(2 * 62 + 8);
    for (const file of xmlFiles) {
      const text = read(file);
      expect(XMLValidator.validate(text), file).toBe(true);
      if (generatedManifests().has(file)) expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n'), file).toBe(true);
      const document = z.record(z.string(), z.unknown()).parse(parser.parse(text));
      const roots = Object.keys(document).filter((key) => key !== '?xml');
      expect(roots, file).toHaveLength(1);
      expect(
        z
          .object({ '@_xmlns': z.string() })
          .loose()
          .parse(document[roots[0] ?? '']),
        file,
      ).toMatchObject({ '@_xmlns': METADATA_NAMESPACE });
    }
  });

  it('are regenerated from the code (npm run manifests:salesforce), with no stale field file left', () => {
    for (const [file, content] of generatedManifests()) expect(read(file), `manifests/salesforce/${file} is stale`).toBe(content);
    expect(staleFieldFiles()).toEqual([]);
  });

  it('hold exactly the generated files and the hand-written sources (record component, triggers) in force-app/ and manifest/, beside the project file, README and .gitignore', () => {
    // Other folders (apex/, the optional callout for the events route) are not generated and not deployed by
    // package.xml; the component's jest tests (__tests__/) are kept from a deploy by .forceignore.
    const deployed = allFiles.filter((file) => (file.startsWith('force-app/') || file.startsWith('manifest/')) && !file.includes('/__tests__/'));
    const generated = [...generatedManifests().keys()];
    // person-accounts/ and households/ are projects of their own, checked below.
    const ownProject = (file: string) => file.startsWith(`${PERSON_ACCOUNT_DIR}/`) || file.startsWith(`${HOUSEHOLD_DIR}/`);
    expect(deployed).toEqual([...generated.filter((file) => file !== SFDX_PROJECT && !ownProject(file)), ...HAND_WRITTEN_SOURCES].sort());
    for (const file of [SFDX_PROJECT, 'README.md', '.gitignore', '.forceignore']) expect(allFiles).toContain(file);
    expect(read('.forceignore').split('\n')).toContain('**/__tests__/**');
  });

  it('use API version 62.0 everywhere: the project, package.xml, flows and outbound messages', () => {
    const project = SfdxProject.parse(JSON.parse(read(SFDX_PROJECT)));
    expect(project.sourceApiVersion).toBe(SALESFORCE_API_VERSION);
    expect(project.packageDirectories).toEqual([{ path: 'force-app', default: true }]);
    expect(parseRoot(PACKAGE_XML, 'Package', PackageFile).version).toBe(SALESFORCE_API_VERSION);
    for (const object of SALESFORCE_OBJECTS) {
      expect(parseRoot(flowFile(object), 'Flow', FlowFile).apiVersion).toBe(SALESFORCE_API_VERSION);
      for (const message of parseRoot(workflowFile(object), 'Workflow', WorkflowFile).outboundMessages) {
        expect(message.apiVersion).toBe(SALESFORCE_API_VERSION);
      }
    }
  });
});

/** A field file read back into the shape of a definition on `object`. */
function fieldFromFile(object: SalesforceFieldDefinition['object'], relative: string): Record<string, unknown> {
  const file = parseRoot(relative, 'CustomField', FieldFile);
  return {
    object,
    name: file.fullName,
    label: file.label,
    description: file.description,
    inlineHelpText: file.inlineHelpText,
    type: file.type,
    ...(file.length === undefined ? {} : { length: Number(file.length) }),
    ...(file.precision === undefined ? {} : { precision: Number(file.precision) }),
    ...(file.scale === undefined ? {} : { scale: Number(file.scale) }),
    ...(file.defaultValue === undefined ? {} : { defaultValue: file.defaultValue === 'true' }),
    ...(file.valueSet === undefined ? {} : { picklistValues: file.valueSet.valueSetDefinition.value.map((v) => ({ value: v.fullName, label: v.label })) }),
  };
}

describe('custom field files', () => {
  it('are one file per field and object, each equal to its generated definition', () => {
    for (const object of SALESFORCE_OBJECTS) {
      const files = allFiles.filter((file) => file.startsWith(`${SOURCE_DIR}/objects/${object}/fields/`));
      const expected = salesforceFields().filter((f) => f.object === object);
      expect(files.sort()).toEqual(expected.map((f) => fieldFile(object, f.name)).sort());
      for (const definition of expected) expect(fieldFromFile(object, fieldFile(object, definition.name)), definition.name).toEqual(definition);
    }
  });

  it('carry the elements each type needs: Checkbox a default, Text a length, Number precision and scale, Url none', () => {
    for (const definition of salesforceFields()) {
      const file = parseRoot(fieldFile(forceAppObject(definition), definition.name), 'CustomField', FieldFile);
      expect(file.fullName).toBe(definition.name);
      expect(file.defaultValue !== undefined, definition.name).toBe(file.type === 'Checkbox');
      if (file.type === 'Checkbox') expect(file.defaultValue).toBe('false');
      expect(file.length !== undefined, definition.name).toBe(file.type === 'Text');
      expect(file.precision !== undefined && file.scale !== undefined, definition.name).toBe(file.type === 'Number');
      expect(file.valueSet !== undefined, definition.name).toBe(file.type === 'Picklist');
      if (file.valueSet !== undefined) expect(file.valueSet.restricted).toBe('false');
      // Salesforce rejects `required` and `unique` on a Checkbox.
      if (file.type === 'Checkbox') expect(file.required ?? file.unique, definition.name).toBeUndefined();
    }
  });
});

describe('manifest/package.xml', () => {
  const pkg = parseRoot(PACKAGE_XML, 'Package', PackageFile);
  const listed = new Map(pkg.types.map((t) => [t.name, [...t.members].sort()]));

  /** The members the files on disk amount to, worked out from the files themselves. */
  function membersOnDisk(): Map<string, string[]> {
    const members = new Map<string, string[]>();
    const add = (type: string, member: string) => members.set(type, [...(members.get(type) ?? []), member].sort());
    for (const file of allFiles.filter((f) => f.startsWith(`${SOURCE_DIR}/`) && !f.includes('/__tests__/'))) {
      const rest = file.slice(SOURCE_DIR.length + 1);
      // A bundle is one member, named by its folder; a class by its meta file (beside its .cls).
      const bundle = /^lwc\/(\w+)\/\1\.js-meta\.xml$/.exec(rest);
      if (bundle !== null) {
        add('LightningComponentBundle', bundle[1] ?? '');
        continue;
      }
      if (HAND_WRITTEN_SOURCES.includes(file)) continue;
      const field = /^objects\/(\w+)\/fields\/(\w+)\.field-meta\.xml$/.exec(rest);
      const single = /^(\w+)\/([\w.]+?)\.([\w]+)-meta\.xml$/.exec(rest);
      if (field !== null) add('CustomField', `${field[1]}.${field[2]}`);
      else if (single?.[1] === 'permissionsets') add('PermissionSet', single[2] ?? '');
      else if (single?.[1] === 'flows') add('Flow', single[2] ?? '');
      else if (single?.[1] === 'externalClientApps') add('ExternalClientApplication', single[2] ?? '');
      else if (single?.[1] === 'extlClntAppOauthSettings') add('ExtlClntAppOauthSettings', single[2] ?? '');
      else if (single?.[1] === 'settings') add('Settings', single[2] ?? '');
      else if (single?.[1] === 'classes' && single[3] === 'cls') add('ApexClass', single[2] ?? '');
      else if (single?.[1] === 'triggers' && single[3] === 'trigger') add('ApexTrigger', single[2] ?? '');
      else if (single?.[1] === 'namedCredentials') add('NamedCredential', single[2] ?? '');
      else if (single?.[1] === 'externalCredentials') add('ExternalCredential', single[2] ?? '');
      else if (single?.[1] === 'workflows') {
        // The Workflow itself is a member as well as each outbound message in it: without it,
        // `sf project deploy start --manifest` refuses the outbound messages.
        const object = single[2] ?? '';
        add('Workflow', object);
        for (const message of parseRoot(file, 'Workflow', WorkflowFile).outboundMessages) add('WorkflowOutboundMessage', `${object}.${message.fullName}`);
      } else throw new Error(`no package.xml type for ${file}`);
    }
    return members;
  }

  it('lists exactly the fields, permission sets, flows, outbound messages, settings, External Client App, record component and triggers present', () => {
    const onDisk = membersOnDisk();
    expect([...listed.keys()].sort()).toEqual([...onDisk.keys()].sort());
    for (const [type, members] of onDisk) expect(listed.get(type), type).toEqual(members);
    // 62 enrichment fields and the do-not-enrich checkbox, on Contact and on Lead.
    expect(listed.get('CustomField')).toHaveLength(2 * 63);
  });

  // @salesforce/source-deploy-retrieve (what `sf project deploy start` uses) loads undici 8, which needs
  // Node 22 or later; CI runs the suite on Node 22 as well, so this check runs there.
  it.skipIf(Number(process.versions.node.split('.')[0]) < 22)(
    'lists exactly what @salesforce/source-deploy-retrieve derives from the source folder, Workflow members included',
    async () => {
      const { ComponentSet } = await import('@salesforce/source-deploy-retrieve');
      const set = ComponentSet.fromSource(path.join(SALESFORCE_MANIFEST_DIR, SOURCE_DIR));
      // Given, so SDR does not ask the network for the newest API version.
      set.apiVersion = SALESFORCE_API_VERSION;
      set.sourceApiVersion = SALESFORCE_API_VERSION;
      const derived = await set.getObject();
      const sdr = new Map(derived.Package.types.map((t) => [t.name, [...t.members].sort()]));
      expect(listed).toEqual(sdr);
    },
  );

  it('is what packageMembers() says, each type once', () => {
    expect(new Set(pkg.types.map((t) => t.name)).size).toBe(pkg.types.length);
    expect(listed).toEqual(new Map([...packageMembers()].map(([type, members]) => [type, [...members]])));
    expect(listed.get('PermissionSet')).toEqual([PERMISSION_SET_NAME, SENDER_PERMISSION_SET, RECORD_PERMISSION_SET]);
    expect(listed.get('ApexClass')).toEqual([...APEX_CLASSES].sort());
    expect(listed.get('ApexTrigger')).toEqual(['EnrichbridgeContactCreated', 'EnrichbridgeLeadCreated']);
    expect(listed.get('LightningComponentBundle')).toEqual([RECORD_COMPONENT]);
    expect(listed.get('NamedCredential')).toEqual([RECORD_CREDENTIAL]);
    expect(listed.get('ExternalCredential')).toEqual([RECORD_CREDENTIAL]);
    expect(listed.get('ExternalClientApplication')).toEqual([ECA_NAME]);
    expect(listed.get('ExtlClntAppOauthSettings')).toEqual([ECA_OAUTH_SETTINGS_NAME]);
    expect(listed.get('Settings')).toEqual(['LeadConvert']);
  });
});

describe('permission set', () => {
  const permissionSet = parseRoot(PERMISSION_SET_FILE, 'PermissionSet', PermissionSetFile);

  it('grants read and edit on every field of ours on Contact and Lead, and nothing else', () => {
    const granted = permissionSet.fieldPermissions.map((p) => p.field);
    expect([...granted].sort()).toEqual(
      salesforceFields()
        .map((f) => `${f.object}.${f.name}`)
        .sort(),
    );
    expect(new Set(granted).size).toBe(granted.length);
    for (const permission of permissionSet.fieldPermissions) expect(permission, permission.field).toMatchObject({ editable: 'true', readable: 'true' });
    expect(permissionSet.label).toBe('Enrichbridge');
  });
});

describe('lead conversion mapping', () => {
  const withoutObject = ({ object: _object, ...rest }: SalesforceFieldDefinition) => rest;
  const settings = parseRoot(LEAD_CONVERT_FILE, 'LeadConvertSettings', LeadConvertFile);

  it('maps every Lead field of ours to the Contact field of the same name, of the same type', () => {
    expect(settings.objectMapping).toHaveLength(1);
    const [mapping] = settings.objectMapping;
    expect(mapping?.inputObject).toBe('Lead');
    expect(mapping?.outputObject).toBe('Contact');
    const pairs = mapping?.mappingFields ?? [];
    const lead = new Map(
      salesforceFields()
        .filter((f) => f.object === 'Lead')
        .map((f) => [f.name, f]),
    );
    const contact = new Map(
      salesforceFields()
        .filter((f) => f.object === 'Contact')
        .map((f) => [f.name, f]),
    );
    expect(pairs.map((p) => p.inputField).sort()).toEqual([...lead.keys()].sort());
    for (const { inputField, outputField } of pairs) {
      expect(outputField).toBe(inputField);
      const from = lead.get(inputField);
      const to = contact.get(outputField);
      expect(to && withoutObject(to), inputField).toEqual(from && withoutObject(from));
    }
  });
});

describe('outbound messages', () => {
  for (const object of SALESFORCE_OBJECTS) {
    it(`${object}: one message with Id and the identity fields of the ${object}, to the outbound-message route, without a session id`, () => {
      const { outboundMessages } = parseRoot(workflowFile(object), 'Workflow', WorkflowFile);
      expect(outboundMessages).toHaveLength(1);
      const [message] = outboundMessages;
      expect(message?.fullName).toBe(OUTBOUND_MESSAGE_NAMES[object]);
      expect(message?.name).toBe(OUTBOUND_MESSAGE_NAMES[object]);
      const expected = ['Id', ...SALESFORCE_IDENTITY_FIELDS[object].filter((f) => !f.includes('.'))];
      expect([...(message?.fields ?? [])].sort()).toEqual(expected.sort());
      expect(message?.fields).not.toContain('Account.Name');
      // The route, then the installation's secret: outbound messages carry no signature, the URL does.
      expect(message?.endpointUrl).toBe(`${PUBLIC_BASE_PLACEHOLDER}${SALESFORCE_OUTBOUND_MESSAGE_ROUTE}/${OUTBOUND_SECRET_PLACEHOLDER}`);
      expect(message?.endpointUrl.startsWith('https://')).toBe(true);
      expect(message?.includeSessionId).toBe('false');
      expect(message?.integrationUser).toBe(INTEGRATION_USER_PLACEHOLDER);
    });
  }

  it('includes the Lead Company but not a Contact relationship field', () => {
    const lead = parseRoot(workflowFile('Lead'), 'Workflow', WorkflowFile).outboundMessages[0]?.fields ?? [];
    expect(lead).toContain('Company');
  });
});

describe('record-triggered flows', () => {
  for (const object of SALESFORCE_OBJECTS) {
    it(`${object}: after a ${object} is created without ${ENRICHED_AT_FIELD}, calls its outbound message`, () => {
      const flow = parseRoot(flowFile(object), 'Flow', FlowFile);
      expect(flowFile(object).endsWith(`${FLOW_NAMES[object]}.flow-meta.xml`)).toBe(true);
      expect(flow.start).toMatchObject({ object, recordTriggerType: 'Create', triggerType: 'RecordAfterSave' });
      expect(flow.status).toBe('Active');
      expect(flow.actionCalls).toHaveLength(1);
      const [action] = flow.actionCalls;
      expect(action?.actionType).toBe('outboundMessage');
      expect(action?.actionName).toBe(`${object}.${OUTBOUND_MESSAGE_NAMES[object]}`);
      expect(flow.start.connector.targetReference).toBe(action?.name);
      // The message it calls exists on the same object.
      const messages = parseRoot(workflowFile(object), 'Workflow', WorkflowFile).outboundMessages.map((m) => `${object}.${m.fullName}`);
      expect(messages).toContain(action?.actionName);
      // The entry condition tests a field the metadata creates on this object.
      expect(flow.start.filters).toEqual([{ field: ENRICHED_AT_FIELD, operator: 'IsNull', value: { booleanValue: 'true' } }]);
      expect(allFiles).toContain(fieldFile(object, ENRICHED_AT_FIELD));
    });
  }
});

describe('External Client App', () => {
  it('is a local app with the Api and RefreshToken scopes', () => {
    const eca = parseRoot(ECA_FILE, 'ExternalClientApplication', EcaFile);
    expect(eca.label).toBe('Enrichbridge');
    expect(ECA_FILE.endsWith(`/externalClientApps/${ECA_NAME}.eca-meta.xml`)).toBe(true);
    const oauth = parseRoot(ECA_OAUTH_FILE, 'ExtlClntAppOauthSettings', EcaOauthFile);
    expect(oauth.externalClientApplication).toBe(ECA_NAME);
    expect(oauth.commaSeparatedOauthScopes.split(',').map((s) => s.trim())).toEqual(['Api', 'RefreshToken']);
  });

  it('holds no secret: no global OAuth settings file, no consumer key, secret or certificate anywhere', () => {
    expect(allFiles.filter((file) => /ecaGlblOauth|extlClntAppGlobalOauthSets/.test(file))).toEqual([]);
    for (const file of xmlFiles) {
      expect(read(file), file).not.toMatch(/<(consumerKey|consumerSecret|certificate|callbackUrl)>/);
    }
    expect(read('.gitignore')).toContain('extlClntAppGlobalOauthSets/');
  });

  it('has its callback URL documented for the admin, on the OAuth callback route', () => {
    expect(oauthCallbackUrl()).toBe(`${PUBLIC_BASE_PLACEHOLDER}${SALESFORCE_OAUTH_CALLBACK_ROUTE}`);
    expect(read('README.md')).toContain(oauthCallbackUrl());
  });
});

describe('manifests/salesforce/README.md', () => {
  const readme = read('README.md');

  it('explains deploying, the placeholders and every generated file kind', () => {
    for (const word of ['sf project deploy start', 'YOUR_PUBLIC_HOST', INTEGRATION_USER_PLACEHOLDER, 'npm run manifests:salesforce', 'Enrichbridge']) {
      expect(readme, word).toContain(word);
    }
    for (const file of [
      SFDX_PROJECT,
      PACKAGE_XML,
      'LeadConvert.settings-meta.xml',
      'Enrichbridge.permissionset-meta.xml',
      'Enrichbridge.eca-meta.xml',
      'Enrichbridge_oauth.ecaOauth-meta.xml',
    ]) {
      expect(readme, file).toContain(file);
    }
    for (const object of SALESFORCE_OBJECTS) {
      expect(readme).toContain(`${FLOW_NAMES[object]}.flow-meta.xml`);
      expect(readme).toContain(OUTBOUND_MESSAGE_NAMES[object]);
      expect(readme).toContain(`${object}.workflow-meta.xml`);
    }
    expect(readme).toContain(`${PUBLIC_BASE_PLACEHOLDER}${SALESFORCE_OUTBOUND_MESSAGE_ROUTE}/${OUTBOUND_SECRET_PLACEHOLDER}`);
    expect(readme).toContain('enrichbridge salesforce outbound-url');
  });

  it('names every outbound message field', () => {
    for (const object of SALESFORCE_OBJECTS) {
      for (const field of ['Id', ...SALESFORCE_IDENTITY_FIELDS[object]]) expect(readme, field).toContain(`\`${field}\``);
    }
  });
});

/** Every syntax error of an Apex class (`compilationUnit`) or trigger (`triggerUnit`), lexer and parser both. */
function apexSyntaxErrors(source: string, unit: 'class' | 'trigger'): string[] {
  const errors: string[] = [];
  class Collect extends ApexErrorListener {
    apexSyntaxError(line: number, column: number, message: string): void {
      errors.push(`${line}:${column} ${message}`);
    }
  }
  const { parser } = ApexParserFactory.createLexerAndParser(source, new Collect());
  if (unit === 'trigger') parser.triggerUnit();
  else parser.compilationUnit();
  return errors;
}

describe('the new-record triggers and their Queueable', () => {
  const sender = read(`${SOURCE_DIR}/classes/${RECORD_SENDER}.cls`);
  const senderTest = read(`${SOURCE_DIR}/classes/${RECORD_SENDER}Test.cls`);

  it('parse without a syntax error (@apexdevtools/apex-parser), and the parser does report a broken trigger', () => {
    for (const object of SALESFORCE_OBJECTS) expect(apexSyntaxErrors(read(apexTriggerFile(object)), 'trigger'), object).toEqual([]);
    expect(apexSyntaxErrors(sender, 'class')).toEqual([]);
    expect(apexSyntaxErrors(senderTest, 'class')).toEqual([]);
    expect(apexSyntaxErrors('trigger Broken on Contact (after insert) { Foo.bar( }', 'trigger').length).toBeGreaterThan(0);
    // A class is not a trigger: the unit is checked, not only the braces.
    expect(apexSyntaxErrors(sender, 'trigger').length).toBeGreaterThan(0);
  });

  for (const object of SALESFORCE_OBJECTS) {
    it(`${object}: fires after insert only, as its flow does, and hands the records and ${ENRICHED_AT_FIELD} to the Queueable`, () => {
      const trigger = read(apexTriggerFile(object));
      const declaration = /trigger\s+(\w+)\s+on\s+(\w+)\s*\(([^)]*)\)/.exec(trigger);
      expect(declaration?.slice(1, 4)).toEqual([APEX_TRIGGERS[object], object, 'after insert']);
      expect(trigger).toContain(`${RECORD_SENDER}.onInsert('${object}', Trigger.new, ${object}.${ENRICHED_AT_FIELD});`);
      // The flow it stands beside fires on create with the same filter.
      expect(parseRoot(flowFile(object), 'Flow', FlowFile).start).toMatchObject({ recordTriggerType: 'Create', triggerType: 'RecordAfterSave' });
      expect(allFiles).toContain(apexTriggerMetaFile(object));
    });
  }

  it('posts to the trigger route through the Named Credential, at most as many ids per callout as the route takes, with a timeout', () => {
    expect(sender).toContain(`'callout:${RECORD_CREDENTIAL}${SALESFORCE_TRIGGER_ROUTE}'`);
    expect(sender).toMatch(/implements Queueable, Database\.AllowsCallouts/);
    expect(Number(/CHUNK_SIZE = (\d+);/.exec(sender)?.[1])).toBe(EVENTS_MAX_IDS);
    expect(sender).toMatch(/req\.setTimeout\(TIMEOUT_MS\)/);
    for (const field of ['deliveryId', 'orgId', 'object', 'ids']) expect(sender).toContain(`'${field}' =>`);
    expect(sender).toContain('UUID.randomUUID()');
    expect(sender).toContain('Limits.getLimitQueueableJobs()');
    expect(sender).toContain('Test.isRunningTest() && !sendInTests');
  });

  it('holds no secret: the header comes from the External Credential, never from Apex or custom metadata', () => {
    for (const source of [sender, senderTest, ...SALESFORCE_OBJECTS.map((object) => read(apexTriggerFile(object)))]) {
      expect(source).not.toMatch(new RegExp(`setHeader\\('${SALESFORCE_RECORD_SECRET_HEADER}'`, 'i'));
      expect(source).not.toContain('Crypto.');
      expect(source).not.toContain('__mdt');
    }
  });

  it('ship an HttpCalloutMock test of one record, a 200-record insert in one callout, and a refusal that leaves the save alone', () => {
    expect(senderTest).toMatch(/^@IsTest/);
    expect(senderTest).toContain('implements HttpCalloutMock');
    expect(senderTest).toMatch(
      /i < 200;[\s\S]*insert people;[\s\S]*System\.assertEquals\(1, mock\.received\.size\(\)\);[\s\S]*System\.assertEquals\(200, sent\.size\(\)\);/,
    );
    expect(senderTest).toContain('answering(401, \'{"ok":false,"reason":"unauthorised"');
    expect(senderTest).toContain('sendsNothingInATestThatSetNoMock');
  });

  it('is granted to record creators by a permission set of the principal alone; the classes and triggers have their meta files', () => {
    const set = z
      .object({
        PermissionSet: z
          .object({
            '@_xmlns': z.string(),
            description: z.string(),
            externalCredentialPrincipalAccesses: z.object({ enabled: z.literal('true'), externalCredentialPrincipal: z.string() }).strict(),
            label: z.string(),
            objectPermissions: z.object({ object: z.literal('UserExternalCredential'), allowRead: z.literal('true') }).loose(),
          })
          .strict(),
      })
      .parse(parser.parse(read(SENDER_PERMISSION_SET_FILE))).PermissionSet;
    expect(set.externalCredentialPrincipalAccesses.externalCredentialPrincipal).toBe(`${RECORD_CREDENTIAL}-${RECORD_PRINCIPAL}`);
    for (const name of [RECORD_SENDER, `${RECORD_SENDER}Test`]) expect(allFiles).toContain(apexClassMetaFile(name));
  });

  it('resolve to ApexClass and ApexTrigger by source-deploy-retrieve’s registry: folder and suffix', () => {
    const registry = z
      .object({ types: z.record(z.string(), z.object({ name: z.string(), directoryName: z.string(), suffix: z.string().optional() }).loose()) })
      .parse(createRequire(import.meta.url)('@salesforce/source-deploy-retrieve/lib/src/registry/metadataRegistry.json'));
    const typeOf = (name: string) => Object.values(registry.types).find((type) => type.name === name);
    const files: [string, string][] = [
      ['ApexClass', apexClassMetaFile(RECORD_SENDER)],
      ['ApexClass', apexClassMetaFile(`${RECORD_SENDER}Test`)],
      ...SALESFORCE_OBJECTS.map((object): [string, string] => ['ApexTrigger', apexTriggerMetaFile(object)]),
      ['PermissionSet', SENDER_PERMISSION_SET_FILE],
    ];
    for (const [name, file] of files) {
      const type = typeOf(name);
      expect(type, name).toBeDefined();
      expect(file.startsWith(`${SOURCE_DIR}/${type?.directoryName}/`), file).toBe(true);
      expect(file.endsWith(`.${type?.suffix}-meta.xml`), file).toBe(true);
      expect(generatedManifests().has(file), file).toBe(true);
    }
  });
});

describe('the optional person-Account trigger (person-accounts/)', () => {
  const trigger = read(PERSON_ACCOUNT_TRIGGER_FILE);
  const triggerTest = read(PERSON_ACCOUNT_TEST_FILE);
  const sender = read(`${SOURCE_DIR}/classes/${RECORD_SENDER}.cls`);

  it('is its own DX project of generated files, its hand-written trigger and test class, and a README, and nothing else', () => {
    const files = allFiles.filter((file) => file.startsWith(`${PERSON_ACCOUNT_DIR}/`));
    const generated = [...generatedManifests().keys()].filter((file) => file.startsWith(`${PERSON_ACCOUNT_DIR}/`));
    expect(generated.sort()).toEqual([PERSON_ACCOUNT_SFDX_PROJECT, PERSON_ACCOUNT_TEST_META_FILE, PERSON_ACCOUNT_TRIGGER_META_FILE].sort());
    expect(files).toEqual([...generated, ...PERSON_ACCOUNT_SOURCES, `${PERSON_ACCOUNT_DIR}/README.md`].sort());
    const project = SfdxProject.parse(JSON.parse(read(PERSON_ACCOUNT_SFDX_PROJECT)));
    expect(project.packageDirectories).toEqual([{ path: 'force-app', default: true }]);
    expect(project.sourceApiVersion).toBe(SALESFORCE_API_VERSION);
    for (const meta of [PERSON_ACCOUNT_TRIGGER_META_FILE, PERSON_ACCOUNT_TEST_META_FILE]) {
      expect(read(meta), meta).toContain(`<apiVersion>${SALESFORCE_API_VERSION}</apiVersion>`);
      expect(read(meta), meta).toContain('<status>Active</status>');
    }
  });

  it('keeps force-app deployable to an org without Person Accounts: nothing there names IsPersonAccount or a __pc field', () => {
    const deployed = allFiles.filter((file) => file.startsWith('force-app/') && !file.includes('/__tests__/'));
    for (const file of deployed) {
      expect(read(file), file).not.toMatch(/IsPersonAccount|\w__pc\b|IsPersonType/);
    }
    expect(read(PACKAGE_XML)).not.toContain(PERSON_ACCOUNT_TRIGGER);
    // The main project's package directory is force-app alone: a deploy of it never reaches person-accounts/.
    expect(SfdxProject.parse(JSON.parse(read(SFDX_PROJECT))).packageDirectories.map((d) => d.path)).toEqual(['force-app']);
  });

  it('parses without a syntax error (@apexdevtools/apex-parser): the trigger as a trigger, the test as a class', () => {
    expect(apexSyntaxErrors(trigger, 'trigger')).toEqual([]);
    expect(apexSyntaxErrors(triggerTest, 'class')).toEqual([]);
    expect(apexSyntaxErrors(trigger, 'class').length).toBeGreaterThan(0);
  });

  it(`fires after insert on Account only, keeps the person Accounts, and hands them with ${PERSON_ACCOUNT_ENRICHED_AT_FIELD} to the Queueable as Account`, () => {
    expect(PERSON_ACCOUNT_ENRICHED_AT_FIELD).toBe('WF_Enriched_At__pc');
    const declaration = /trigger\s+(\w+)\s+on\s+(\w+)\s*\(([^)]*)\)/.exec(trigger);
    expect(declaration?.slice(1, 4)).toEqual([PERSON_ACCOUNT_TRIGGER, PERSON_ACCOUNT_OBJECT, 'after insert']);
    // A static reference: the folder deploys only where Person Accounts exist, and fails loudly elsewhere.
    expect(trigger).toMatch(/for \(Account record : Trigger\.new\)\s*\{\s*if \(record\.IsPersonAccount == true\)\s*\{\s*people\.add\(record\);/);
    expect(trigger).toContain(`${RECORD_SENDER}.onInsert('${PERSON_ACCOUNT_OBJECT}', people, ${PERSON_ACCOUNT_OBJECT}.${PERSON_ACCOUNT_ENRICHED_AT_FIELD});`);
    // Nothing else is sent: Trigger.new goes to the Queueable only through the person filter.
    expect(trigger.match(/onInsert\(/g)).toHaveLength(1);
    expect(trigger).not.toMatch(/onInsert\([^)]*Trigger\.new/);
    // The entry point it calls is the public one the Contact and Lead triggers use, taking any SObject list.
    expect(sender).toMatch(/public static void onInsert\(String objectName, List<SObject> records, Schema\.SObjectField enrichedAt\)/);
  });

  it('holds no secret: the header comes from the Named Credential', () => {
    for (const source of [trigger, triggerTest]) {
      expect(source).not.toMatch(new RegExp(`setHeader\\('${SALESFORCE_RECORD_SECRET_HEADER}'`, 'i'));
      expect(source).not.toContain('Crypto.');
      expect(source).not.toContain('__mdt');
    }
  });

  it('ships an HttpCalloutMock test: a person Account is one callout naming Account, a business Account none, 200 person Accounts one callout', () => {
    expect(triggerTest).toMatch(/^(\/\*\*[\s\S]*?\*\/\n)?@IsTest\nprivate class /);
    expect(triggerTest).toContain(`class ${PERSON_ACCOUNT_TRIGGER_TEST} {`);
    expect(triggerTest).toContain('implements HttpCalloutMock');
    expect(triggerTest).toContain(`${RECORD_SENDER}.sendInTests = true;`);
    expect(triggerTest).toContain('IsPersonType = true');
    /** One test method's body: from its declaration to the next test's annotation. */
    const method = (name: string): string => {
      const start = triggerTest.indexOf(`static void ${name}()`);
      expect(start, name).toBeGreaterThan(0);
      const end = triggerTest.indexOf('@IsTest', start);
      return triggerTest.slice(start, end < 0 ? undefined : end);
    };
    expect(method('sendsANewPersonAccountAsAccount')).toMatch(
      /insert amanda;[\s\S]*System\.assertEquals\(1, mock\.received\.size\(\)\);[\s\S]*System\.assertEquals\('Account', body\.get\('object'\)\);[\s\S]*amanda\.Id/,
    );
    expect(method('sendsNoBusinessAccount')).toMatch(
      /insert new Account\(RecordTypeId = businessRecordType\(\)[\s\S]*System\.assertEquals\(0, mock\.received\.size\(\)\);/,
    );
    expect(method('sendsAnInsertOf200PersonAccountsInOneCallout')).toMatch(
      /i < 200;[\s\S]*insert people;[\s\S]*System\.assertEquals\(1, mock\.received\.size\(\)\);[\s\S]*System\.assertEquals\(200, sent\.size\(\)\);/,
    );
    expect(triggerTest).toContain(`WF_Enriched_At__pc = Datetime.now()`);
  });

  it('resolves to ApexTrigger and ApexClass by source-deploy-retrieve’s registry: folder and suffix', () => {
    const registry = z
      .object({ types: z.record(z.string(), z.object({ name: z.string(), directoryName: z.string(), suffix: z.string().optional() }).loose()) })
      .parse(createRequire(import.meta.url)('@salesforce/source-deploy-retrieve/lib/src/registry/metadataRegistry.json'));
    const typeOf = (name: string) => Object.values(registry.types).find((type) => type.name === name);
    for (const [name, file] of [
      ['ApexTrigger', PERSON_ACCOUNT_TRIGGER_META_FILE],
      ['ApexClass', PERSON_ACCOUNT_TEST_META_FILE],
    ] as const) {
      const type = typeOf(name);
      expect(type, name).toBeDefined();
      expect(file.startsWith(`${PERSON_ACCOUNT_DIR}/${SOURCE_DIR}/${type?.directoryName}/`), file).toBe(true);
      expect(file.endsWith(`.${type?.suffix}-meta.xml`), file).toBe(true);
    }
  });

  // As for force-app: source-deploy-retrieve needs Node 22 or later.
  it.skipIf(Number(process.versions.node.split('.')[0]) < 22)(
    'is exactly the trigger and its test class to @salesforce/source-deploy-retrieve, the README left out',
    async () => {
      const { ComponentSet } = await import('@salesforce/source-deploy-retrieve');
      const set = ComponentSet.fromSource(path.join(SALESFORCE_MANIFEST_DIR, PERSON_ACCOUNT_DIR, 'force-app'));
      set.apiVersion = SALESFORCE_API_VERSION;
      set.sourceApiVersion = SALESFORCE_API_VERSION;
      const derived = await set.getObject();
      const sdr = new Map(derived.Package.types.map((t) => [t.name, [...t.members].sort()]));
      expect(sdr).toEqual(
        new Map([
          ['ApexClass', [PERSON_ACCOUNT_TRIGGER_TEST]],
          ['ApexTrigger', [PERSON_ACCOUNT_TRIGGER]],
        ]),
      );
    },
  );

  it('has a README that says how to deploy it, what it reads and writes, and how to turn Account on', () => {
    const readme = read(`${PERSON_ACCOUNT_DIR}/README.md`);
    for (const word of [
      'sf project deploy start --source-dir force-app',
      `cd ${PERSON_ACCOUNT_DIR}`,
      PERSON_ACCOUNT_TRIGGER,
      PERSON_ACCOUNT_TRIGGER_TEST,
      PERSON_ACCOUNT_ENRICHED_AT_FIELD,
      'IsPersonAccount',
      '--objects Contact,Lead,Account',
    ]) {
      expect(readme, word).toContain(word);
    }
    expect(read('README.md')).toContain(`${PERSON_ACCOUNT_DIR}/`);
  });
});

describe('the optional NPSP households project (households/)', () => {
  const householdFiles = allFiles.filter((file) => file.startsWith(`${HOUSEHOLD_DIR}/`));
  const fieldsDir = `${HOUSEHOLD_DIR}/${SOURCE_DIR}/objects/${HOUSEHOLD_OBJECT}/fields/`;

  it('is its own DX project of generated files and a README, and nothing else', () => {
    const generated = [...generatedManifests().keys()].filter((file) => file.startsWith(`${HOUSEHOLD_DIR}/`));
    expect(householdFiles).toEqual([...generated, `${HOUSEHOLD_DIR}/README.md`].sort());
    const project = SfdxProject.parse(JSON.parse(read(HOUSEHOLD_SFDX_PROJECT)));
    expect(project.packageDirectories).toEqual([{ path: 'force-app', default: true }]);
    expect(project.sourceApiVersion).toBe(SALESFORCE_API_VERSION);
    expect(parseRoot(HOUSEHOLD_PACKAGE_XML, 'Package', PackageFile).version).toBe(SALESFORCE_API_VERSION);
    expect(parseRoot(HOUSEHOLD_FLOW_FILE, 'Flow', HouseholdFlowFile).apiVersion).toBe(SALESFORCE_API_VERSION);
  });

  it('holds exactly salesforceHouseholdAccountFields() on Account, each file its definition, the Contact field under the same name', () => {
    const expected = salesforceHouseholdAccountFields();
    expect(HOUSEHOLD_OBJECT).toBe(HOUSEHOLD_ACCOUNT_OBJECT);
    expect(expected).toHaveLength(32);
    expect(householdFiles.filter((file) => file.startsWith(fieldsDir))).toEqual(expected.map((f) => householdFieldFile(f.name)).sort());
    const contact = new Map(
      salesforceFields()
        .filter((f) => f.object === 'Contact')
        .map((f) => [f.name, f]),
    );
    for (const definition of expected) {
      expect(definition.object, definition.name).toBe('Account');
      expect(fieldFromFile('Account', householdFieldFile(definition.name)), definition.name).toEqual(definition);
      // The same field as on Contact: name, label, type and all, only the object differs.
      expect(definition, definition.name).toEqual({ ...contact.get(definition.name), object: 'Account' });
      expect(read(householdFieldFile(definition.name)), definition.name).toBe(read(fieldFile('Contact', definition.name)));
    }
    expect(staleFieldFiles()).toEqual([]);
  });

  it('keeps force-app free of it: no Account field, no households flow or permission set there', () => {
    expect(allFiles.filter((file) => file.startsWith(`${SOURCE_DIR}/objects/${HOUSEHOLD_OBJECT}/`))).toEqual([]);
    const main = read(PACKAGE_XML);
    for (const word of [`${HOUSEHOLD_OBJECT}.`, HOUSEHOLD_FLOW, HOUSEHOLD_PERMISSION_SET]) expect(main, word).not.toContain(word);
    for (const field of salesforceHouseholdAccountFields()) expect(() => forceAppObject(field), field.name).toThrow(/Contact and Lead fields only/);
  });

  it('grants read and edit on every household Account field in Enrichbridge_Households, as the main set grants Contact fields, and nothing else', () => {
    const set = parseRoot(HOUSEHOLD_PERMISSION_SET_FILE, 'PermissionSet', PermissionSetFile);
    expect(HOUSEHOLD_PERMISSION_SET_FILE.endsWith(`/permissionsets/${HOUSEHOLD_PERMISSION_SET}.permissionset-meta.xml`)).toBe(true);
    expect(set.fieldPermissions.map((p) => p.field)).toEqual(
      salesforceHouseholdAccountFields()
        .map((f) => `Account.${f.name}`)
        .sort(),
    );
    const main = new Map(parseRoot(PERMISSION_SET_FILE, 'PermissionSet', PermissionSetFile).fieldPermissions.map((p) => [p.field, p]));
    for (const permission of set.fieldPermissions) {
      expect(permission, permission.field).toEqual({ editable: 'true', field: permission.field, readable: 'true' });
      const onContact = main.get(permission.field.replace(/^Account\./, 'Contact.'));
      expect(onContact && { ...onContact, field: permission.field }, permission.field).toEqual(permission);
    }
    // PermissionSetFile is strict: no objectPermissions, as the main set has none for Contact.
    expect(read(HOUSEHOLD_PERMISSION_SET_FILE)).not.toContain('<objectPermissions>');
  });

  it(`fires the flow only on update when ${HOUSEHOLD_LINK_FIELD} changed on an enriched contact, and sends ${OUTBOUND_MESSAGE_NAMES.Contact}`, () => {
    const flow = parseRoot(HOUSEHOLD_FLOW_FILE, 'Flow', HouseholdFlowFile);
    expect(HOUSEHOLD_FLOW_FILE.endsWith(`/flows/${HOUSEHOLD_FLOW}.flow-meta.xml`)).toBe(true);
    expect(HOUSEHOLD_FLOW_OBJECT).toBe('Contact');
    expect(flow.start).toMatchObject({ object: 'Contact', recordTriggerType: 'Update', triggerType: 'RecordAfterSave', filterLogic: 'and' });
    // Every update that meets the conditions, not only one that turns them from unmet to met.
    expect(flow.start.doesRequireRecordChangedToMeetCriteria).toBe('false');
    expect(flow.start.filters).toEqual([
      { field: HOUSEHOLD_LINK_FIELD, operator: 'IsChanged', value: { booleanValue: 'true' } },
      { field: ENRICHED_AT_FIELD, operator: 'IsNull', value: { booleanValue: 'false' } },
    ]);
    expect(flow.status).toBe('Active');
    expect(flow.actionCalls).toHaveLength(1);
    const [action] = flow.actionCalls;
    expect(action).toMatchObject({ actionType: 'outboundMessage', actionName: `Contact.${OUTBOUND_MESSAGE_NAMES.Contact}` });
    expect(flow.start.connector.targetReference).toBe(action?.name);
    // The same action the new-Contact flow sends, to the message force-app defines on Contact.
    expect(action).toEqual(parseRoot(flowFile('Contact'), 'Flow', FlowFile).actionCalls[0]);
    const messages = parseRoot(workflowFile('Contact'), 'Workflow', WorkflowFile).outboundMessages.map((m) => `Contact.${m.fullName}`);
    expect(messages).toContain(action?.actionName);
    // Metadata API order: the start element's own fields after its FlowNode ones, alphabetically.
    const start = read(HOUSEHOLD_FLOW_FILE).slice(read(HOUSEHOLD_FLOW_FILE).indexOf('<start>'));
    const order = [
      '<locationX>',
      '<locationY>',
      '<connector>',
      '<doesRequireRecordChangedToMeetCriteria>',
      '<filterLogic>',
      '<filters>',
      '<object>',
      '<recordTriggerType>',
      '<triggerType>',
    ];
    const positions = order.map((tag) => start.indexOf(tag));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('lists exactly its fields, flow and permission set in its package.xml', () => {
    const pkg = parseRoot(HOUSEHOLD_PACKAGE_XML, 'Package', PackageFile);
    const listed = new Map(pkg.types.map((t) => [t.name, [...t.members].sort()]));
    expect(listed).toEqual(new Map([...householdPackageMembers()].map(([type, members]) => [type, [...members]])));
    const onDisk = new Map<string, string[]>([
      ['CustomField', householdFiles.filter((f) => f.startsWith(fieldsDir)).map((f) => `${HOUSEHOLD_OBJECT}.${path.basename(f, '.field-meta.xml')}`)],
      ['Flow', householdFiles.filter((f) => f.includes('/flows/')).map((f) => path.basename(f, '.flow-meta.xml'))],
      ['PermissionSet', householdFiles.filter((f) => f.includes('/permissionsets/')).map((f) => path.basename(f, '.permissionset-meta.xml'))],
    ]);
    expect(listed).toEqual(new Map([...onDisk].map(([type, members]) => [type, members.sort()])));
    expect(listed.get('Flow')).toEqual([HOUSEHOLD_FLOW]);
    expect(listed.get('PermissionSet')).toEqual([HOUSEHOLD_PERMISSION_SET]);
  });

  it('resolves every component by source-deploy-retrieve’s registry: folder and suffix', () => {
    const Type = z.object({ name: z.string(), directoryName: z.string(), suffix: z.string().optional() }).loose();
    const registry = z
      .object({ types: z.record(z.string(), Type.extend({ children: z.object({ types: z.record(z.string(), Type) }).optional() })) })
      .parse(createRequire(import.meta.url)('@salesforce/source-deploy-retrieve/lib/src/registry/metadataRegistry.json'));
    const typeOf = (name: string) => Object.values(registry.types).find((type) => type.name === name);
    const files = [...generatedManifests().keys()].filter((file) => file.startsWith(`${HOUSEHOLD_DIR}/${SOURCE_DIR}/`));
    expect(files).toHaveLength(32 + 2);
    for (const file of files) {
      const rest = file.slice(`${HOUSEHOLD_DIR}/${SOURCE_DIR}/`.length);
      if (rest.startsWith('objects/')) {
        // A field is a child of its object: objects/<Object>/fields/<name>.field-meta.xml.
        const object = typeOf('CustomObject');
        const field = Object.values(object?.children?.types ?? {}).find((type) => type.name === 'CustomField');
        expect(rest.startsWith(`${object?.directoryName}/${HOUSEHOLD_OBJECT}/${field?.directoryName}/`), file).toBe(true);
        expect(file.endsWith(`.${field?.suffix}-meta.xml`), file).toBe(true);
        continue;
      }
      const type = rest.startsWith('flows/') ? typeOf('Flow') : typeOf('PermissionSet');
      expect(type, file).toBeDefined();
      expect(rest.startsWith(`${type?.directoryName}/`), file).toBe(true);
      expect(file.endsWith(`.${type?.suffix}-meta.xml`), file).toBe(true);
    }
  });

  // As for force-app: source-deploy-retrieve needs Node 22 or later.
  it.skipIf(Number(process.versions.node.split('.')[0]) < 22)(
    'is exactly its package.xml to @salesforce/source-deploy-retrieve, the README left out',
    async () => {
      const { ComponentSet } = await import('@salesforce/source-deploy-retrieve');
      const set = ComponentSet.fromSource(path.join(SALESFORCE_MANIFEST_DIR, HOUSEHOLD_DIR, 'force-app'));
      set.apiVersion = SALESFORCE_API_VERSION;
      set.sourceApiVersion = SALESFORCE_API_VERSION;
      const derived = await set.getObject();
      const sdr = new Map(derived.Package.types.map((t) => [t.name, [...t.members].sort()]));
      const listed = parseRoot(HOUSEHOLD_PACKAGE_XML, 'Package', PackageFile).types;
      expect(sdr).toEqual(new Map(listed.map((t) => [t.name, [...t.members].sort()])));
    },
  );

  it('is up to date: `npm run manifests:salesforce -- --check` passes', () => {
    for (const file of householdFiles.filter((f) => f !== `${HOUSEHOLD_DIR}/README.md`)) {
      expect(read(file), `manifests/salesforce/${file} is stale`).toBe(generatedManifests().get(file));
    }
    // The script itself, as CI and the README run it: exit 0 and nothing out of date.
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/salesforce-manifest.ts', '--check'], {
      cwd: path.resolve(SALESFORCE_MANIFEST_DIR, '../..'),
      encoding: 'utf8',
    });
    expect(out).toContain('manifests/salesforce: up to date');
  });

  it('has a README that says what it is, how to deploy it after force-app, the permission set, how to turn it on, and what the flow does', () => {
    const readme = read(`${HOUSEHOLD_DIR}/README.md`);
    for (const word of [
      'Household Account',
      'npe01__SYSTEM_AccountType__c',
      `cd ${HOUSEHOLD_DIR}`,
      'sf project deploy start',
      'after `force-app`',
      HOUSEHOLD_PERMISSION_SET,
      'integration user',
      'enrichbridge salesforce households INSTALLATION --on household',
      '`--on both`',
      '`--on record`',
      HOUSEHOLD_FLOW,
      OUTBOUND_MESSAGE_NAMES.Contact,
      HOUSEHOLD_LINK_FIELD,
    ]) {
      expect(readme, word).toContain(word);
    }
    expect(read('README.md')).toContain(`${HOUSEHOLD_DIR}/`);
  });
});
