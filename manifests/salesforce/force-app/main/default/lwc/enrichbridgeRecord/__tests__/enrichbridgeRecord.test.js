// The record component against enrichbridge's record view: each status, the values and provenance it
// shows, each action with its cost, actions disabled with their reason, a refused Undo field named, and
// the record page told to reload after an action. The view and answers are data/*.json, which
// test/unit/salesforce-record-component.test.ts parses with RecordViewSchema and ActionResultSchema.
import { createElement } from 'lwc';
import EnrichbridgeRecord from 'c/enrichbridgeRecord';
import { notifyRecordUpdateAvailable } from 'lightning/uiRecordApi';
import getView from '@salesforce/apex/EnrichbridgeRecordController.getView';
import runAction from '@salesforce/apex/EnrichbridgeRecordController.runAction';
import VIEWS from './fixtures/views.json';
import ACTIONS from './fixtures/actions.json';

jest.mock('@salesforce/apex/EnrichbridgeRecordController.getView', () => ({ default: jest.fn() }), { virtual: true });
jest.mock('@salesforce/apex/EnrichbridgeRecordController.runAction', () => ({ default: jest.fn() }), { virtual: true });

const RECORD_ID = '003000000000001AAA';
const LABELS = { enriched: 'Enriched', pending: 'Queued', undone: 'Undone', excluded: 'Excluded' };

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

async function mount(view) {
  getView.mockResolvedValue(JSON.stringify(view));
  const element = createElement('c-enrichbridge-record', { is: EnrichbridgeRecord });
  element.recordId = RECORD_ID;
  element.objectApiName = 'Contact';
  document.body.appendChild(element);
  await flush();
  return element;
}

const $ = (element, id) => element.shadowRoot.querySelector(`[data-id="${id}"]`);
const $$ = (element, id) => [...element.shadowRoot.querySelectorAll(`[data-id="${id}"]`)];
const text = (element, id) => $(element, id).textContent.trim();
const button = (element, action) => $(element, action);

afterEach(() => {
  while (document.body.firstChild) document.body.removeChild(document.body.firstChild);
  jest.clearAllMocks();
});

describe('c-enrichbridge-record', () => {
  it('reads the view of its record through the controller', async () => {
    await mount(VIEWS.enriched);
    expect(getView).toHaveBeenCalledWith({ recordId: RECORD_ID });
  });

  describe.each([
    ['enriched', 'Enriched', ''],
    ['no_match', 'No match', ''],
    ['undone', 'Undone', 'The last enrichment was undone: its values were restored.'],
    ['excluded', 'Excluded', 'Excluded from enrichment by a CRM user. (user)'],
    ['pending', 'Queued', 'Queued for enrichment. (enrich_now)'],
    ['failed', 'Failed', 'The CRM refused the write. (crm_write)'],
    ['skipped', 'Skipped', 'No e-mail, phone or address to match on. (no_match_key)'],
    ['never', 'Not enriched yet', ''],
  ])('status %s', (status, label, reason) => {
    it(`shows "${label}" with its reason`, async () => {
      const element = await mount(VIEWS[status]);
      expect(text(element, 'status-value')).toBe(label);
      expect(text(element, 'status-reason')).toBe(reason);
      expect($$(element, 'error')).toHaveLength(0);
    });
  });

  it('shows the values people use, match confidence and last enriched', async () => {
    const element = await mount(VIEWS.enriched);
    expect($$(element, 'highlight').map((node) => node.textContent)).toEqual(['$1,000,000 – $5,000,000', 'Yes', 'Head of Partnerships · Acme Corp']);
    expect(text(element, 'household-confidence')).toBe('92%');
    expect(text(element, 'career-confidence')).toBe('81%');
    expect(text(element, 'last-enriched')).toBe('2026-11-20 09:30 UTC');
  });

  it('says not matched and never enriched for a record never enriched', async () => {
    const element = await mount(VIEWS.never);
    expect(text(element, 'household-confidence')).toBe('not matched');
    expect(text(element, 'last-enriched')).toBe('—');
    expect($$(element, 'field')).toHaveLength(0);
    expect($$(element, 'no-fields')).toHaveLength(1);
  });

  it('lists each field with its value, when written, what it replaced and its state', async () => {
    const element = await mount(VIEWS.enriched);
    const rows = $$(element, 'field').map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent.trim()));
    expect(rows).toHaveLength(VIEWS.enriched.fields.length);
    expect(rows[0]).toEqual(['WF_HH_Net_Worth__c', '2500000', '2026-11-20 09:30 UTC', '—', 'ours']);
    expect(rows[3]).toEqual(['WF_HH_Philanthropic_Giver__c', 'Yes', '2026-11-20 09:30 UTC', 'No', 'reused']);
    expect(rows[4]).toEqual(['WF_Career_Job_Title__c', 'Head of Partnerships', '2026-11-20 09:30 UTC', 'Partnerships', 'edited sincewe wrote VP Partnerships']);
  });

  it('shows each action with its cost, and the ones not allowed disabled with the reason', async () => {
    const element = await mount(VIEWS.enriched);
    expect(button(element, 'enrich_now').label).toBe('Enrich now');
    expect(button(element, 'enrich_now').disabled).toBe(false);
    expect($$(element, 'cost').map((node) => node.textContent)).toEqual(['1 unit, 41 left this month', 'no cost', 'no cost', 'no cost']);
    expect(button(element, 'include').disabled).toBe(true);
    expect(button(element, 'include').title).toBe('This record is not excluded.');
    expect($$(element, 'why').map((node) => node.textContent)).toEqual(['This record is not excluded.']);
  });

  it('disables Enrich now when the budget forbids it, saying so', async () => {
    const element = await mount(VIEWS.budget_spent);
    expect(button(element, 'enrich_now').disabled).toBe(true);
    expect(button(element, 'enrich_now').title).toMatch(/budget \(500 units\) is spent/);
    expect($$(element, 'cost')[0].textContent).toBe('1 unit, 0 left this month');
    expect($$(element, 'why')[0].textContent).toMatch(/starts again on 2026-12-01/);
  });

  it('offers Include again, not Exclude or Enrich now, on an excluded record', async () => {
    const element = await mount(VIEWS.excluded);
    expect(button(element, 'include').disabled).toBe(false);
    expect(button(element, 'exclude').disabled).toBe(true);
    expect(button(element, 'enrich_now').disabled).toBe(true);
    expect(button(element, 'enrich_now').title).toBe('This record is excluded from enrichment: include it again first.');
  });

  describe.each([
    ['enrich_now', 'enrich', 'enriched', 'pending', 'Queued for enrichment, ahead of the queue.'],
    ['undo', 'undo', 'enriched', 'undone', 'Undone, except the fields below.'],
    ['exclude', 'exclude', 'enriched', 'excluded', 'Excluded: this record will not be enriched.'],
    ['include', 'include', 'excluded', 'enriched', 'Included again: this record is enriched as before.'],
  ])('action %s', (key, path, before, after, notice) => {
    it(`calls ${path}, tells the record page to reload the record, and shows the view again`, async () => {
      const element = await mount(VIEWS[before]);
      runAction.mockResolvedValue(JSON.stringify(ACTIONS[key]));
      getView.mockResolvedValue(JSON.stringify(VIEWS[after]));
      button(element, key).click();
      await flush();
      await flush();
      expect(runAction).toHaveBeenCalledWith({ recordId: RECORD_ID, action: path });
      expect(notifyRecordUpdateAvailable).toHaveBeenCalledWith([{ recordId: RECORD_ID }]);
      expect(getView).toHaveBeenCalledTimes(2);
      // Reloaded after the record page was told.
      expect(notifyRecordUpdateAvailable.mock.invocationCallOrder[0]).toBeLessThan(getView.mock.invocationCallOrder[1]);
      expect(text(element, 'notice-text')).toBe(notice);
      expect(text(element, 'status-value')).toBe(LABELS[after]);
    });
  });

  it('names the fields an Undo left alone because someone changed them since', async () => {
    const element = await mount(VIEWS.enriched);
    runAction.mockResolvedValue(JSON.stringify(ACTIONS.undo));
    getView.mockResolvedValue(JSON.stringify(VIEWS.undone));
    button(element, 'undo').click();
    await flush();
    await flush();
    expect($$(element, 'left-alone').map((node) => node.textContent)).toEqual(['WF_Career_Job_Title__c']);
    expect(text(element, 'status-value')).toBe('Undone');
  });

  it('shows a refused action with its reason', async () => {
    const element = await mount(VIEWS.enriched);
    runAction.mockResolvedValue(JSON.stringify(ACTIONS.refused_undo));
    button(element, 'undo').click();
    await flush();
    await flush();
    expect(text(element, 'notice-text')).toBe('No enrichment of this record wrote values that can be restored.');
    expect($$(element, 'left-alone')).toHaveLength(0);
  });

  it('shows the error when enrichbridge cannot be read', async () => {
    getView.mockRejectedValue({ body: { message: 'Enrichbridge answered HTTP 401: wrong org secret' } });
    const element = createElement('c-enrichbridge-record', { is: EnrichbridgeRecord });
    element.recordId = RECORD_ID;
    document.body.appendChild(element);
    await flush();
    expect(text(element, 'error')).toBe('Enrichbridge answered HTTP 401: wrong org secret');
    expect($$(element, 'status')).toHaveLength(0);
  });

  it('shows an action that failed, without telling the record page to reload', async () => {
    const element = await mount(VIEWS.enriched);
    runAction.mockRejectedValue({ body: { message: 'Enrichbridge answered HTTP 502.' } });
    button(element, 'exclude').click();
    await flush();
    await flush();
    expect(text(element, 'notice-text')).toBe('Enrichbridge answered HTTP 502.');
    expect(notifyRecordUpdateAvailable).not.toHaveBeenCalled();
  });
});
