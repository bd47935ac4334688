// Regenerates manifests/salesforce/ (sfdx source format) from the code: the custom fields on Contact and
// Lead, the lead conversion mapping, the permission set, the record-triggered flows and their outbound
// messages, the External Client App, the record component's metadata (the Named and External Credential
// it calls enrichbridge through, its permission set, the Apex classes' and the Lightning Web Component's
// meta files), the packaged after-insert triggers' meta files and the permission set their callouts need,
// package.xml and sfdx-project.json; and the optional person-Account trigger's own small project
// (person-accounts/: its sfdx-project.json and meta files), kept out of force-app because it names fields
// only an org with Person Accounts has; and the optional NPSP households project (households/: the
// household fields on Account, their permission set, the flow that re-sends a contact moved to another
// household, package.xml and sfdx-project.json), kept out of force-app because only an org on NPSP's
// Household Account model wants them. The Apex, trigger and component sources themselves are written by
// hand (HAND_WRITTEN_SOURCES, PERSON_ACCOUNT_SOURCES). `npm run manifests:salesforce`
// writes them; `npm run manifests:salesforce -- --check` only reports (exit 1) when a file is out of date.
// Element order inside each file follows the Metadata API WSDL (fullName first, then alphabetical),
// because the Metadata API validates elements in sequence.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { XMLBuilder } from 'fast-xml-parser';
import {
  ENRICHED_AT_FIELD,
  HOUSEHOLD_ACCOUNT_OBJECT,
  PICKLIST_RESTRICTED,
  SALESFORCE_OBJECTS,
  SALESFORCE_OUTBOUND_MESSAGE_FIELDS,
  salesforceFields,
  salesforceHouseholdAccountFields,
  type SalesforceFieldDefinition,
  type SalesforceObject,
} from '../connectors/salesforce/fields.ts';
import { PERSON_ACCOUNT, personAccountFieldName } from '../connectors/salesforce/person-accounts.ts';
import { SALESFORCE_OAUTH_CALLBACK_ROUTE, SALESFORCE_RECORD_SECRET_HEADER, salesforceOutboundMessagePath } from '../connectors/salesforce/paths.ts';
import { SALESFORCE_API_VERSION } from '../connectors/salesforce/version.ts';

export const SALESFORCE_MANIFEST_DIR = path.resolve(import.meta.dirname, '../manifests/salesforce');

/** The operator replaces these before deploying (manifests/salesforce/README.md). */
export const PUBLIC_BASE_PLACEHOLDER = 'https://YOUR_PUBLIC_HOST';
/**
 * The installation's outbound secret, part of the endpoint URL: outbound messages carry no signature,
 * so the URL does. `enrichbridge salesforce outbound-url <installation>` prints the whole URL.
 */
export const OUTBOUND_SECRET_PLACEHOLDER = 'YOUR_OUTBOUND_SECRET';
/** The Salesforce user outbound messages are sent as (`integrationUser`, a username of the org). */
export const INTEGRATION_USER_PLACEHOLDER = 'YOUR_INTEGRATION_USERNAME';
/** Who Salesforce contacts about the External Client App. */
export const CONTACT_EMAIL_PLACEHOLDER = 'support@YOUR_PUBLIC_HOST';

export const METADATA_NAMESPACE = 'http://soap.sforce.com/2006/04/metadata';
export const SOURCE_DIR = 'force-app/main/default';
export const PACKAGE_XML = 'manifest/package.xml';
export const SFDX_PROJECT = 'sfdx-project.json';

export const PERMISSION_SET_NAME = 'Enrichbridge';
export const ECA_NAME = 'Enrichbridge';
/** The name Salesforce gives an app's OAuth settings when they are retrieved. */
export const ECA_OAUTH_SETTINGS_NAME = `${ECA_NAME}_oauth`;
/** ECA scope names: `Api` is the `api` scope, `RefreshToken` is `refresh_token offline_access`. */
export const ECA_OAUTH_SCOPES = ['Api', 'RefreshToken'] as const;
export const FLOW_NAMES: Record<SalesforceObject, string> = { Contact: 'Enrichbridge_Contact_Created', Lead: 'Enrichbridge_Lead_Created' };
/** Outbound message names, unique within their object; the package.xml member is `<Object>.<name>`. */
export const OUTBOUND_MESSAGE_NAMES: Record<SalesforceObject, string> = { Contact: 'Enrichbridge_Contact', Lead: 'Enrichbridge_Lead' };
/** The flow element that sends the outbound message. */
const SEND_ACTION = 'Send_To_Enrichbridge';

/** The record component: a Lightning Web Component on Contact and Lead record pages and its Apex controller. */
export const RECORD_COMPONENT = 'enrichbridgeRecord';
export const RECORD_CONTROLLER = 'EnrichbridgeRecordController';
/**
 * The Queueable the after-insert triggers on Contact and Lead hand new record ids to; it posts them to the
 * trigger route through the same Named Credential as the controller, so an org enters one secret.
 */
export const RECORD_SENDER = 'EnrichbridgeRecordSender';
export const APEX_CLASSES = [RECORD_CONTROLLER, `${RECORD_CONTROLLER}Test`, RECORD_SENDER, `${RECORD_SENDER}Test`] as const;
/** The after-insert triggers, one per object, as the record-triggered flows are. */
export const APEX_TRIGGERS: Record<SalesforceObject, string> = { Contact: 'EnrichbridgeContactCreated', Lead: 'EnrichbridgeLeadCreated' };
/**
 * The controller calls `callout:<this>/…`; the Named Credential's External Credential of the same name
 * holds the org's own secret (an authentication parameter of its principal, entered by the admin in Setup,
 * never in this project) and sends it as RECORD_SECRET_HEADER.
 */
export const RECORD_CREDENTIAL = 'Enrichbridge_Record';
/** The External Credential's named principal; the permission set grants it as `<credential>-<principal>`. */
export const RECORD_PRINCIPAL = 'Enrichbridge_Org';
/** The principal's authentication parameter the admin enters the org's secret in. */
export const RECORD_SECRET_PARAMETER = 'OrgSecret';
export const RECORD_SECRET_HEADER = SALESFORCE_RECORD_SECRET_HEADER;
/** Who may use the component: its controller and the credential's principal. */
export const RECORD_PERMISSION_SET = 'Enrichbridge_Record_User';
/**
 * Whose new records the triggers send: a Queueable runs as the user who saved the record, and a callout
 * through the Named Credential needs that user to hold the External Credential's principal.
 */
export const SENDER_PERMISSION_SET = 'Enrichbridge_Record_Sender';

export const fieldFile = (object: SalesforceObject, name: string): string => `${SOURCE_DIR}/objects/${object}/fields/${name}.field-meta.xml`;
export const PERMISSION_SET_FILE = `${SOURCE_DIR}/permissionsets/${PERMISSION_SET_NAME}.permissionset-meta.xml`;
/** LeadConvertSettings is a Settings type: member `LeadConvert`, one file in `settings/`. */
export const LEAD_CONVERT_FILE = `${SOURCE_DIR}/settings/LeadConvert.settings-meta.xml`;
export const flowFile = (object: SalesforceObject): string => `${SOURCE_DIR}/flows/${FLOW_NAMES[object]}.flow-meta.xml`;
export const workflowFile = (object: SalesforceObject): string => `${SOURCE_DIR}/workflows/${object}.workflow-meta.xml`;
export const ECA_FILE = `${SOURCE_DIR}/externalClientApps/${ECA_NAME}.eca-meta.xml`;
export const ECA_OAUTH_FILE = `${SOURCE_DIR}/extlClntAppOauthSettings/${ECA_OAUTH_SETTINGS_NAME}.ecaOauth-meta.xml`;

export const apexClassMetaFile = (name: string): string => `${SOURCE_DIR}/classes/${name}.cls-meta.xml`;
export const RECORD_COMPONENT_META_FILE = `${SOURCE_DIR}/lwc/${RECORD_COMPONENT}/${RECORD_COMPONENT}.js-meta.xml`;
export const EXTERNAL_CREDENTIAL_FILE = `${SOURCE_DIR}/externalCredentials/${RECORD_CREDENTIAL}.externalCredential-meta.xml`;
export const NAMED_CREDENTIAL_FILE = `${SOURCE_DIR}/namedCredentials/${RECORD_CREDENTIAL}.namedCredential-meta.xml`;
export const RECORD_PERMISSION_SET_FILE = `${SOURCE_DIR}/permissionsets/${RECORD_PERMISSION_SET}.permissionset-meta.xml`;
export const SENDER_PERMISSION_SET_FILE = `${SOURCE_DIR}/permissionsets/${SENDER_PERMISSION_SET}.permissionset-meta.xml`;
export const apexTriggerFile = (object: SalesforceObject): string => `${SOURCE_DIR}/triggers/${APEX_TRIGGERS[object]}.trigger`;
export const apexTriggerMetaFile = (object: SalesforceObject): string => `${apexTriggerFile(object)}-meta.xml`;
/** Written by hand, deployed with the generated files: the Apex classes and the component's template and script. */
export const RECORD_COMPONENT_SOURCES = [
  ...APEX_CLASSES.map((name) => `${SOURCE_DIR}/classes/${name}.cls`),
  `${SOURCE_DIR}/lwc/${RECORD_COMPONENT}/${RECORD_COMPONENT}.html`,
  `${SOURCE_DIR}/lwc/${RECORD_COMPONENT}/${RECORD_COMPONENT}.js`,
] as const;
/** Every source written by hand and deployed beside the generated files: the record component's, and the triggers. */
export const HAND_WRITTEN_SOURCES: readonly string[] = [...RECORD_COMPONENT_SOURCES, ...SALESFORCE_OBJECTS.map((object) => apexTriggerFile(object))];

/**
 * The optional person-Account trigger: its own sfdx project in person-accounts/, deployed on its own, after
 * force-app, and only to an org with Person Accounts. It cannot be in force-app: it names `IsPersonAccount`
 * and `WF_Enriched_At__pc`, which an org without Person Accounts lacks, so the whole deploy would fail there.
 */
export const PERSON_ACCOUNT_DIR = 'person-accounts';
/** The after-insert trigger on Account: person Accounts without WF_Enriched_At__pc go to RECORD_SENDER as `Account`. */
export const PERSON_ACCOUNT_TRIGGER = 'EnrichbridgePersonAccountCreated';
export const PERSON_ACCOUNT_TRIGGER_TEST = `${PERSON_ACCOUNT_TRIGGER}Test`;
/** The object the trigger fires on and names in its callout. */
export const PERSON_ACCOUNT_OBJECT = PERSON_ACCOUNT;
/** ENRICHED_AT_FIELD as the person Account shows the Contact field: `WF_Enriched_At__pc`. */
export const PERSON_ACCOUNT_ENRICHED_AT_FIELD = personAccountFieldName(ENRICHED_AT_FIELD);
export const PERSON_ACCOUNT_SFDX_PROJECT = `${PERSON_ACCOUNT_DIR}/${SFDX_PROJECT}`;
export const PERSON_ACCOUNT_TRIGGER_FILE = `${PERSON_ACCOUNT_DIR}/${SOURCE_DIR}/triggers/${PERSON_ACCOUNT_TRIGGER}.trigger`;
export const PERSON_ACCOUNT_TRIGGER_META_FILE = `${PERSON_ACCOUNT_TRIGGER_FILE}-meta.xml`;
export const PERSON_ACCOUNT_TEST_FILE = `${PERSON_ACCOUNT_DIR}/${SOURCE_DIR}/classes/${PERSON_ACCOUNT_TRIGGER_TEST}.cls`;
export const PERSON_ACCOUNT_TEST_META_FILE = `${PERSON_ACCOUNT_TEST_FILE}-meta.xml`;
/** Written by hand, deployed with the person-Account project's generated files. */
export const PERSON_ACCOUNT_SOURCES: readonly string[] = [PERSON_ACCOUNT_TEST_FILE, PERSON_ACCOUNT_TRIGGER_FILE];

/**
 * The optional NPSP households project: its own sfdx project in households/, deployed on its own, after
 * force-app, and only to an org on NPSP's Household Account model whose installation writes the household
 * section to the contact's household Account. It is not in force-app: elsewhere an Account is a company,
 * and neither 32 household fields on it nor re-sending a contact that changes Account makes sense there.
 */
export const HOUSEHOLD_DIR = 'households';
/** The object the household fields are on: the contact's household Account. */
export const HOUSEHOLD_OBJECT = HOUSEHOLD_ACCOUNT_OBJECT;
/** Read and edit on the household Account fields, for the integration user. */
export const HOUSEHOLD_PERMISSION_SET = 'Enrichbridge_Households';
/** The record-triggered flow that re-sends an enriched contact moved to another household. */
export const HOUSEHOLD_FLOW = 'Enrichbridge_Contact_Household_Changed';
/** The object the flow fires on and whose outbound message (force-app's) it sends. */
export const HOUSEHOLD_FLOW_OBJECT: SalesforceObject = 'Contact';
/** The Contact field that names its household: a change of it is a move to another household. */
export const HOUSEHOLD_LINK_FIELD = 'AccountId';
export const HOUSEHOLD_SFDX_PROJECT = `${HOUSEHOLD_DIR}/${SFDX_PROJECT}`;
export const HOUSEHOLD_PACKAGE_XML = `${HOUSEHOLD_DIR}/${PACKAGE_XML}`;
export const householdFieldFile = (name: string): string => `${HOUSEHOLD_DIR}/${SOURCE_DIR}/objects/${HOUSEHOLD_OBJECT}/fields/${name}.field-meta.xml`;
export const HOUSEHOLD_PERMISSION_SET_FILE = `${HOUSEHOLD_DIR}/${SOURCE_DIR}/permissionsets/${HOUSEHOLD_PERMISSION_SET}.permissionset-meta.xml`;
export const HOUSEHOLD_FLOW_FILE = `${HOUSEHOLD_DIR}/${SOURCE_DIR}/flows/${HOUSEHOLD_FLOW}.flow-meta.xml`;

/** The secret's header as the External Credential writes it: a formula over the principal's parameter. */
export const recordSecretFormula = (): string => `{!$Credential.${RECORD_CREDENTIAL}.${RECORD_SECRET_PARAMETER}}`;

export const outboundMessageEndpoint = (): string => `${PUBLIC_BASE_PLACEHOLDER}${salesforceOutboundMessagePath(OUTBOUND_SECRET_PLACEHOLDER)}`;
export const oauthCallbackUrl = (): string => `${PUBLIC_BASE_PLACEHOLDER}${SALESFORCE_OAUTH_CALLBACK_ROUTE}`;

type XmlValue = string | number | boolean | XmlElement | readonly XmlValue[];
interface XmlElement {
  readonly [element: string]: XmlValue;
}

const builder = new XMLBuilder({ format: true, indentBy: '    ', ignoreAttributes: false, attributeNamePrefix: '@_', suppressEmptyNode: true });

/** A metadata file: the XML declaration and `root` in the metadata namespace. */
function metadataXml(root: string, body: XmlElement): string {
  const xml: unknown = builder.build({ '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' }, [root]: { '@_xmlns': METADATA_NAMESPACE, ...body } });
  if (typeof xml !== 'string') throw new Error('the XML builder did not return text');
  return xml;
}

/** A custom field file; each type gets the elements a retrieve of that type shows, in WSDL order. */
export function renderField(field: SalesforceFieldDefinition): string {
  const common = { fullName: field.name };
  const text = { description: field.description, externalId: false, inlineHelpText: field.inlineHelpText, label: field.label };
  switch (field.type) {
    case 'Checkbox':
      return metadataXml('CustomField', { ...common, defaultValue: false, ...text, type: 'Checkbox' });
    case 'Number':
      return metadataXml('CustomField', {
        ...common,
        ...text,
        precision: field.precision ?? 18,
        required: false,
        scale: field.scale ?? 0,
        type: 'Number',
        unique: false,
      });
    case 'Text':
      return metadataXml('CustomField', { ...common, ...text, length: field.length ?? 255, required: false, type: 'Text', unique: false });
    case 'Picklist':
      return metadataXml('CustomField', {
        ...common,
        ...text,
        required: false,
        type: 'Picklist',
        valueSet: {
          restricted: PICKLIST_RESTRICTED,
          valueSetDefinition: {
            sorted: false,
            value: (field.picklistValues ?? []).map((option) => ({ fullName: option.value, default: false, label: option.label })),
          },
        },
      });
    case 'Date':
    case 'DateTime':
    case 'Url':
      return metadataXml('CustomField', { ...common, ...text, required: false, type: field.type });
  }
}

/**
 * The force-app object of a field of salesforceFields(): Contact or Lead. force-app holds no Account field;
 * the household Account fields are the households project's, so one reaching force-app is an error.
 */
export function forceAppObject(field: SalesforceFieldDefinition): SalesforceObject {
  const object = SALESFORCE_OBJECTS.find((candidate) => candidate === field.object);
  if (object === undefined) throw new Error(`${field.object}.${field.name}: force-app holds Contact and Lead fields only`);
  return object;
}

/** fieldPermissions granting read and edit on each field, sorted by `<Object>.<name>`. */
function readEditFieldPermissions(fields: readonly SalesforceFieldDefinition[]): XmlElement[] {
  return fields
    .map((field) => `${field.object}.${field.name}`)
    .sort()
    .map((field) => ({ editable: true, field, readable: true }));
}

/** Read and edit on every field of ours on both objects. */
export function renderPermissionSet(): string {
  return metadataXml('PermissionSet', {
    description:
      'Read and edit the Windfall enrichment fields (WF_*) on Contact and Lead. Assign it to the integration user enrichbridge connects as, and read access to whoever should see the fields.',
    fieldPermissions: readEditFieldPermissions(salesforceFields()),
    label: 'Enrichbridge',
  });
}

/**
 * Read and edit on the household fields on Account, as the main set grants them on Contact. No object
 * permission: the main set grants none either, and the integration user reads Account already.
 */
export function renderHouseholdPermissionSet(): string {
  return metadataXml('PermissionSet', {
    description:
      'Read and edit the Windfall household fields (WF_HH_*) on Account, which enrichbridge writes to an NPSP household Account. Assign it to the integration user enrichbridge connects as, and read access to whoever should see the fields.',
    fieldPermissions: readEditFieldPermissions(salesforceHouseholdAccountFields()),
    label: 'Enrichbridge households',
  });
}

/**
 * Lead → Contact mapping on conversion: every field of ours to the field of the same name, so a
 * converted lead keeps its enrichment (and WF_Enriched_At__c keeps the Contact flow from sending it
 * again). Only objectMapping is set: the owner-change and opportunity options stay the org's own.
 */
export function renderLeadConvertSettings(): string {
  const names = salesforceFields()
    .filter((field) => field.object === 'Lead')
    .map((field) => field.name);
  return metadataXml('LeadConvertSettings', {
    objectMapping: {
      inputObject: 'Lead',
      mappingFields: names.map((name) => ({ inputField: name, outputField: name })),
      outputObject: 'Contact',
    },
  });
}

/**
 * The flow element that sends the record to its object's outbound message. `CurrentTransaction`: a save
 * that rolls back sends nothing.
 */
function sendOutboundMessage(object: SalesforceObject): XmlElement {
  const action = `${object}.${OUTBOUND_MESSAGE_NAMES[object]}`;
  return {
    name: SEND_ACTION,
    label: 'Send to enrichbridge',
    locationX: 176,
    locationY: 323,
    actionName: action,
    actionType: 'outboundMessage',
    flowTransactionModel: 'CurrentTransaction',
    nameSegment: action,
  };
}

/** Flow Builder's own markers: the flow opens in Flow Builder, on the auto-layout canvas. */
const FLOW_BUILDER_METADATA: readonly XmlElement[] = [
  { name: 'BuilderType', value: { stringValue: 'LightningFlowBuilder' } },
  { name: 'CanvasMode', value: { stringValue: 'AUTO_LAYOUT_CANVAS' } },
];

/** The record-triggered flow: after a Contact (Lead) is created and not yet enriched, send its outbound message. */
export function renderFlow(object: SalesforceObject): string {
  return metadataXml('Flow', {
    actionCalls: sendOutboundMessage(object),
    apiVersion: SALESFORCE_API_VERSION,
    description: `Sends each new ${object} that has no ${ENRICHED_AT_FIELD} to enrichbridge (outbound message ${OUTBOUND_MESSAGE_NAMES[object]}), which writes the Windfall fields back.`,
    environments: 'Default',
    interviewLabel: `${FLOW_NAMES[object]} {!$Flow.CurrentDateTime}`,
    label: `Enrichbridge: ${object} created`,
    processMetadataValues: FLOW_BUILDER_METADATA,
    processType: 'AutoLaunchedFlow',
    start: {
      locationX: 50,
      locationY: 0,
      connector: { targetReference: SEND_ACTION },
      filterLogic: 'and',
      filters: { field: ENRICHED_AT_FIELD, operator: 'IsNull', value: { booleanValue: true } },
      object,
      recordTriggerType: 'Create',
      triggerType: 'RecordAfterSave',
    },
    status: 'Active',
  });
}

/**
 * The households flow: after an update of a Contact already enriched (WF_Enriched_At__c set) whose
 * AccountId changed, that is a contact moved to another household, send the Contact's outbound message
 * again, so enrichbridge writes the household section on the new household Account.
 *
 * "AccountId changed" is a start filter with the IsChanged operator (a FlowRecordFilterOperator of the
 * Metadata API, valid in a record-triggered flow's entry conditions on update), not a filterFormula with
 * ISCHANGED: the structured filters are the form the existing flows use and Flow Builder shows as
 * conditions, and one filter list holds both conditions under `and`. doesRequireRecordChangedToMeetCriteria
 * stays false: set, the flow would run only when the whole condition goes from unmet to met, so a contact
 * moved a second time (already enriched before the update) could be missed; IsChanged is the change test.
 */
export function renderHouseholdFlow(): string {
  const object = HOUSEHOLD_FLOW_OBJECT;
  return metadataXml('Flow', {
    actionCalls: sendOutboundMessage(object),
    apiVersion: SALESFORCE_API_VERSION,
    description: `Sends an enriched ${object} (${ENRICHED_AT_FIELD} set) whose ${HOUSEHOLD_LINK_FIELD} changed, a contact moved to another household, to enrichbridge again (outbound message ${OUTBOUND_MESSAGE_NAMES[object]}), which writes the household fields on its new household Account.`,
    environments: 'Default',
    interviewLabel: `${HOUSEHOLD_FLOW} {!$Flow.CurrentDateTime}`,
    label: `Enrichbridge: ${object} household changed`,
    processMetadataValues: FLOW_BUILDER_METADATA,
    processType: 'AutoLaunchedFlow',
    start: {
      locationX: 50,
      locationY: 0,
      connector: { targetReference: SEND_ACTION },
      doesRequireRecordChangedToMeetCriteria: false,
      filterLogic: 'and',
      filters: [
        { field: HOUSEHOLD_LINK_FIELD, operator: 'IsChanged', value: { booleanValue: true } },
        { field: ENRICHED_AT_FIELD, operator: 'IsNull', value: { booleanValue: false } },
      ],
      object,
      recordTriggerType: 'Update',
      triggerType: 'RecordAfterSave',
    },
    status: 'Active',
  });
}

/** The outbound message: the record Id and its identity fields, to the outbound-message route. */
export function renderWorkflow(object: SalesforceObject): string {
  return metadataXml('Workflow', {
    outboundMessages: {
      fullName: OUTBOUND_MESSAGE_NAMES[object],
      apiVersion: SALESFORCE_API_VERSION,
      description: `New ${object} records for enrichbridge to enrich with Windfall household and career data.`,
      endpointUrl: outboundMessageEndpoint(),
      fields: [...SALESFORCE_OUTBOUND_MESSAGE_FIELDS[object]].sort(),
      includeSessionId: false,
      integrationUser: INTEGRATION_USER_PLACEHOLDER,
      name: OUTBOUND_MESSAGE_NAMES[object],
      protected: false,
      useDeadLetterQueue: false,
    },
  });
}

/** The External Client App header: a local (not packaged) app in this org. */
export function renderEca(): string {
  return metadataXml('ExternalClientApplication', {
    contactEmail: CONTACT_EMAIL_PLACEHOLDER,
    description: 'enrichbridge: enriches new Contacts and Leads with Windfall household and career data.',
    distributionState: 'Local',
    isProtected: false,
    label: 'Enrichbridge',
  });
}

/**
 * The app's OAuth scopes. The callback URL, PKCE and the consumer key and secret are global OAuth
 * settings (ExtlClntAppGlobalOauthSettings), which must not be in source control: the admin sets
 * them in Setup (manifests/salesforce/README.md).
 */
export function renderEcaOauth(): string {
  return metadataXml('ExtlClntAppOauthSettings', {
    commaSeparatedOauthScopes: ECA_OAUTH_SCOPES.join(', '),
    externalClientApplication: ECA_NAME,
    label: 'Enrichbridge',
  });
}

/** An Apex class's meta file. */
export function renderApexClassMeta(): string {
  return metadataXml('ApexClass', { apiVersion: SALESFORCE_API_VERSION, status: 'Active' });
}

/** An Apex trigger's meta file. */
export function renderApexTriggerMeta(): string {
  return metadataXml('ApexTrigger', { apiVersion: SALESFORCE_API_VERSION, status: 'Active' });
}

/** The record component: exposed on Contact and Lead record pages in the Lightning App Builder. */
export function renderRecordComponentMeta(): string {
  return metadataXml('LightningComponentBundle', {
    apiVersion: SALESFORCE_API_VERSION,
    description: 'Windfall enrichment of this record: status, provenance of each field, Enrich now, Undo, Exclude and Include again.',
    isExposed: true,
    masterLabel: 'Windfall enrichment',
    targetConfigs: { targetConfig: { '@_targets': 'lightning__RecordPage', objects: { object: [...SALESFORCE_OBJECTS] } } },
    targets: { target: 'lightning__RecordPage' },
  });
}

/**
 * The External Credential (Custom protocol): one named principal, whose authentication parameter
 * RECORD_SECRET_PARAMETER the admin fills with the org's secret after deploying, and the header that sends
 * it. No value of the secret is here.
 */
export function renderExternalCredential(): string {
  return metadataXml('ExternalCredential', {
    authenticationProtocol: 'Custom',
    description: `The org's own enrichbridge secret, sent as ${RECORD_SECRET_HEADER} by the record component's calls and the new-record triggers' callouts. Enter it in the principal ${RECORD_PRINCIPAL} as the authentication parameter ${RECORD_SECRET_PARAMETER}.`,
    externalCredentialParameters: [
      { parameterGroup: RECORD_PRINCIPAL, parameterName: RECORD_PRINCIPAL, parameterType: 'NamedPrincipal', sequenceNumber: 1 },
      {
        parameterGroup: 'DefaultGroup',
        parameterName: RECORD_SECRET_HEADER,
        parameterType: 'AuthHeader',
        parameterValue: recordSecretFormula(),
        sequenceNumber: 1,
      },
    ],
    label: 'Enrichbridge record component',
  });
}

/** The Named Credential the controller calls: enrichbridge's public URL, authenticated by the External Credential. */
export function renderNamedCredential(): string {
  return metadataXml('NamedCredential', {
    allowMergeFieldsInBody: false,
    allowMergeFieldsInHeader: true,
    calloutStatus: 'Enabled',
    description: `enrichbridge's per-record API and trigger route, for the record component (${RECORD_CONTROLLER}) and the new-record triggers (${RECORD_SENDER}).`,
    generateAuthorizationHeader: false,
    label: 'Enrichbridge record component',
    namedCredentialParameters: [
      { parameterName: 'Url', parameterType: 'Url', parameterValue: PUBLIC_BASE_PLACEHOLDER },
      { externalCredential: RECORD_CREDENTIAL, parameterName: 'ExternalCredential', parameterType: 'Authentication' },
    ],
    namedCredentialType: 'SecuredEndpoint',
  });
}

/** Who may use the record component: its controller, the credential's principal, and reading the stored credential. */
export function renderRecordPermissionSet(): string {
  return metadataXml('PermissionSet', {
    classAccesses: { apexClass: RECORD_CONTROLLER, enabled: true },
    description:
      'Use the Windfall enrichment component on Contact and Lead record pages: its Apex controller and the Enrichbridge_Record credential it calls enrichbridge through. Assign it to everyone who uses the component.',
    externalCredentialPrincipalAccesses: { enabled: true, externalCredentialPrincipal: `${RECORD_CREDENTIAL}-${RECORD_PRINCIPAL}` },
    label: 'Enrichbridge record component',
    objectPermissions: {
      allowCreate: false,
      allowDelete: false,
      allowEdit: false,
      allowRead: true,
      modifyAllRecords: false,
      object: 'UserExternalCredential',
      viewAllRecords: false,
    },
  });
}

/**
 * Whose new Contacts and Leads the triggers send: the credential's principal and reading the stored
 * credential, nothing else (the trigger and its Queueable run in system mode and need no class access).
 */
export function renderSenderPermissionSet(): string {
  return metadataXml('PermissionSet', {
    description: `Lets the new-record triggers send this user's new Contacts and Leads to enrichbridge: the ${RECORD_CREDENTIAL} credential their callout goes through. Assign it to every user (integration users too) whose new records should be enriched.`,
    externalCredentialPrincipalAccesses: { enabled: true, externalCredentialPrincipal: `${RECORD_CREDENTIAL}-${RECORD_PRINCIPAL}` },
    label: 'Enrichbridge new-record sender',
    objectPermissions: {
      allowCreate: false,
      allowDelete: false,
      allowEdit: false,
      allowRead: true,
      modifyAllRecords: false,
      object: 'UserExternalCredential',
      viewAllRecords: false,
    },
  });
}

/** Members by metadata type: each list sorted, types in name order. */
function sortedMembers(members: ReadonlyMap<string, readonly string[]>): ReadonlyMap<string, readonly string[]> {
  return new Map([...members].sort(([a], [b]) => a.localeCompare(b)).map(([type, list]) => [type, [...list].sort()]));
}

/** package.xml's members by metadata type, each list sorted, types in name order. */
export function packageMembers(): ReadonlyMap<string, readonly string[]> {
  const members = new Map<string, string[]>([
    ['ApexClass', [...APEX_CLASSES]],
    ['ApexTrigger', SALESFORCE_OBJECTS.map((object) => APEX_TRIGGERS[object])],
    ['CustomField', salesforceFields().map((field) => `${field.object}.${field.name}`)],
    ['ExternalClientApplication', [ECA_NAME]],
    ['ExternalCredential', [RECORD_CREDENTIAL]],
    ['ExtlClntAppOauthSettings', [ECA_OAUTH_SETTINGS_NAME]],
    ['Flow', SALESFORCE_OBJECTS.map((object) => FLOW_NAMES[object])],
    ['LightningComponentBundle', [RECORD_COMPONENT]],
    ['NamedCredential', [RECORD_CREDENTIAL]],
    ['PermissionSet', [PERMISSION_SET_NAME, RECORD_PERMISSION_SET, SENDER_PERMISSION_SET]],
    ['Settings', ['LeadConvert']],
    // The object's Workflow as well as the outbound messages in it: `sf project deploy start --manifest`
    // refuses child members whose parent is not listed (what source-deploy-retrieve derives, checked in its test).
    ['Workflow', [...SALESFORCE_OBJECTS]],
    ['WorkflowOutboundMessage', SALESFORCE_OBJECTS.map((object) => `${object}.${OUTBOUND_MESSAGE_NAMES[object]}`)],
  ]);
  return sortedMembers(members);
}

/** The households project's package.xml members: its Account fields, its flow and its permission set. */
export function householdPackageMembers(): ReadonlyMap<string, readonly string[]> {
  return sortedMembers(
    new Map([
      ['CustomField', salesforceHouseholdAccountFields().map((field) => `${field.object}.${field.name}`)],
      ['Flow', [HOUSEHOLD_FLOW]],
      ['PermissionSet', [HOUSEHOLD_PERMISSION_SET]],
    ]),
  );
}

/** A package.xml of these members (force-app's by default). */
export function renderPackageXml(members: ReadonlyMap<string, readonly string[]> = packageMembers()): string {
  return metadataXml('Package', {
    types: [...members].map(([name, list]) => ({ members: [...list], name })),
    version: SALESFORCE_API_VERSION,
  });
}

/** A DX project of one package directory, force-app: the main one, or an optional project's (`name`). */
export function renderSfdxProject(name = 'enrichbridge'): string {
  const project = {
    packageDirectories: [{ path: 'force-app', default: true }],
    name,
    namespace: '',
    sfdcLoginUrl: 'https://login.salesforce.com',
    sourceApiVersion: SALESFORCE_API_VERSION,
  };
  return `${JSON.stringify(project, null, 2)}\n`;
}

/** Each generated file, relative to SALESFORCE_MANIFEST_DIR, with the content it should have. */
export function generatedManifests(): ReadonlyMap<string, string> {
  const files = new Map<string, string>([
    [SFDX_PROJECT, renderSfdxProject()],
    [PACKAGE_XML, renderPackageXml()],
  ]);
  for (const field of salesforceFields()) files.set(fieldFile(forceAppObject(field), field.name), renderField(field));
  files.set(PERMISSION_SET_FILE, renderPermissionSet());
  files.set(LEAD_CONVERT_FILE, renderLeadConvertSettings());
  for (const object of SALESFORCE_OBJECTS) {
    files.set(flowFile(object), renderFlow(object));
    files.set(workflowFile(object), renderWorkflow(object));
  }
  files.set(ECA_FILE, renderEca());
  files.set(ECA_OAUTH_FILE, renderEcaOauth());
  for (const name of APEX_CLASSES) files.set(apexClassMetaFile(name), renderApexClassMeta());
  for (const object of SALESFORCE_OBJECTS) files.set(apexTriggerMetaFile(object), renderApexTriggerMeta());
  files.set(RECORD_COMPONENT_META_FILE, renderRecordComponentMeta());
  files.set(EXTERNAL_CREDENTIAL_FILE, renderExternalCredential());
  files.set(NAMED_CREDENTIAL_FILE, renderNamedCredential());
  files.set(RECORD_PERMISSION_SET_FILE, renderRecordPermissionSet());
  files.set(SENDER_PERMISSION_SET_FILE, renderSenderPermissionSet());
  // Its own project, so `sf project deploy start` run inside person-accounts/ finds its package directory.
  files.set(PERSON_ACCOUNT_SFDX_PROJECT, renderSfdxProject('enrichbridge-person-accounts'));
  files.set(PERSON_ACCOUNT_TRIGGER_META_FILE, renderApexTriggerMeta());
  files.set(PERSON_ACCOUNT_TEST_META_FILE, renderApexClassMeta());
  // Its own project too, deployed from inside households/ after force-app (whose outbound message its flow sends).
  files.set(HOUSEHOLD_SFDX_PROJECT, renderSfdxProject('enrichbridge-households'));
  files.set(HOUSEHOLD_PACKAGE_XML, renderPackageXml(householdPackageMembers()));
  for (const field of salesforceHouseholdAccountFields()) files.set(householdFieldFile(field.name), renderField(field));
  files.set(HOUSEHOLD_PERMISSION_SET_FILE, renderHouseholdPermissionSet());
  files.set(HOUSEHOLD_FLOW_FILE, renderHouseholdFlow());
  return files;
}

/** Field files of ours (`WF_*`) no longer generated, e.g. after a contract field was removed; households/ too. */
export function staleFieldFiles(): string[] {
  const generated = generatedManifests();
  const stale: string[] = [];
  for (const dir of [...SALESFORCE_OBJECTS.map((object) => path.dirname(fieldFile(object, 'x'))), path.dirname(householdFieldFile('x'))]) {
    const absolute = path.join(SALESFORCE_MANIFEST_DIR, dir);
    if (!existsSync(absolute)) continue;
    for (const name of readdirSync(absolute)) {
      const file = `${dir}/${name}`;
      if (name.startsWith('WF_') && !generated.has(file)) stale.push(file);
    }
  }
  return stale;
}

function main(check: boolean): number {
  let outdated = 0;
  for (const [file, content] of generatedManifests()) {
    const target = path.join(SALESFORCE_MANIFEST_DIR, file);
    const current = existsSync(target) ? readFileSync(target, 'utf8') : null;
    if (current === content) continue;
    outdated += 1;
    if (check) process.stderr.write(`out of date: manifests/salesforce/${file}\n`);
    else {
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, content);
      process.stdout.write(`wrote manifests/salesforce/${file}\n`);
    }
  }
  for (const file of staleFieldFiles()) {
    outdated += 1;
    if (check) process.stderr.write(`no longer generated: manifests/salesforce/${file}\n`);
    else {
      rmSync(path.join(SALESFORCE_MANIFEST_DIR, file));
      process.stdout.write(`removed manifests/salesforce/${file}\n`);
    }
  }
  if (outdated === 0) process.stdout.write('manifests/salesforce: up to date\n');
  return check && outdated > 0 ? 1 : 0;
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  process.exitCode = main(process.argv.includes('--check'));
}
