/** @jsxImportSource react */
// The HubSpot record card (manifests/hubspot/src/app/cards/), rendered with HubSpot's own test renderer
// (@hubspot/ui-extensions/testing) against recorded view JSON: every view here is parsed with the
// server's RecordViewSchema and every action answer with ActionResultSchema, so the fixtures cannot
// drift from what the routes send.
import { Alert, Button, StatusTag, TableCell, Text, hubspot } from '@hubspot/ui-extensions';
import { createRenderer } from '@hubspot/ui-extensions/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ActionResultSchema, type ActionResult } from '../../bridge/record-actions.ts';
import { RECORD_STATUSES, RecordViewSchema, type RecordView } from '../../bridge/record-view.ts';
import { hubspotProperties } from '../../connectors/hubspot/fields.ts';
import { HUBSPOT_CARD_ROUTE } from '../../connectors/hubspot/paths.ts';
import { ACTION_PATHS, CARD_PATH, EnrichmentPanel, cardUrl } from '../../manifests/hubspot/src/app/cards/EnrichmentPanel.tsx';
import { ENRICHBRIDGE_PROPERTIES, ENRICHBRIDGE_PUBLIC_URL } from '../../manifests/hubspot/src/app/cards/config.ts';
import * as card from '../../manifests/hubspot/src/app/cards/view.ts';

// The card keeps its own copy of the shapes (HubSpot builds the folder alone): the server's must fit it.
const viewFits = (view: RecordView): card.RecordView => view;
const resultFits = (result: ActionResult): card.ActionResult => result;
void viewFits;
void resultFits;

const allowed = (units = 0, budgetLeft: number | null = null) => ({ allowed: true, reason: null, message: null, units, budgetLeft });
const refused = (reason: string, message: string, units = 0, budgetLeft: number | null = null) => ({ allowed: false, reason, message, units, budgetLeft });

const FIELDS = [
  { property: 'wf_hh_net_worth', value: '1800000', written: '1800000', replaced: null, state: 'ours', reusedFrom: null },
  { property: 'wf_hh_low_confidence_net_worth', value: '1200000', written: '1200000', replaced: null, state: 'ours', reusedFrom: null },
  { property: 'wf_hh_high_confidence_net_worth', value: '2500000', written: '2500000', replaced: null, state: 'ours', reusedFrom: null },
  { property: 'wf_hh_philanthropic_giver', value: 'true', written: 'true', replaced: null, state: 'ours', reusedFrom: null },
  { property: 'wf_hh_top_philanthropic_donor', value: 'false', written: 'false', replaced: null, state: 'ours', reusedFrom: null },
  { property: 'wf_hh_philanthropic_cause', value: 'Education; Health', written: 'Education; Health', replaced: null, state: 'ours', reusedFrom: null },
  { property: 'wf_career_job_title', value: 'Head of Giving', written: 'VP Finance', replaced: 'Analyst', state: 'edited', reusedFrom: null },
  { property: 'wf_career_company_name', value: 'Acme', written: 'Acme', replaced: null, state: 'reused', reusedFrom: 'contacts/77' },
  { property: 'wf_career_job_level', value: 'VP', written: 'VP', replaced: null, state: 'ours', reusedFrom: null },
].map((field) => ({ ...field, writtenAt: '2026-11-20T14:03:00.000Z' }));

/** A view as the route sends it: enriched, every action priced, unless `over` says otherwise. */
function view(over: Record<string, unknown> = {}): RecordView {
  return RecordViewSchema.parse({
    installationId: 'inst_1',
    provider: 'hubspot',
    environment: 'production',
    object: 'contacts',
    recordId: '123',
    status: { value: 'enriched', reason: null, detail: null, at: '2026-11-20T14:03:00.000Z' },
    lastEnrichedAt: '2026-11-20T14:03:00.000Z',
    dataVersion: '2026-11',
    household: { matched: true, confidence: 0.92 },
    career: { matched: true, confidence: 0.81 },
    excluded: null,
    undone: null,
    fields: FIELDS,
    actions: {
      enrich_now: allowed(1, 240),
      undo: allowed(0, 240),
      exclude: allowed(0, 240),
      include: refused('not_excluded', 'This record is not excluded.', 0, 240),
    },
    ...over,
  });
}

/** The view of a record that was never enriched, in the status given. */
function bare(status: RecordView['status'], over: Record<string, unknown> = {}): RecordView {
  return view({
    status,
    lastEnrichedAt: null,
    dataVersion: null,
    household: { matched: false, confidence: null },
    career: { matched: false, confidence: null },
    fields: [],
    actions: {
      enrich_now: allowed(1, 240),
      undo: refused('nothing_to_undo', 'No enrichment of this record wrote values that can be restored.'),
      exclude: allowed(),
      include: refused('not_excluded', 'This record is not excluded.'),
    },
    ...over,
  });
}

const STATUS_VIEWS: Record<(typeof RECORD_STATUSES)[number], RecordView> = {
  enriched: view(),
  no_match: bare({ value: 'no_match', reason: null, detail: null, at: '2026-11-20T14:03:00.000Z' }, { lastEnrichedAt: '2026-11-20T14:03:00.000Z' }),
  undone: view({
    status: { value: 'undone', reason: null, detail: 'The last enrichment was undone: its values were restored.', at: '2026-11-21T09:00:00.000Z' },
    undone: { at: '2026-11-21T09:00:00.000Z', actor: { userId: '42', email: 'fundraiser@example.org' } },
    fields: [],
    actions: {
      enrich_now: allowed(1, 240),
      undo: refused('already_undone', 'The last enrichment is undone already.'),
      exclude: allowed(),
      include: refused('not_excluded', 'This record is not excluded.'),
    },
  }),
  excluded: view({
    status: { value: 'excluded', reason: 'user', detail: 'Excluded from enrichment by a CRM user.', at: '2026-11-21T09:00:00.000Z' },
    excluded: { by: 'user', at: '2026-11-21T09:00:00.000Z', actor: { userId: '42', email: 'fundraiser@example.org' } },
    actions: {
      enrich_now: refused('excluded', 'This record is excluded from enrichment: include it again first.', 1, 240),
      undo: allowed(),
      exclude: refused('already_excluded', 'This record is excluded already.'),
      include: allowed(),
    },
  }),
  pending: bare({ value: 'pending', reason: 'webhook', detail: 'Queued for enrichment.', at: '2026-11-21T09:00:00.000Z' }),
  failed: bare({ value: 'failed', reason: 'crm_write', detail: 'HubSpot refused the write.', at: '2026-11-21T09:00:00.000Z' }),
  skipped: bare({ value: 'skipped', reason: 'no_match_key', detail: 'No e-mail, phone or address to match on.', at: '2026-11-21T09:00:00.000Z' }),
  never: bare({ value: 'never', reason: null, detail: null, at: null }),
};

const json = (body: unknown, status = 200): Response => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * A fake enrichbridge behind hubspot.fetch: the view (POST …/view with the properties the card read, or
 * GET) answers the current view; an action's POST answers the next queued action result and moves the
 * view on to the one queued with it.
 */
function backend(initial: RecordView) {
  let current: RecordView = initial;
  const answers: { result: unknown; then: RecordView }[] = [];
  const spy = vi.spyOn(hubspot, 'fetch').mockImplementation(async (url, options) => {
    if ((options?.method ?? 'GET') === 'GET' || String(url).endsWith('/view')) return json({ ok: true, view: current });
    const next = answers.shift();
    if (next === undefined) throw new Error(`unexpected POST ${String(url)}`);
    current = next.then;
    return json(next.result);
  });
  return {
    spy,
    /** The answer to the next action, and the view after it. */
    answer(result: unknown, then: RecordView) {
      answers.push({ result: ActionResultSchema.parse(result), then });
    },
    calls: () => spy.mock.calls.map(([url, options]) => `${options?.method ?? 'GET'} ${String(url)}`),
  };
}

/**
 * Never within a test run: the renderer cannot unmount a card, so a card left polling a pending view
 * would call the hubspot.fetch of the tests after it. The polling test sets its own.
 */
const NO_POLL_MS = 2_000_000_000;

async function renderCard(initial: RecordView) {
  const fake = backend(initial);
  const renderer = createRenderer('crm.record.sidebar');
  renderer.render(<EnrichmentPanel pollMs={NO_POLL_MS} />);
  await renderer.waitFor(() => expect(renderer.findByTestId(StatusTag, 'status')).toBeTruthy());
  const text = (testId: string) => renderer.findByTestId(Text, testId).text;
  const button = (testId: string) => renderer.findByTestId(Button, testId);
  return { ...renderer, fake, text, button };
}

const OBJECT_URL = `${ENRICHBRIDGE_PUBLIC_URL}/hubspot/card/contacts/123`;

beforeEach(() => {
  vi.restoreAllMocks();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('the HubSpot enrichment card', () => {
  it.each(RECORD_STATUSES)('shows the status %s on its status line, with its reason', async (status) => {
    const shown = STATUS_VIEWS[status];
    const { findByTestId, maybeFindByTestId, fake } = await renderCard(shown);
    expect(findByTestId(StatusTag, 'status').text).toBe(card.STATUS_LABELS[status]);
    const detail = maybeFindByTestId(Text, 'status-detail');
    if (shown.status.detail !== null) expect(detail?.text).toContain(shown.status.detail);
    if (shown.status.reason !== null && shown.status.reason !== 'user') expect(detail?.text).toContain(shown.status.reason);
    expect(fake.calls()).toEqual([`POST ${OBJECT_URL}/view`]);
  });

  it('names who excluded or undid the record', async () => {
    const { text } = await renderCard(STATUS_VIEWS.excluded);
    expect(text('status-detail')).toContain('by fundraiser@example.org');
  });

  it('shows the net-worth band, giving and career headline, match confidence and last enrichment of an enriched contact', async () => {
    const { text } = await renderCard(view());
    expect(text('net-worth')).toBe('$1.2M–$2.5M (estimate $1.8M)');
    expect(text('giving')).toBe('Philanthropic giver (Education; Health)');
    expect(text('career')).toBe('Head of Giving at Acme (VP)');
    expect(text('confidence')).toBe('Household 92%, career 81%');
    expect(text('last-enriched')).toBe('2026-11-20 14:03 UTC (data 2026-11)');
  });

  it('lists each field we wrote with its value, when, what it replaced and whether it is still ours, edited or reused', async () => {
    const { findByTestId, findAll } = await renderCard(view());
    expect(findByTestId(TableCell, 'state-wf_hh_net_worth').text).toBe('Ours');
    expect(findByTestId(TableCell, 'state-wf_career_job_title').text).toBe('Edited since (we wrote VP Finance)');
    expect(findByTestId(TableCell, 'state-wf_career_company_name').text).toBe('Reused from contacts/77');
    const cells = findAll(TableCell).map((cell) => cell.text);
    // The edited job title: its label, what it holds now, when we wrote it, what it replaced.
    expect(cells).toEqual(expect.arrayContaining(['Job title', 'Head of Giving', '2026-11-20 14:03 UTC', 'Analyst', '(empty)']));
  });

  it('prices each action and shows why one is not allowed', async () => {
    const { text, button } = await renderCard(view());
    expect(text('enrich_now-note')).toBe('1 unit, 240 left this month');
    expect(text('undo-note')).toBe('no units');
    expect(button('enrich_now').props.disabled).toBe(false);
    const excluded = await renderCard(STATUS_VIEWS.excluded);
    expect(excluded.button('enrich_now').props.disabled).toBe(true);
    expect(excluded.text('enrich_now-note')).toBe('This record is excluded from enrichment: include it again first.');
  });

  it("disables Enrich now with the reason when the month's budget is spent", async () => {
    const spent = view({
      actions: {
        ...view().actions,
        enrich_now: refused('budget_spent', "This month's enrichment budget (500 units) is spent; it starts again on 2026-12-01.", 1, 0),
      },
    });
    const { text, button } = await renderCard(spent);
    expect(button('enrich_now').props.disabled).toBe(true);
    expect(text('enrich_now-note')).toBe("This month's enrichment budget (500 units) is spent; it starts again on 2026-12-01.");
  });

  it('offers Exclude on an included record and Include again on an excluded one', async () => {
    const included = await renderCard(view());
    expect(included.maybeFindByTestId(Button, 'exclude')).not.toBeNull();
    expect(included.maybeFindByTestId(Button, 'include')).toBeNull();
    const excluded = await renderCard(STATUS_VIEWS.excluded);
    expect(excluded.maybeFindByTestId(Button, 'include')).not.toBeNull();
    expect(excluded.maybeFindByTestId(Button, 'exclude')).toBeNull();
  });
});

describe("the card's actions", () => {
  it.each([
    ['enrich_now', view(), { ok: true, action: 'enrich_now', queued: true }, STATUS_VIEWS.pending, 'Enrichment queued'],
    ['undo', view(), { ok: true, action: 'undo', fields: [], leftAlone: [] }, STATUS_VIEWS.undone, 'Enrichment undone'],
    ['exclude', view(), { ok: true, action: 'exclude' }, STATUS_VIEWS.excluded, 'Excluded from enrichment'],
    ['include', STATUS_VIEWS.excluded, { ok: true, action: 'include' }, view(), 'Enriched'],
  ] as const)("%s posts to its route, refreshes the record's properties and reloads the view", async (action, before, result, after, label) => {
    const { button, fake, mocks, waitFor, findByTestId } = await renderCard(before);
    fake.answer(result, after);
    button(action).trigger('onClick');
    await waitFor(() => expect(findByTestId(StatusTag, 'status').text).toBe(label));
    expect(fake.calls()).toEqual([`POST ${OBJECT_URL}/view`, `POST ${OBJECT_URL}/${ACTION_PATHS[action]}`, `POST ${OBJECT_URL}/view`]);
    expect(mocks.actions.refreshObjectProperties.callCount).toBe(1);
    expect(mocks.actions.addAlert.calls[0]?.[0]).toMatchObject({ type: 'success' });
  });

  it('names the fields an Undo left alone because someone changed them since', async () => {
    const { button, fake, mocks, waitFor, findByTestId } = await renderCard(view());
    fake.answer(
      {
        ok: true,
        action: 'undo',
        fields: [
          { property: 'wf_hh_net_worth', result: 'restored', value: null, written: '1800000', replaced: null },
          { property: 'wf_career_job_title', result: 'left_alone', value: 'Head of Giving', written: 'VP Finance', replaced: 'Analyst' },
        ],
        leftAlone: ['wf_career_job_title'],
      },
      STATUS_VIEWS.undone,
    );
    button('undo').trigger('onClick');
    await waitFor(() => expect(findByTestId(StatusTag, 'status').text).toBe('Enrichment undone'));
    expect(findByTestId(Alert, 'notice').text).toContain('Job title (wf_career_job_title)');
    expect(mocks.actions.addAlert.calls[0]?.[0]).toMatchObject({ type: 'warning', message: expect.stringContaining('wf_career_job_title') });
    expect(mocks.actions.refreshObjectProperties.callCount).toBe(1);
  });

  it("shows a refused action's reason and changes nothing on the record", async () => {
    const { button, fake, mocks, waitFor, findByTestId } = await renderCard(view());
    fake.answer({ ok: false, action: 'enrich_now', reason: 'budget_spent', message: "This month's enrichment budget is spent." }, view());
    button('enrich_now').trigger('onClick');
    await waitFor(() => expect(findByTestId(Alert, 'notice').text).toContain("This month's enrichment budget is spent."));
    expect(mocks.actions.addAlert.calls[0]?.[0]).toMatchObject({ type: 'danger' });
    expect(mocks.actions.refreshObjectProperties.callCount).toBe(0);
  });

  it('looks again while the enrichment is queued, and refreshes the record once it is written', async () => {
    const views = [STATUS_VIEWS.pending, STATUS_VIEWS.pending, view()];
    const spy = vi.spyOn(hubspot, 'fetch').mockImplementation(async () => json({ ok: true, view: views.shift() ?? view() }));
    const { render, waitFor, findByTestId, mocks } = createRenderer('crm.record.sidebar');
    render(<EnrichmentPanel pollMs={10} />);
    await waitFor(() => expect(findByTestId(StatusTag, 'status').text).toBe('Enriched'));
    // The renderer's waitFor checks again on a render only; the refresh comes in an effect after it.
    await vi.waitFor(() => expect(mocks.actions.refreshObjectProperties.callCount).toBe(1));
    expect(spy).toHaveBeenCalledTimes(3);
  });

  it("reads our properties itself and sends them with the view request, so a view costs no HubSpot call of enrichbridge's", async () => {
    const spy = vi.spyOn(hubspot, 'fetch').mockImplementation(async () => json({ ok: true, view: view() }));
    const renderer = createRenderer('crm.record.sidebar');
    renderer.mocks.actions.fetchCrmObjectProperties.willCall(async () => ({ wf_hh_net_worth: '1800000' }));
    renderer.render(<EnrichmentPanel pollMs={NO_POLL_MS} />);
    await renderer.waitFor(() => expect(renderer.findByTestId(StatusTag, 'status')).toBeTruthy());
    expect(renderer.mocks.actions.fetchCrmObjectProperties.calls[0]?.[0]).toEqual([...ENRICHBRIDGE_PROPERTIES]);
    expect(spy.mock.calls.map(([url, options]) => [`${options?.method ?? 'GET'} ${String(url)}`, options?.body])).toEqual([
      [`POST ${OBJECT_URL}/view`, { properties: { wf_hh_net_worth: '1800000' } }],
    ]);
  });

  it('asks enrichbridge to read the contact itself (GET) when the card cannot read the properties', async () => {
    const spy = vi.spyOn(hubspot, 'fetch').mockImplementation(async () => json({ ok: true, view: view() }));
    const renderer = createRenderer('crm.record.sidebar');
    renderer.mocks.actions.fetchCrmObjectProperties.willCall(() => Promise.reject(new Error('no permission')));
    renderer.render(<EnrichmentPanel pollMs={NO_POLL_MS} />);
    await renderer.waitFor(() => expect(renderer.findByTestId(StatusTag, 'status')).toBeTruthy());
    expect(spy.mock.calls.map(([url, options]) => `${options?.method ?? 'GET'} ${String(url)}`)).toEqual([`GET ${OBJECT_URL}`]);
  });

  it('says so when the view cannot be loaded', async () => {
    vi.spyOn(hubspot, 'fetch').mockResolvedValue(new Response('unauthorized', { status: 401, statusText: 'Unauthorized' }));
    const { render, waitFor, findByTestId } = createRenderer('crm.record.sidebar');
    render(<EnrichmentPanel pollMs={NO_POLL_MS} />);
    await waitFor(() => expect(findByTestId(Alert, 'load-error').text).toContain('401'));
  });
});

describe('the card and the server agree', () => {
  it('on the route: the card calls HUBSPOT_CARD_ROUTE under the public URL in app-hsmeta.json permittedUrls.fetch', () => {
    expect(HUBSPOT_CARD_ROUTE).toBe(`${CARD_PATH}/:objectId`);
    expect(cardUrl(123, 'enrich_now')).toBe(`${ENRICHBRIDGE_PUBLIC_URL}${CARD_PATH}/123/enrich`);
  });

  it('on the properties the summary reads: each is one HubSpot provisions', () => {
    const names = new Set(hubspotProperties().map((p) => p.name));
    for (const property of Object.values(card.SUMMARY_PROPERTIES)) expect(names, property).toContain(property);
  });

  it('on the statuses', () => {
    expect([...card.RECORD_STATUSES]).toEqual([...RECORD_STATUSES]);
  });
});
