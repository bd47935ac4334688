// Salesforce Outbound Messages (SOAP 1.1): the envelope read with a real XML parser into a typed,
// zod-checked message (its org and record ids checked by the rules of ids.ts), the exact
// acknowledgement Salesforce waits for, and the fault we answer otherwise.
//
// Outbound messages carry no signature (docs/reference/crm-platforms.md, section 7), so this
// parser faces whatever anyone posts. It never throws anything but OutboundMessageError: the size is
// capped before decoding; DOCTYPE and every other markup declaration are refused before parsing;
// fast-xml-parser's own entity handling is off, and the five predefined entities and character
// references are decoded here in one linear pass, so nothing can expand.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { z } from 'zod';
import { OrganizationIdSchema, SALESFORCE_ID_PATTERN, SalesforceIdSchema, recordIdMatchesObject, toSalesforceId18 } from './ids.ts';

export const SOAP_ENVELOPE_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const OUTBOUND_NS = 'http://soap.sforce.com/2005/09/outbound';
export const SOBJECT_NS = 'urn:sobject.enterprise.soap.sforce.com';
export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';

/** Salesforce puts at most 100 notifications in one message (WSDL: `maxOccurs="100"`). */
export const MAX_NOTIFICATIONS_PER_MESSAGE = 100;

/**
 * The largest envelope we read: near what a 100-notification message needs. 100 notifications of the
 * fields our flows send come to about 40 KB (test/fixtures/salesforce/outbound-contact-100.xml: 38 KB),
 * and stay under 350 KB with every field at its maximum length in a 3-byte script; 384 KiB takes that
 * worst case. Nothing this large is parsed before the org and the URL's secret check out (the route
 * reads the org id with scanOrganizationId first). A real 100-notification message parses in under 10 ms.
 */
export const OUTBOUND_MESSAGE_MAX_BYTES = 384 * 1024;

/** How far into the body the organization id is looked for: it comes before the first notification. */
const ORGANIZATION_ID_SCAN_BYTES = 4096;
const ORGANIZATION_ID_ELEMENT = new RegExp(`<(?:[A-Za-z_][\\w.-]*:)?OrganizationId>\\s*(${SALESFORCE_ID_PATTERN})\\s*</`);

/**
 * The organization id an envelope names, read from its first 4 KiB with one regular expression and no
 * XML parse: cheap enough to run before anything is known about the sender, so an unknown org or a
 * wrong secret is refused without parsing. The full parse later must agree with it.
 */
export function scanOrganizationId(body: Buffer): string | null {
  const head = body.subarray(0, ORGANIZATION_ID_SCAN_BYTES).toString('latin1');
  return ORGANIZATION_ID_ELEMENT.exec(head)?.[1] ?? null;
}

/** EnterpriseUrl and PartnerUrl, which follow the org id in the envelope: an https URL on the org's own host. */
const INSTANCE_URL_ELEMENT = /<(?:[A-Za-z_][\w.-]*:)?(?:EnterpriseUrl|PartnerUrl)>\s*(https:\/\/[^\s<]{1,2048})\s*<\//g;
const InstanceHostSchema = z
  .string()
  .max(2048)
  .transform((value, context) => {
    const url = URL.canParse(value) ? new URL(value) : null;
    if (url === null || url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.hostname === '') {
      context.addIssue({ code: 'custom', message: 'not an https URL of a host' });
      return z.NEVER;
    }
    return url.hostname.toLowerCase();
  });

/**
 * The org's host an envelope names in its EnterpriseUrl and PartnerUrl (`acme--uat.sandbox.my.salesforce.com`),
 * read from the same first 4 KiB as the org id, with one regular expression and no XML parse; null when
 * neither is there, one is not an https URL, or the two name different hosts. Only a hint for the operator
 * (which installation a refreshed sandbox's new org id belongs to): nothing is accepted on its word.
 */
export function scanInstanceHost(body: Buffer): string | null {
  const head = body.subarray(0, ORGANIZATION_ID_SCAN_BYTES).toString('latin1');
  let host: string | null = null;
  for (const match of head.matchAll(INSTANCE_URL_ELEMENT)) {
    const parsed = InstanceHostSchema.safeParse(match[1]);
    if (!parsed.success) return null;
    if (host !== null && host !== parsed.data) return null;
    host = parsed.data;
  }
  return host;
}

// ---------------------------------------------------------------------------------------------------
// The message

// API names of objects and fields: a letter, then letters, digits and underscores (`IO__Order__c`).
const API_NAME = /^[A-Za-z][A-Za-z0-9_]{0,79}$/;
const ApiNameSchema = z.string().regex(API_NAME, 'not a Salesforce API name');
const HttpsUrlSchema = z
  .string()
  .max(2048)
  .refine((value) => URL.canParse(value) && new URL(value).protocol === 'https:', 'not an https URL');

export const OutboundNotificationSchema = z
  .strictObject({
    /** The notification id: Salesforce sends it again on every retry, so it is the dedupe key. */
    id: SalesforceIdSchema,
    /** From the sObject's `xsi:type` (`sf:Contact` → `Contact`). */
    object: ApiNameSchema,
    /** The record's `Id` field, canonical 18 characters. */
    recordId: SalesforceIdSchema,
    /** Every field as sent (including `Id`), `xsi:nil` as null. */
    fields: z.record(ApiNameSchema, z.string().nullable()),
  })
  .refine((n) => recordIdMatchesObject(n.object, n.recordId), {
    message: 'the record id does not carry the key prefix of its object',
    path: ['recordId'],
    params: { salesforceId: true },
  });

export const OutboundMessageSchema = z.strictObject({
  organizationId: OrganizationIdSchema,
  /** The outbound message action (04k…). */
  actionId: SalesforceIdSchema,
  /** Whether "Send Session ID" is on. The session id itself is never kept. */
  sessionIdPresent: z.boolean(),
  enterpriseUrl: HttpsUrlSchema,
  partnerUrl: HttpsUrlSchema,
  notifications: z.array(OutboundNotificationSchema).min(1).max(MAX_NOTIFICATIONS_PER_MESSAGE),
});

export type OutboundNotification = z.output<typeof OutboundNotificationSchema>;
export type OutboundMessage = z.output<typeof OutboundMessageSchema>;

export type OutboundMessageErrorCode =
  /** Larger than OUTBOUND_MESSAGE_MAX_BYTES. */
  | 'too_large'
  /** Not UTF-8, or not well-formed XML: truncated, unbalanced, bad entity, control characters. */
  | 'not_xml'
  /** A DOCTYPE, ENTITY or other markup declaration: never part of an outbound message. */
  | 'doctype_forbidden'
  /** Well-formed XML, but not the outbound message envelope (wrong namespace, missing element, …). */
  | 'not_outbound_message'
  | 'too_many_notifications'
  /** An organization, action, notification or record id that is not a valid Salesforce id. */
  | 'invalid_id';

/** Everything parseOutboundMessage refuses, and nothing else, is thrown as this. Answer with soapFault. */
export class OutboundMessageError extends Error {
  override readonly name = 'OutboundMessageError';
  constructor(
    readonly code: OutboundMessageErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const refuse = (code: OutboundMessageErrorCode, message: string): never => {
  throw new OutboundMessageError(code, message);
};

/** A short excerpt for error messages: they end up in a SOAP fault and in logs. */
const excerpt = (text: string): string => (text.length > 120 ? `${text.slice(0, 117)}...` : text);

// ---------------------------------------------------------------------------------------------------
// Text and XML

const UTF8 = new TextDecoder('utf-8', { fatal: true });
// Characters XML 1.0 does not allow anywhere (and lone surrogates, which no UTF-8 decodes to).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// `<!` starts a comment, a CDATA section or a markup declaration; only the first two are accepted.
const MARKUP_DECLARATION = /<!(?!--|\[CDATA\[)/;
const XML_DECLARATION_ENCODING = /^<\?xml[^>]*?\sencoding\s*=\s*["']([^"']*)["']/;

function decodeText(raw: unknown): string {
  let text: string;
  if (typeof raw === 'string') {
    // A UTF-8 encoding is never shorter than the string's length, so the cheap test comes first.
    if (raw.length > OUTBOUND_MESSAGE_MAX_BYTES || Buffer.byteLength(raw, 'utf8') > OUTBOUND_MESSAGE_MAX_BYTES)
      refuse('too_large', `The envelope is larger than ${OUTBOUND_MESSAGE_MAX_BYTES} bytes.`);
    text = raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
  } else if (raw instanceof Uint8Array) {
    if (raw.byteLength > OUTBOUND_MESSAGE_MAX_BYTES) refuse('too_large', `The envelope is larger than ${OUTBOUND_MESSAGE_MAX_BYTES} bytes.`);
    try {
      text = UTF8.decode(raw); // drops a byte order mark
    } catch {
      return refuse('not_xml', 'The envelope is not UTF-8 text.');
    }
  } else {
    return refuse('not_xml', 'The envelope is not text.');
  }
  if (NOT_XML_CHAR.test(text)) refuse('not_xml', 'The envelope contains characters XML does not allow.');
  const encoding = XML_DECLARATION_ENCODING.exec(text)?.[1];
  if (encoding !== undefined && !/^utf-?8$/i.test(encoding)) refuse('not_xml', `Unsupported encoding ${excerpt(encoding)}: Salesforce sends UTF-8.`);
  if (MARKUP_DECLARATION.test(text)) refuse('doctype_forbidden', 'DOCTYPE and entity declarations are not accepted.');
  return text;
}

// Character references and the five predefined entities; any other `&` is an error.
const REFERENCE = /&(?:#x([0-9A-Fa-f]{1,6});|#([0-9]{1,7});|(amp|lt|gt|quot|apos);)|&/g;
const PREDEFINED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

const isXmlChar = (cp: number): boolean =>
  cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);

/** Decodes entity and character references in one pass: the output is never longer than the input. */
function decodeReferences(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(REFERENCE, (match: string, hex: string | undefined, dec: string | undefined, name: string | undefined) => {
    if (name !== undefined) return PREDEFINED[name] ?? match;
    const digits = hex ?? dec;
    if (digits === undefined) return refuse('not_xml', 'An "&" that starts no entity or character reference.');
    const cp = parseInt(digits, hex !== undefined ? 16 : 10);
    if (!isXmlChar(cp)) refuse('not_xml', `A character reference to a character XML does not allow: ${excerpt(match)}.`);
    return String.fromCodePoint(cp);
  });
}

// One parser for every call: preserveOrder keeps text, CDATA and elements in order; names are kept
// qualified (removeNSPrefix would drop the xmlns declarations that say what a prefix means); values
// stay strings (no number or boolean guessing); entities are ours to decode.
const PARSER = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  cdataPropName: '#cdata',
  commentPropName: false,
  // Envelope > Body > notifications > Notification > sObject > field is 6 deep.
  maxNestedTags: 16,
});

interface XmlElement {
  readonly name: string;
  readonly attributes: ReadonlyMap<string, string>;
  readonly children: readonly XmlNode[];
}
type XmlNode = XmlElement | { readonly text: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** fast-xml-parser's ordered output (unknown to the type system) as our nodes, references decoded. */
function toNodes(value: unknown): XmlNode[] {
  if (!Array.isArray(value)) return refuse('not_xml', 'The XML parser returned an unexpected shape.');
  const nodes: XmlNode[] = [];
  for (const item of value) {
    if (!isRecord(item)) return refuse('not_xml', 'The XML parser returned an unexpected shape.');
    const text = item['#text'];
    if (typeof text === 'string') {
      nodes.push({ text: decodeReferences(text) });
      continue;
    }
    const cdata = item['#cdata'];
    if (cdata !== undefined) {
      // CDATA is literal: its text is not decoded.
      if (!Array.isArray(cdata)) return refuse('not_xml', 'The XML parser returned an unexpected shape.');
      for (const part of cdata) {
        const literal = isRecord(part) ? part['#text'] : undefined;
        if (typeof literal !== 'string') return refuse('not_xml', 'The XML parser returned an unexpected shape.');
        nodes.push({ text: literal });
      }
      continue;
    }
    const names = Object.keys(item).filter((key) => key !== ':@');
    const name = names[0];
    if (names.length !== 1 || name === undefined) return refuse('not_xml', 'The XML parser returned an unexpected shape.');
    const attributes = new Map<string, string>();
    const rawAttributes = item[':@'];
    if (isRecord(rawAttributes)) {
      for (const [key, attr] of Object.entries(rawAttributes)) {
        if (typeof attr !== 'string') return refuse('not_xml', `Attribute ${excerpt(key)} has no value.`);
        attributes.set(key, decodeReferences(attr));
      }
    }
    nodes.push({ name, attributes, children: toNodes(item[name]) });
  }
  return nodes;
}

/** An element with its namespace resolved, and the prefixes in scope for its children and values. */
interface Resolved {
  readonly ns: string | null;
  readonly local: string;
  readonly element: XmlElement;
  readonly scope: ReadonlyMap<string, string>;
}

function resolve(element: XmlElement, parentScope: ReadonlyMap<string, string>): Resolved {
  let scope = parentScope;
  const declarations = [...element.attributes].filter(([key]) => key === 'xmlns' || key.startsWith('xmlns:'));
  if (declarations.length > 0) {
    const own = new Map(parentScope);
    for (const [key, value] of declarations) {
      const prefix = key === 'xmlns' ? '' : key.slice(6);
      if (prefix !== '' && value === '') refuse('not_xml', `Namespace prefix ${excerpt(prefix)} is bound to nothing.`);
      own.set(prefix, value);
    }
    scope = own;
  }
  const [ns, local] = qualify(element.name, scope, true);
  return { ns, local, element, scope };
}

/** Splits `prefix:local` and finds the prefix's namespace. Unprefixed attributes are in no namespace. */
function qualify(qname: string, scope: ReadonlyMap<string, string>, useDefault: boolean): [string | null, string] {
  const colon = qname.indexOf(':');
  if (colon < 0) return [useDefault ? scope.get('') || null : null, qname];
  const prefix = qname.slice(0, colon);
  const local = qname.slice(colon + 1);
  const ns = scope.get(prefix);
  if (ns === undefined || local === '' || local.includes(':')) return refuse('not_xml', `Undeclared or malformed name ${excerpt(qname)}.`);
  return [ns, local];
}

function attribute(el: Resolved, ns: string, local: string): string | undefined {
  for (const [key, value] of el.element.attributes) {
    if (key === 'xmlns' || key.startsWith('xmlns:') || !key.includes(':')) continue;
    const [attrNs, attrLocal] = qualify(key, el.scope, false);
    if (attrNs === ns && attrLocal === local) return value;
  }
  return undefined;
}

/** The child elements; text other than whitespace between them is refused. */
function childElements(el: Resolved): Resolved[] {
  const children: Resolved[] = [];
  for (const node of el.element.children) {
    if ('text' in node) {
      if (node.text.trim() !== '') refuse('not_outbound_message', `Unexpected text in <${excerpt(el.element.name)}>.`);
    } else {
      children.push(resolve(node, el.scope));
    }
  }
  return children;
}

const isNil = (el: Resolved): boolean => {
  const nil = attribute(el, XSI_NS, 'nil')?.trim();
  return nil === 'true' || nil === '1';
};

/** A simple value: its text as sent, or null for `xsi:nil="true"`. Child elements are refused. */
function simpleValue(el: Resolved): string | null {
  let text = '';
  for (const node of el.element.children) {
    if (!('text' in node)) return refuse('not_outbound_message', `<${excerpt(el.element.name)}> holds elements where a value belongs.`);
    text += node.text;
  }
  if (isNil(el)) {
    if (text.trim() !== '') refuse('not_outbound_message', `<${excerpt(el.element.name)}> is nil and has a value.`);
    return null;
  }
  return text;
}

/** The one child element in `ns` named `local`; absent or repeated is refused. */
function only(children: readonly Resolved[], ns: string, local: string): Resolved {
  const found = children.filter((c) => c.ns === ns && c.local === local);
  const first = found[0];
  if (found.length !== 1 || first === undefined) return refuse('not_outbound_message', `Expected exactly one <${local}>, found ${found.length}.`);
  return first;
}

const requiredValue = (el: Resolved): string => {
  const value = simpleValue(el);
  return value === null ? refuse('not_outbound_message', `<${el.local}> may not be nil.`) : value.trim();
};

// ---------------------------------------------------------------------------------------------------
// The envelope

/** The message as read, before its values are checked by OutboundMessageSchema. */
function readEnvelope(text: string): unknown {
  let parsed: unknown;
  // The validator and the parser both let text after the root element pass unnoticed.
  if (!text.trimEnd().endsWith('>')) return refuse('not_xml', 'Text after the root element, or a truncated document.');
  const valid = XMLValidator.validate(text);
  if (valid !== true) return refuse('not_xml', `Not well-formed XML (line ${valid.err.line}): ${excerpt(valid.err.msg)}`);
  try {
    parsed = PARSER.parse(text);
  } catch (error) {
    return refuse('not_xml', `Not well-formed XML: ${excerpt(error instanceof Error ? error.message : 'parser error')}`);
  }
  const top = toNodes(parsed);
  const roots = top.filter((node): node is XmlElement => !('text' in node));
  const root = roots[0];
  if (roots.length !== 1 || root === undefined || top.some((node) => 'text' in node && node.text.trim() !== '')) {
    return refuse('not_xml', 'The document must have exactly one root element.');
  }

  const envelope = resolve(root, new Map());
  if (envelope.ns !== SOAP_ENVELOPE_NS || envelope.local !== 'Envelope') refuse('not_outbound_message', 'The root is not a SOAP 1.1 Envelope.');
  const envelopeChildren = childElements(envelope);
  if (envelopeChildren.some((c) => c.ns !== SOAP_ENVELOPE_NS || (c.local !== 'Header' && c.local !== 'Body'))) {
    refuse('not_outbound_message', 'The Envelope holds something other than a Header and a Body.');
  }
  const bodyChildren = childElements(only(envelopeChildren, SOAP_ENVELOPE_NS, 'Body'));
  const notifications = bodyChildren[0];
  if (bodyChildren.length !== 1 || notifications === undefined || notifications.ns !== OUTBOUND_NS || notifications.local !== 'notifications') {
    return refuse('not_outbound_message', `The Body must hold one <notifications> in ${OUTBOUND_NS}.`);
  }

  // Elements we do not know are skipped, not refused: a new element from Salesforce must not make
  // every message fail (a refused message is retried for 24 hours, then dropped).
  const fields = childElements(notifications);
  const session = simpleValue(only(fields, OUTBOUND_NS, 'SessionId'));
  const notificationElements = fields.filter((c) => c.ns === OUTBOUND_NS && c.local === 'Notification');
  if (notificationElements.length > MAX_NOTIFICATIONS_PER_MESSAGE) {
    refuse('too_many_notifications', `${notificationElements.length} notifications: at most ${MAX_NOTIFICATIONS_PER_MESSAGE} are allowed.`);
  }
  return {
    organizationId: requiredValue(only(fields, OUTBOUND_NS, 'OrganizationId')),
    actionId: requiredValue(only(fields, OUTBOUND_NS, 'ActionId')),
    sessionIdPresent: session !== null && session.trim() !== '',
    enterpriseUrl: requiredValue(only(fields, OUTBOUND_NS, 'EnterpriseUrl')),
    partnerUrl: requiredValue(only(fields, OUTBOUND_NS, 'PartnerUrl')),
    notifications: notificationElements.map(readNotification),
  };
}

function readNotification(notification: Resolved): unknown {
  const children = childElements(notification);
  const sObject = only(children, OUTBOUND_NS, 'sObject');
  const type = attribute(sObject, XSI_NS, 'type');
  if (type === undefined) return refuse('not_outbound_message', 'An sObject without xsi:type.');
  const [typeNs, object] = qualify(type.trim(), sObject.scope, true);
  if (typeNs !== SOBJECT_NS) refuse('not_outbound_message', `The sObject type ${excerpt(type)} is not in ${SOBJECT_NS}.`);

  const fields = new Map<string, string | null>();
  for (const field of childElements(sObject)) {
    if (field.ns !== SOBJECT_NS) refuse('not_outbound_message', `The field <${excerpt(field.element.name)}> is not in ${SOBJECT_NS}.`);
    // Checked here as well as by the schema: zod's record drops a `__proto__` key instead of refusing it.
    if (!API_NAME.test(field.local)) refuse('not_outbound_message', `The field name ${excerpt(field.local)} is not a Salesforce API name.`);
    if (fields.has(field.local)) refuse('not_outbound_message', `The field ${excerpt(field.local)} appears twice.`);
    fields.set(field.local, simpleValue(field));
  }
  const recordId = fields.get('Id');
  if (typeof recordId !== 'string') return refuse('not_outbound_message', 'An sObject without its Id.');
  return { id: requiredValue(only(children, OUTBOUND_NS, 'Id')), object, recordId: recordId.trim(), fields: Object.fromEntries(fields) };
}

function checked(draft: unknown): OutboundMessage {
  const result = OutboundMessageSchema.safeParse(draft);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue === undefined ? '' : issue.path.map(String).join('.');
  const isIdIssue = result.error.issues.some((i) => i.code === 'custom' && i.params?.['salesforceId'] === true);
  return refuse(isIdIssue ? 'invalid_id' : 'not_outbound_message', `Invalid outbound message: ${where} ${issue?.message ?? ''}`.trim());
}

/**
 * Reads an Outbound Message exactly as received (the raw request body). The organization, action,
 * notification and record ids come back in their canonical 18-character form. Whether the org is one
 * of ours is the caller's question. Throws OutboundMessageError, and only that, for anything else.
 */
export function parseOutboundMessage(raw: Buffer | Uint8Array | string): OutboundMessage {
  try {
    return checked(readEnvelope(decodeText(raw)));
  } catch (error) {
    if (error instanceof OutboundMessageError) throw error;
    // A parser bug or exhausted stack on input nobody anticipated: still the caller's typed error.
    throw new OutboundMessageError('not_xml', 'The envelope could not be read.');
  }
}

/** The queue's dedupe key for one notification: Salesforce redelivers the same notification id. */
export function outboundMessageDedupeKey(orgId: string, notificationId: string): string {
  const org = toSalesforceId18(orgId);
  const notification = toSalesforceId18(notificationId);
  if (org === null || notification === null) return refuse('invalid_id', 'A dedupe key needs valid organization and notification ids.');
  return `salesforce:outbound:${org}:${notification}`;
}

// ---------------------------------------------------------------------------------------------------
// Answers

/** The acknowledgement Salesforce waits for (docs/reference/crm-platforms.md, section 7), byte for byte, with HTTP 200. */
export const OUTBOUND_ACK_XML =
  '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>\n' +
  '<notificationsResponse xmlns="http://soap.sforce.com/2005/09/outbound"><Ack>true</Ack></notificationsResponse>\n' +
  '</soapenv:Body></soapenv:Envelope>';

/** Content type of the ack and of faults: anything but XML (plain 200, JSON) makes Salesforce retry. */
export const OUTBOUND_CONTENT_TYPE = 'text/xml; charset=utf-8';

/** SOAP 1.1 sends faults with HTTP 500; Salesforce treats it as not delivered and retries. */
export const SOAP_FAULT_HTTP_STATUS = 500;

/** Text for an XML element: `& < > " '` escaped, characters XML cannot carry replaced by U+FFFD. */
export function escapeXml(text: string): string {
  return text
    .replace(new RegExp(NOT_XML_CHAR.source, 'g'), '\uFFFD')
    .replace(/[&<>"']/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[c] ?? 'amp'};`);
}

/**
 * A SOAP 1.1 Fault envelope. `Client` (the default) says the message itself is wrong, `Server` that
 * we failed to take it (e.g. the queue is down) and a retry may succeed.
 */
export function soapFault(faultString: string, faultCode: 'Client' | 'Server' = 'Client'): string {
  return (
    `<soapenv:Envelope xmlns:soapenv="${SOAP_ENVELOPE_NS}"><soapenv:Body><soapenv:Fault>` +
    `<faultcode>soapenv:${faultCode}</faultcode><faultstring>${escapeXml(faultString)}</faultstring>` +
    '</soapenv:Fault></soapenv:Body></soapenv:Envelope>'
  );
}
