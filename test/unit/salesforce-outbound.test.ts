// Salesforce Outbound Messages: every fixture envelope, the 100-notification limit, SessionId nil or
// present, entities decoded but DOCTYPE refused, malformed and random input refused with
// OutboundMessageError only, the exact ack, the escaped fault, and the 15 → 18 id rules.
import { readFileSync } from 'node:fs';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import {
  MAX_NOTIFICATIONS_PER_MESSAGE,
  OUTBOUND_ACK_XML,
  OUTBOUND_CONTENT_TYPE,
  OUTBOUND_MESSAGE_MAX_BYTES,
  OutboundMessageError,
  type OutboundMessageErrorCode,
  escapeXml,
  outboundMessageDedupeKey,
  parseOutboundMessage,
  soapFault,
} from '../../connectors/salesforce/outbound-xml.ts';
import { sameSalesforceId, toSalesforceId18 } from '../../connectors/salesforce/ids.ts';

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/salesforce/${name}`, import.meta.url));
const text = (name: string): string => fixture(name).toString('utf8');

const OUR_ORG = '00D8a000001FkQzEAK';
const OUR_ORG_15 = '00D8a000001FkQz';
const ENTERPRISE_URL = `https://enrichbridge-demo.my.salesforce.com/services/Soap/c/62.0/${OUR_ORG_15}`;
const PARTNER_URL = `https://enrichbridge-demo.my.salesforce.com/services/Soap/u/62.0/${OUR_ORG_15}`;

/** The code parseOutboundMessage refused `raw` with; fails the test on success or any other throwable. */
function refusal(raw: Buffer | string): OutboundMessageErrorCode {
  try {
    parseOutboundMessage(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundMessageError);
    if (error instanceof OutboundMessageError) return error.code;
  }
  throw new Error('expected parseOutboundMessage to refuse the input');
}

describe('every fixture parses to the expected values', () => {
  it('one Contact notification (nil SessionId), a Buffer exactly as received', () => {
    expect(parseOutboundMessage(fixture('outbound-contact.xml'))).toEqual({
      organizationId: OUR_ORG,
      actionId: '04k8a000000PNcLAAW',
      sessionIdPresent: false,
      enterpriseUrl: ENTERPRISE_URL,
      partnerUrl: PARTNER_URL,
      notifications: [
        {
          id: '04l8a00000Bq1aZAAR',
          object: 'Contact',
          recordId: '0038a00000Rk4TzAAJ',
          fields: {
            Id: '0038a00000Rk4TzAAJ',
            Email: 'maria.gonzalez@example.com',
            FirstName: 'Maria',
            LastName: 'Gonzalez',
            MailingCity: 'Austin',
            MailingPostalCode: '78701',
            MailingState: 'TX',
            MailingStreet: '500 Congress Ave\nSuite 210',
            MobilePhone: '(512) 555-0143',
            Phone: '+1 512 555 0100',
          },
        },
      ],
    });
  });

  it('one Lead notification', () => {
    const message = parseOutboundMessage(text('outbound-lead.xml'));
    expect(message.actionId).toBe('04k8a000000PNcMAAW');
    expect(message.notifications).toEqual([
      {
        id: '04l8a00000Bq1bAAAR',
        object: 'Lead',
        recordId: '00Q8a00000Jd5WmEAJ',
        fields: {
          Id: '00Q8a00000Jd5WmEAJ',
          City: 'Portland',
          Company: 'Evergreen Analytics',
          Email: 'j.okafor@example.org',
          FirstName: 'James',
          LastName: 'Okafor',
          MobilePhone: '503-555-0178',
          Phone: '503-555-0111',
          PostalCode: '97205',
          State: 'OR',
          Street: '1120 SW 5th Ave',
        },
      },
    ]);
  });

  it("an unknown org parses like any other: whether the org is ours is the route's question", () => {
    const message = parseOutboundMessage(fixture('outbound-unknown-org.xml'));
    expect(message.organizationId).toBe('00D3t000004WbXyEAK');
    expect(sameSalesforceId(message.organizationId, OUR_ORG)).toBe(false);
    expect(message.notifications.map((n) => n.recordId)).toEqual(['0033t00000Lm8NpAAJ']);
  });

  it('values stay strings as sent: leading zeros, signs and surrounding spaces are not "parsed"', () => {
    const raw = text('outbound-contact.xml')
      .replace('<sf:MailingPostalCode>78701<', '<sf:MailingPostalCode>00501<')
      .replace('<sf:MailingState>TX<', '<sf:MailingState>  TX <')
      .replace('<sf:Phone>+1 512 555 0100<', '<sf:Phone>1e3<');
    const { fields } = parseOutboundMessage(raw).notifications[0] ?? { fields: {} };
    expect(fields).toMatchObject({ MailingPostalCode: '00501', MailingState: '  TX ', Phone: '1e3' });
  });

  it('a field sent as xsi:nil is null, an empty one is the empty string', () => {
    const raw = text('outbound-contact.xml')
      .replace('<sf:MobilePhone>(512) 555-0143</sf:MobilePhone>', '<sf:MobilePhone xsi:nil="true"/>')
      .replace('<sf:Phone>+1 512 555 0100</sf:Phone>', '<sf:Phone></sf:Phone><sf:Title/>');
    const { fields } = parseOutboundMessage(raw).notifications[0] ?? { fields: {} };
    expect(fields).toMatchObject({ MobilePhone: null, Phone: '', Title: '' });
  });

  it('namespaces are resolved, not matched by prefix: other prefixes for the same namespaces read the same', () => {
    const raw = text('outbound-contact.xml')
      .replaceAll('soapenv:', 'S:')
      .replace('xmlns:soapenv=', 'xmlns:S=')
      .replaceAll('xsi:', 'i:')
      .replace('xmlns:xsi=', 'xmlns:i=')
      .replaceAll('sf:', 'o:')
      .replace('xmlns:sf=', 'xmlns:o=');
    expect(raw).not.toContain('soapenv:');
    expect(parseOutboundMessage(raw)).toEqual(parseOutboundMessage(fixture('outbound-contact.xml')));
  });

  it('a prefix bound to the wrong namespace is refused', () => {
    const wrongEnvelope = text('outbound-contact.xml').replace('http://schemas.xmlsoap.org/soap/envelope/', 'http://www.w3.org/2003/05/soap-envelope');
    expect(refusal(wrongEnvelope)).toBe('not_outbound_message');
    const wrongOutbound = text('outbound-contact.xml').replace('http://soap.sforce.com/2005/09/outbound', 'http://soap.sforce.com/2006/04/metadata');
    expect(refusal(wrongOutbound)).toBe('not_outbound_message');
    const partnerObject = text('outbound-contact.xml').replace(
      'xmlns:sf="urn:sobject.enterprise.soap.sforce.com"',
      'xmlns:sf="urn:sobject.partner.soap.sforce.com"',
    );
    expect(refusal(partnerObject)).toBe('not_outbound_message');
    const undeclared = text('outbound-contact.xml').replace(' xmlns:sf="urn:sobject.enterprise.soap.sforce.com"', '');
    expect(refusal(undeclared)).toBe('not_xml');
  });
});

describe('up to 100 notifications', () => {
  it('100 notifications are read, in order, each with its own ids', () => {
    const message = parseOutboundMessage(fixture('outbound-contact-100.xml'));
    expect(message.notifications).toHaveLength(MAX_NOTIFICATIONS_PER_MESSAGE);
    expect(new Set(message.notifications.map((n) => n.id)).size).toBe(100);
    expect(new Set(message.notifications.map((n) => n.recordId)).size).toBe(100);
    expect(message.notifications.every((n) => n.object === 'Contact' && n.fields['Id'] === n.recordId)).toBe(true);
    expect(message.notifications[0]?.fields['Email']).toBe('contact001@example.com');
    expect(message.notifications[99]?.fields['Email']).toBe('contact100@example.com');
  });

  it('101 notifications are refused', () => {
    const raw = text('outbound-contact-100.xml');
    const first = raw.slice(raw.indexOf('   <Notification>'), raw.indexOf('</Notification>') + '</Notification>'.length);
    const with101 = raw.replace('  </notifications>', `${first}\n  </notifications>`);
    expect(refusal(with101)).toBe('too_many_notifications');
  });

  it('no notification at all is refused', () => {
    const raw = text('outbound-lead.xml');
    const none = raw.slice(0, raw.indexOf('   <Notification>')) + raw.slice(raw.indexOf('  </notifications>'));
    expect(refusal(none)).toBe('not_outbound_message');
  });

  // Its speed is a figure of `npm run bench:salesforce` (the acknowledgement's latency), not a test's:
  // a timing assertion fails on a busy machine and proves nothing on an idle one.
  it('parses a message of 100 notifications whole, each with its record id', () => {
    const message = parseOutboundMessage(fixture('outbound-contact-100.xml'));
    expect(message.notifications).toHaveLength(100);
    expect(new Set(message.notifications.map((n) => n.recordId)).size).toBe(100);
  });
});

describe('SessionId nil or present', () => {
  it('xsi:nil="true" means no session id was sent', () => {
    expect(parseOutboundMessage(fixture('outbound-session-nil.xml')).sessionIdPresent).toBe(false);
  });

  it('a SessionId is reported as present, and the session id itself is not returned', () => {
    const message = parseOutboundMessage(fixture('outbound-session-id.xml'));
    expect(message.sessionIdPresent).toBe(true);
    expect(JSON.stringify(message)).not.toContain('!AR8AQ');
    expect({ ...message, sessionIdPresent: false }).toEqual(parseOutboundMessage(fixture('outbound-session-nil.xml')));
  });

  it('SessionId must be there, nil or not', () => {
    const missing = text('outbound-session-nil.xml').replace('<SessionId xsi:nil="true"/>', '');
    expect(refusal(missing)).toBe('not_outbound_message');
  });
});

describe('entities decoded in values, DOCTYPE and entity declarations refused', () => {
  it('&amp; &lt; &gt; &apos; and non-ASCII names come back as text', () => {
    const [zoe, taro] = parseOutboundMessage(fixture('outbound-entities.xml')).notifications;
    expect(zoe?.fields).toMatchObject({
      Company: 'Smith & Söhne GmbH',
      FirstName: 'Zoë',
      LastName: 'Ångström-Núñez',
      City: 'Zürich',
      Street: 'Bahnhofstraße 1',
    });
    expect(taro?.fields).toMatchObject({
      Company: '株式会社サンプル & Co. <Osaka>',
      FirstName: '太郎',
      LastName: '山田',
      City: '大阪市',
      Street: "O'Brien Bldg 3F",
    });
  });

  it('character references are decoded once: &#233; is é, &amp;amp; is &amp;, CDATA is literal', () => {
    const raw = text('outbound-lead.xml').replace(
      '<sf:Company>Evergreen Analytics</sf:Company>',
      '<sf:Company>Caf&#233; &#x1F600; &amp;amp; &quot;q&quot; <![CDATA[a &amp; <b>]]></sf:Company>',
    );
    expect(parseOutboundMessage(raw).notifications[0]?.fields['Company']).toBe('Café 😀 &amp; "q" a &amp; <b>');
  });

  it('undeclared entities, bare ampersands and references to forbidden characters are refused', () => {
    const withCompany = (value: string) => text('outbound-lead.xml').replace('Evergreen Analytics', value);
    expect(refusal(withCompany('&nbsp;'))).toBe('not_xml');
    expect(refusal(withCompany('&foo;'))).toBe('not_xml');
    expect(refusal(withCompany('A & B'))).toBe('not_xml');
    expect(refusal(withCompany('&#0;'))).toBe('not_xml');
    expect(refusal(withCompany('&#xD800;'))).toBe('not_xml');
    expect(refusal(withCompany('&#x110000;'))).toBe('not_xml');
  });

  // Expanding it would take memory and minutes: the suite's test timeout is the bound, not a timing assertion.
  it('a billion-laughs payload is refused for its DOCTYPE, before anything is expanded', () => {
    expect(refusal(fixture('outbound-billion-laughs.xml'))).toBe('doctype_forbidden');
  });

  it('an external entity (XXE) is refused', () => {
    expect(refusal(fixture('outbound-doctype-xxe.xml'))).toBe('doctype_forbidden');
  });

  it('any DOCTYPE or markup declaration is refused, wherever it is', () => {
    const raw = text('outbound-contact.xml');
    expect(refusal(raw.replace('<?xml version="1.0" encoding="UTF-8"?>', '<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE x>'))).toBe('doctype_forbidden');
    expect(refusal(raw.replace('<sf:FirstName>Maria', '<sf:FirstName><!ENTITY x "y">Maria'))).toBe('doctype_forbidden');
    expect(refusal(raw.replace(' <soapenv:Body>', ' <!ATTLIST a b CDATA #IMPLIED><soapenv:Body>'))).toBe('doctype_forbidden');
    // A large single entity referenced many times (CVE-2026-26278's shape) never reaches the parser.
    const big = `<!DOCTYPE r [<!ENTITY big "${'A'.repeat(10_000)}">]><r>${'&big;'.repeat(1_000)}</r>`;
    expect(refusal(big)).toBe('doctype_forbidden');
  });

  it('comments and an XML declaration are fine; another encoding is not', () => {
    const raw = text('outbound-contact.xml');
    expect(parseOutboundMessage(raw.replace(' <soapenv:Body>', ' <!-- relayed --><soapenv:Body>')).organizationId).toBe(OUR_ORG);
    expect(parseOutboundMessage(raw.replace('<?xml version="1.0" encoding="UTF-8"?>\n', '')).organizationId).toBe(OUR_ORG);
    expect(refusal(raw.replace('encoding="UTF-8"', 'encoding="ISO-8859-1"'))).toBe('not_xml');
  });
});

describe('malformed envelopes → OutboundMessageError', () => {
  it('the truncated fixture', () => {
    expect(refusal(fixture('outbound-malformed.xml'))).toBe('not_xml');
  });

  it('every truncation of a valid envelope is refused', () => {
    const raw = text('outbound-contact.xml').trimEnd();
    for (let length = 0; length < raw.length; length += 7) expect(refusal(raw.slice(0, length))).toMatch(/^(not_xml|not_outbound_message)$/);
  });

  it.each([
    ['empty', '', 'not_xml'],
    ['not XML', 'hello', 'not_xml'],
    ['JSON', '{"orgId":"00D8a000001FkQzEAK"}', 'not_xml'],
    ['mismatched tags', '<a><b></a></b>', 'not_xml'],
    ['two roots', '<a/><b/>', 'not_xml'],
    ['text after the root', '<a/>junk', 'not_xml'],
    ['control character', '<a>\u0001</a>', 'not_xml'],
    [
      'a SOAP envelope that is not an outbound message',
      `<s:Envelope xmlns:s="${'http://schemas.xmlsoap.org/soap/envelope/'}"><s:Body><x/></s:Body></s:Envelope>`,
      'not_outbound_message',
    ],
    ['too deep', `${'<a>'.repeat(50)}${'</a>'.repeat(50)}`, 'not_xml'],
  ] as const)('%s', (_name, raw, code) => {
    expect(refusal(raw)).toBe(code);
  });

  it('invalid UTF-8 bytes are refused', () => {
    const raw = fixture('outbound-contact.xml');
    const broken = Buffer.concat([raw.subarray(0, 400), Buffer.from([0xc3, 0x28]), raw.subarray(400)]);
    expect(refusal(broken)).toBe('not_xml');
  });

  it('a UTF-8 byte order mark is fine', () => {
    const raw = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), fixture('outbound-contact.xml')]);
    expect(parseOutboundMessage(raw).organizationId).toBe(OUR_ORG);
  });

  it('structural rules: duplicate elements, nested field values, a missing Id or type, text in the wrong place', () => {
    const raw = text('outbound-contact.xml');
    expect(refusal(raw.replace('<ActionId>', '<OrganizationId>00D8a000001FkQzEAK</OrganizationId><ActionId>'))).toBe('not_outbound_message');
    expect(refusal(raw.replace('<sf:Email>', '<sf:Email>a@example.com</sf:Email><sf:Email>'))).toBe('not_outbound_message');
    expect(refusal(raw.replace('<sf:FirstName>Maria</sf:FirstName>', '<sf:FirstName><sf:x>Maria</sf:x></sf:FirstName>'))).toBe('not_outbound_message');
    expect(refusal(raw.replace(/<sf:Id>[^<]*<\/sf:Id>/, ''))).toBe('not_outbound_message');
    expect(refusal(raw.replace(' xsi:type="sf:Contact"', ''))).toBe('not_outbound_message');
    expect(refusal(raw.replace('<ActionId>', 'stray text<ActionId>'))).toBe('not_outbound_message');
    expect(refusal(raw.replace('<OrganizationId>00D8a000001FkQzEAK</OrganizationId>', '<OrganizationId xsi:nil="true"/>'))).toBe('not_outbound_message');
    expect(refusal(raw.replace('<sf:Email>', '<sf:Email xsi:nil="true">'))).toBe('not_outbound_message');
    expect(refusal(raw.replace('https://enrichbridge-demo', 'http://enrichbridge-demo'))).toBe('not_outbound_message');
    expect(refusal(raw.replace('<sf:Email>', '<sf:__proto__ xsi:nil="true"/><sf:Email>'))).toBe('not_outbound_message');
    expect(refusal(raw.replace('<sf:Email>', '<sf:_x>1</sf:_x><sf:Email>'))).toBe('not_outbound_message');
    expect(refusal(raw.replace('xsi:type="sf:Contact"', 'xsi:type="Contact"'))).toBe('not_outbound_message');
  });

  it('elements Salesforce might add later are skipped, not refused', () => {
    const raw = text('outbound-contact.xml').replace('<Notification>', '<Priority>1</Priority><Notification><Attempt>2</Attempt>');
    expect(parseOutboundMessage(raw).notifications).toHaveLength(1);
  });

  it('ids: malformed, wrong checksum, wrong key prefix are refused as invalid_id', () => {
    const raw = text('outbound-contact.xml');
    expect(refusal(raw.replace('00D8a000001FkQzEAK</OrganizationId>', '00D8a000001FkQ</OrganizationId>'))).toBe('invalid_id');
    expect(refusal(raw.replace('00D8a000001FkQzEAK</OrganizationId>', '0038a00000Rk4TzAAJ</OrganizationId>'))).toBe('invalid_id');
    // Suffix "5" marks all five characters of the last chunk upper-case, but they are digits.
    expect(refusal(raw.replace('<Id>04l8a00000Bq1aZAAR</Id>', '<Id>04l8a0000012345AA5</Id>'))).toBe('invalid_id');
    expect(refusal(raw.replaceAll('0038a00000Rk4TzAAJ', '00Q8a00000Jd5WmEAJ'))).toBe('invalid_id');
    expect(refusal(raw.replace('<Id>04l8a00000Bq1aZAAR</Id>', '<Id>notification-1</Id>'))).toBe('invalid_id');
  });

  it('the ids come back canonical: a 15-character org id and a lower-cased 18-character record id', () => {
    const raw = text('outbound-contact.xml')
      .replace('<OrganizationId>00D8a000001FkQzEAK<', `<OrganizationId>${OUR_ORG_15}<`)
      .replace('<sf:Id>0038a00000Rk4TzAAJ<', '<sf:Id>0038a00000rk4tzaaj<');
    const message = parseOutboundMessage(raw);
    expect(message.organizationId).toBe(OUR_ORG);
    expect(message.notifications[0]?.recordId).toBe('0038a00000Rk4TzAAJ');
    expect(message.notifications[0]?.fields['Id']).toBe('0038a00000rk4tzaaj'); // as sent
  });

  it('a body over the size limit is refused before it is decoded', () => {
    const padding = `<!-- ${'x'.repeat(OUTBOUND_MESSAGE_MAX_BYTES)} -->`;
    const raw = text('outbound-contact.xml').replace(' <soapenv:Body>', `${padding}<soapenv:Body>`);
    expect(refusal(raw)).toBe('too_large');
    expect(refusal(Buffer.from(raw))).toBe('too_large');
  });

  it('anything that is not a Buffer or a string is refused, not crashed on', () => {
    for (const junk of [undefined, null, 42, {}, []]) {
      // @ts-expect-error -- what an untyped caller might pass
      expect(() => parseOutboundMessage(junk)).toThrow(OutboundMessageError);
    }
  });
});

describe('random fuzz never throws anything but OutboundMessageError', () => {
  /** Park–Miller: the same cases on every run. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state * 48_271) % 2_147_483_647;
      return state / 2_147_483_647;
    };
  }
  const base = text('outbound-contact-100.xml').slice(0, 6_000) + text('outbound-entities.xml');
  const pieces = [
    '<',
    '>',
    '/',
    '&',
    ';',
    '&amp;',
    '&#',
    'x',
    '"',
    "'",
    '=',
    ':',
    ' ',
    '\n',
    '<!--',
    '-->',
    '<![CDATA[',
    ']]>',
    '<?',
    '?>',
    '<!DOCTYPE',
    'xmlns:',
    'xsi:nil="true"',
    '\u0000',
    '\uD800',
    'é',
    '😀',
  ];

  function mutate(next: () => number): string | Buffer {
    const source = text(
      ['outbound-contact.xml', 'outbound-lead.xml', 'outbound-entities.xml', 'outbound-session-id.xml'][Math.floor(next() * 4)] ?? 'outbound-contact.xml',
    );
    const kind = Math.floor(next() * 6);
    if (kind === 5) {
      // Whole lines (mostly whole elements) dropped, repeated or given random escaped text.
      const lines = source.split('\n');
      for (let i = 0, edits = 1 + Math.floor(next() * 4); i < edits; i++) {
        const at = Math.floor(next() * lines.length);
        const line = lines[at] ?? '';
        const op = Math.floor(next() * 3);
        if (op === 0) lines.splice(at, 1);
        else if (op === 1) lines.splice(at, 0, line);
        else
          lines[at] = line.replace(
            />[^<]*</,
            `>${escapeXml(Array.from({ length: Math.floor(next() * 30) }, () => String.fromCodePoint(Math.floor(next() * 0x3000))).join(''))}<`,
          );
      }
      return lines.join('\n');
    }
    if (kind === 0) return Buffer.from(Array.from({ length: Math.floor(next() * 2_000) }, () => Math.floor(next() * 256)));
    if (kind === 1) return source.slice(0, Math.floor(next() * source.length));
    let out = kind === 4 ? base : source;
    const edits = 1 + Math.floor(next() * 8);
    for (let i = 0; i < edits; i++) {
      const at = Math.floor(next() * out.length);
      const piece = pieces[Math.floor(next() * pieces.length)] ?? '<';
      const cut = Math.floor(next() * 4);
      out = kind === 2 ? out.slice(0, at) + piece + out.slice(at + cut) : out.slice(0, at) + out.slice(at + 1 + cut);
    }
    return kind === 3 ? Buffer.from(out) : out;
  }

  it('5 000 seeded mutations: parsed, or refused with OutboundMessageError', () => {
    const next = random(20_240_611);
    const codes = new Map<string, number>();
    let parsed = 0;
    for (let i = 0; i < 5_000; i++) {
      const raw = mutate(next);
      try {
        parseOutboundMessage(raw);
        parsed++;
      } catch (error) {
        if (!(error instanceof OutboundMessageError)) throw new Error(`case ${i} threw ${String(error)}`, { cause: error });
        codes.set(error.code, (codes.get(error.code) ?? 0) + 1);
      }
    }
    // The mix exercised more than one path.
    expect(parsed).toBeGreaterThan(50);
    expect(codes.get('not_xml')).toBeGreaterThan(100);
    expect(codes.get('not_outbound_message')).toBeGreaterThan(50);
    expect(codes.size).toBeGreaterThanOrEqual(4);
  });

  it('pathological input near the size limit is refused quickly', () => {
    const near = OUTBOUND_MESSAGE_MAX_BYTES - 100;
    const cases = [
      '<'.repeat(near),
      '<a '.repeat(near / 3),
      '<a b="'.repeat(near / 6),
      `<a>${'&amp;'.repeat(near / 5 - 2)}</a>`,
      `<a ${'b="1" '.repeat(near / 6 - 2)}/>`,
      `${'<a>'.repeat(near / 7)}${'</a>'.repeat(near / 7)}`,
      `<a>${'&#x1F600;'.repeat(near / 9 - 1)}</a>`,
      // The costliest kind: well-formed, tens of thousands of elements (about 0.5 s).
      `<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body>${'<x a="1">y</x>'.repeat(near / 15 - 10)}</e:Body></e:Envelope>`,
    ];
    // Quadratic time on any of them would take minutes: the test's timeout is the bound (no timing assertion).
    for (const raw of cases) expect(() => parseOutboundMessage(raw)).toThrow(OutboundMessageError);
  });
});

describe('answers', () => {
  it('the ack is byte for byte the XML Salesforce expects, sent as text/xml', () => {
    expect(OUTBOUND_ACK_XML).toBe(
      [
        '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>',
        '<notificationsResponse xmlns="http://soap.sforce.com/2005/09/outbound"><Ack>true</Ack></notificationsResponse>',
        '</soapenv:Body></soapenv:Envelope>',
      ].join('\n'),
    );
    expect(OUTBOUND_CONTENT_TYPE).toMatch(/^text\/xml\b/);
  });

  it('the ack parses: notificationsResponse in the outbound namespace with Ack true', () => {
    expect(XMLValidator.validate(OUTBOUND_ACK_XML)).toBe(true);
    const parsed: unknown = new XMLParser({ ignoreAttributes: false, parseTagValue: false }).parse(OUTBOUND_ACK_XML);
    expect(parsed).toEqual({
      'soapenv:Envelope': {
        '@_xmlns:soapenv': 'http://schemas.xmlsoap.org/soap/envelope/',
        'soapenv:Body': { notificationsResponse: { '@_xmlns': 'http://soap.sforce.com/2005/09/outbound', Ack: 'true' } },
      },
    });
  });

  it('the fault escapes <&> and quotes, and is a SOAP 1.1 Fault with a Client or Server faultcode', () => {
    const fault = soapFault('Bad <Envelope> & "more" \'here\'');
    expect(fault).toContain('<faultstring>Bad &lt;Envelope&gt; &amp; &quot;more&quot; &apos;here&apos;</faultstring>');
    expect(fault).toContain('<faultcode>soapenv:Client</faultcode>');
    expect(soapFault('queue down', 'Server')).toContain('<faultcode>soapenv:Server</faultcode>');
    expect(XMLValidator.validate(fault)).toBe(true);
    const parsed: unknown = new XMLParser({ removeNSPrefix: true, parseTagValue: false }).parse(fault);
    expect(parsed).toEqual({ Envelope: { Body: { Fault: { faultcode: 'soapenv:Client', faultstring: 'Bad <Envelope> & "more" \'here\'' } } } });
  });

  it('the fault stays well-formed whatever the message holds, including our own error messages', () => {
    expect(escapeXml('a\u0000b\uD800c')).toBe('a\uFFFDb\uFFFDc');
    expect(XMLValidator.validate(soapFault('\u0001<!DOCTYPE x>]]>'))).toBe(true);
    try {
      parseOutboundMessage(`<${'<'.repeat(5_000)}`);
    } catch (error) {
      if (!(error instanceof OutboundMessageError)) throw error;
      expect(error.message.length).toBeLessThan(300);
      expect(XMLValidator.validate(soapFault(error.message))).toBe(true);
    }
  });

  it('the dedupe key is the same for the 15- and 18-character forms of both ids', () => {
    const key = outboundMessageDedupeKey(OUR_ORG, '04l8a00000Bq1aZAAR');
    expect(key).toBe('salesforce:outbound:00D8a000001FkQzEAK:04l8a00000Bq1aZAAR');
    expect(outboundMessageDedupeKey(OUR_ORG_15, '04l8a00000Bq1aZ')).toBe(key);
    expect(outboundMessageDedupeKey(OUR_ORG.toLowerCase(), '04l8a00000Bq1aZaar')).toBe(key);
    expect(outboundMessageDedupeKey(OUR_ORG, '04l8a00000Bq1aA')).not.toBe(key);
    expect(() => outboundMessageDedupeKey(OUR_ORG, 'nope')).toThrow(OutboundMessageError);
  });
});

describe('15 → 18 character ids', () => {
  // Pairs from real captures (OrganizationId beside the 15-character id in EnterpriseUrl, or the
  // loginResponse organizationId beside its sessionId) and the worked examples of the algorithm.
  it.each([
    ['00D000000000001', '00D000000000001EAA'],
    ['00Dd0000000gzcr', '00Dd0000000gzcrEAA'],
    ['00Do0000000e0vQ', '00Do0000000e0vQEAQ'],
    ['00D25000000D1WM', '00D25000000D1WMEA0'],
    ['00D20000000MeJA', '00D20000000MeJAEA0'],
    ['a0D30000001n7Pi', 'a0D30000001n7PiEAI'],
    ['a0RE000000IJmcN', 'a0RE000000IJmcNMAT'],
    ['a01M00000062mPg', 'a01M00000062mPgIAI'],
    ['001M000000qfPyS', '001M000000qfPySIAU'],
    ['a0FE000000D6r3F', 'a0FE000000D6r3FMAR'],
    ['0F9E000000092w2', '0F9E000000092w2KAA'],
    ['aaaaaaaaaaaaaaa', 'aaaaaaaaaaaaaaaAAA'],
    ['AbCdEfGhIjKlMnO', 'AbCdEfGhIjKlMnOVKV'],
    ['aBcDEfgHIJKLMNO', 'aBcDEfgHIJKLMNO025'],
  ])('%s → %s', (id15, id18) => {
    expect(toSalesforceId18(id15)).toBe(id18);
    expect(toSalesforceId18(id18)).toBe(id18);
  });

  it('an 18-character id is case-insensitive: its suffix restores the case', () => {
    expect(toSalesforceId18('00DD0000000GZCREAA')).toBe('00Dd0000000gzcrEAA');
    expect(toSalesforceId18('a0d30000001n7pieai')).toBe('a0D30000001n7PiEAI');
    expect(sameSalesforceId('00dd0000000gzcreaa', '00Dd0000000gzcr')).toBe(true);
  });

  it('a 15-character id is case-sensitive: two ids differing only in case are different records', () => {
    expect(sameSalesforceId('001A0000006Vm9r', '001A0000006VM9r')).toBe(false);
    expect(sameSalesforceId('001A0000006Vm9r', toSalesforceId18('001A0000006Vm9r') ?? '')).toBe(true);
    expect(sameSalesforceId('001A0000006VM9r', toSalesforceId18('001A0000006Vm9r') ?? '')).toBe(false);
  });

  it('refuses what is not an id', () => {
    for (const bad of [
      '',
      '00D',
      '00D00000000000',
      '00D0000000000011',
      '00D000000000001EA',
      '00D00000000000!',
      '00D000000000001EA6',
      '00D000000000001EA-',
      ' 00D000000000001',
      '0000000000000005A5',
    ]) {
      expect(toSalesforceId18(bad)).toBeNull();
    }
    expect(sameSalesforceId('nope', 'nope')).toBe(false);
  });
});
