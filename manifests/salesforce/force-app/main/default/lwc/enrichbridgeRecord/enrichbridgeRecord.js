// The enrichment of one Contact or Lead, on its record page: the status with its reason, the few values
// people use, match confidence, last enriched, each field we manage with its provenance, and the record
// actions (Enrich now, Undo, Exclude, Include again) with their cost, disabled with the reason when not
// allowed. Everything comes from enrichbridge's record view (RecordViewSchema) through the Apex
// controller; after an action the record page is told to reload the record and the view is read again.
import { LightningElement, api } from 'lwc';
import { notifyRecordUpdateAvailable } from 'lightning/uiRecordApi';
import getView from '@salesforce/apex/EnrichbridgeRecordController.getView';
import runAction from '@salesforce/apex/EnrichbridgeRecordController.runAction';

const STATUS_LABELS = {
  enriched: 'Enriched',
  no_match: 'No match',
  undone: 'Undone',
  excluded: 'Excluded',
  pending: 'Queued',
  failed: 'Failed',
  skipped: 'Skipped',
  never: 'Not enriched yet',
};

const STATE_LABELS = { ours: 'ours', edited: 'edited since', reused: 'reused' };

// The view's action names, the path segment the controller posts to, and the buttons' labels.
const ACTIONS = [
  { key: 'enrich_now', path: 'enrich', label: 'Enrich now' },
  { key: 'undo', path: 'undo', label: 'Undo' },
  { key: 'exclude', path: 'exclude', label: 'Exclude' },
  { key: 'include', path: 'include', label: 'Include again' },
];

// The values people look at first, by field API name (Contact and Lead use the same names).
const HIGHLIGHTS = [
  { label: 'Net worth', properties: ['WF_HH_Net_Worth__c'], band: ['WF_HH_Low_Confidence_Net_Worth__c', 'WF_HH_High_Confidence_Net_Worth__c'] },
  { label: 'Giving', properties: ['WF_HH_Philanthropic_Giver__c', 'WF_HH_Top_Philanthropic_Donor__c', 'WF_HH_Philanthropic_Cause__c'] },
  { label: 'Career', properties: ['WF_Career_Job_Title__c', 'WF_Career_Company_Name__c'] },
];

const dollars = (value) => (typeof value === 'number' ? `$${value.toLocaleString('en-US')}` : String(value));
const percent = (confidence) => (typeof confidence === 'number' ? `${Math.round(confidence * 100)}%` : '—');
const shown = (value) => (value === null || value === undefined || value === '' ? '—' : typeof value === 'boolean' ? (value ? 'Yes' : 'No') : String(value));
const when = (iso) => (iso ? iso.replace('T', ' ').slice(0, 16) + ' UTC' : '—');

export default class EnrichbridgeRecord extends LightningElement {
  @api recordId;
  @api objectApiName;

  view;
  error;
  notice;
  busy = false;

  connectedCallback() {
    this.load();
  }

  async load() {
    try {
      this.view = JSON.parse(await getView({ recordId: this.recordId }));
      this.error = undefined;
    } catch (e) {
      this.view = undefined;
      this.error = messageOf(e);
    }
  }

  get loaded() {
    return this.view !== undefined;
  }

  get statusLabel() {
    return STATUS_LABELS[this.view.status.value] || this.view.status.value;
  }

  get statusClass() {
    const value = this.view.status.value;
    const tone = value === 'enriched' ? 'success' : value === 'failed' ? 'error' : value === 'excluded' || value === 'undone' ? 'warning' : 'default';
    return `slds-badge eb-status eb-status_${tone}`;
  }

  get statusReason() {
    const { reason, detail } = this.view.status;
    if (detail && reason) return `${detail} (${reason})`;
    return detail || reason || '';
  }

  get statusAt() {
    return this.view.status.at ? when(this.view.status.at) : '';
  }

  get lastEnriched() {
    return when(this.view.lastEnrichedAt);
  }

  get householdConfidence() {
    return this.view.household.matched ? percent(this.view.household.confidence) : 'not matched';
  }

  get careerConfidence() {
    return this.view.career.matched ? percent(this.view.career.confidence) : 'not matched';
  }

  get highlights() {
    const byProperty = new Map(this.view.fields.map((field) => [field.property, field.value]));
    const value = (property) => byProperty.get(property);
    return HIGHLIGHTS.map((highlight) => {
      let text;
      const [low, high] = (highlight.band || []).map(value);
      if (typeof low === 'number' && typeof high === 'number') text = `${dollars(low)} – ${dollars(high)}`;
      else {
        const values = highlight.properties.map(value).filter((v) => v !== null && v !== undefined && v !== '' && v !== false);
        text = values.map((v) => (highlight.label === 'Net worth' ? dollars(v) : v === true ? 'Yes' : String(v))).join(' · ');
      }
      return { label: highlight.label, termKey: `${highlight.label}-term`, detailKey: `${highlight.label}-detail`, text: text || '—' };
    });
  }

  get hasFields() {
    return this.view.fields.length > 0;
  }

  get fields() {
    return this.view.fields.map((field) => ({
      property: field.property,
      value: shown(field.value),
      writtenAt: when(field.writtenAt),
      replaced: shown(field.replaced),
      state: STATE_LABELS[field.state] || field.state,
      stateClass: `eb-state eb-state_${field.state}`,
      written: field.state === 'edited' ? `we wrote ${shown(field.written)}` : '',
    }));
  }

  get actions() {
    return ACTIONS.map(({ key, path, label }) => {
      const availability = this.view.actions[key];
      const cost =
        availability.units > 0
          ? `${availability.units} unit${availability.units === 1 ? '' : 's'}${availability.budgetLeft === null ? '' : `, ${availability.budgetLeft} left this month`}`
          : 'no cost';
      return {
        key,
        path,
        label,
        cost,
        disabled: this.busy || !availability.allowed,
        why: availability.allowed ? '' : availability.message || availability.reason,
        title: availability.allowed ? `${label} (${cost})` : availability.message || availability.reason,
      };
    });
  }

  async handleAction(event) {
    const path = event.currentTarget.dataset.action;
    this.busy = true;
    this.notice = undefined;
    try {
      const result = JSON.parse(await runAction({ recordId: this.recordId, action: path }));
      this.notice = noticeOf(result);
      await notifyRecordUpdateAvailable([{ recordId: this.recordId }]);
      await this.load();
    } catch (e) {
      this.notice = { kind: 'error', text: messageOf(e), leftAlone: [] };
    } finally {
      this.busy = false;
    }
  }

  get noticeText() {
    return this.notice ? this.notice.text : '';
  }

  get noticeClass() {
    return this.notice ? `slds-box slds-box_x-small slds-m-bottom_small eb-notice eb-notice_${this.notice.kind}` : '';
  }

  get leftAlone() {
    return this.notice ? this.notice.leftAlone : [];
  }

  get hasLeftAlone() {
    return this.leftAlone.length > 0;
  }
}

const DONE = {
  enrich_now: (result) => (result.queued === false ? 'An Enrich now of this record was already waiting.' : 'Queued for enrichment, ahead of the queue.'),
  undo: (result) => (result.leftAlone && result.leftAlone.length > 0 ? 'Undone, except the fields below.' : 'Undone: every field holds what it held before.'),
  exclude: () => 'Excluded: this record will not be enriched.',
  include: () => 'Included again: this record is enriched as before.',
};

function noticeOf(result) {
  if (!result.ok) return { kind: 'error', text: result.message || result.reason, leftAlone: [] };
  const done = DONE[result.action];
  return { kind: 'success', text: done ? done(result) : 'Done.', leftAlone: result.leftAlone || [] };
}

function messageOf(error) {
  if (error && error.body && error.body.message) return error.body.message;
  if (error && error.message) return error.message;
  return 'Enrichbridge could not be reached.';
}
