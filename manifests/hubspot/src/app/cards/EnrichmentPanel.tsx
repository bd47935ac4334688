/** @jsxImportSource react */
// The enrichment card's content: the record's status, the values people use (net-worth band, giving,
// career headline), match confidence, last enriched, the field table with provenance and the four
// actions with their cost. It reads and acts through hubspot.fetch only (HubSpot signs each request and
// appends the portal and user it vouches for); after an action it refreshes the record's properties on
// the page and reloads the view.
import { useCallback, useEffect, useRef, useState } from 'react';
import {
  Alert,
  Button,
  DescriptionList,
  DescriptionListItem,
  Divider,
  Flex,
  LoadingSpinner,
  StatusTag,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
  Text,
  hubspot,
  useExtensionActions,
  useExtensionContext,
} from '@hubspot/ui-extensions';
import { ENRICHBRIDGE_PROPERTIES, ENRICHBRIDGE_PUBLIC_URL } from './config.ts';
import {
  ACTION_LABELS,
  type ActionAnswer,
  type ActionAvailability,
  type CardAction,
  FIELD_STATE_LABELS,
  type RecordView,
  STATUS_LABELS,
  STATUS_VARIANTS,
  type ViewAnswer,
  careerHeadline,
  costLine,
  givingHeadline,
  netWorthBand,
  percent,
  propertyLabel,
  shown,
  when,
} from './view.ts';

/** Where the card's routes are, under the public URL (connectors/hubspot/paths.ts, HUBSPOT_CARD_ROUTE). */
export const CARD_PATH = '/hubspot/card/contacts';

/** HubSpot's own limit for a hubspot.fetch call. */
const TIMEOUT_MS = 15_000;
/** How often a queued enrichment is looked at again, and how many times (Enrich now writes within seconds). */
const POLL_MS = 2_000;
const MAX_POLLS = 15;

/** The view from the card's own read of our properties: POST to the view's URL and this segment. */
export const VIEW_PATH = 'view';

/** Each action's last path segment. */
export const ACTION_PATHS: Readonly<Record<CardAction, string>> = { enrich_now: 'enrich', undo: 'undo', exclude: 'exclude', include: 'include' };

/** The view's URL, or an action's; HubSpot appends the portal and user it vouches for to the query. */
export function cardUrl(objectId: string | number, action?: CardAction): string {
  const base = `${ENRICHBRIDGE_PUBLIC_URL.replace(/\/+$/, '')}${CARD_PATH}/${encodeURIComponent(String(objectId))}`;
  return action === undefined ? base : `${base}/${ACTION_PATHS[action]}`;
}

/** The JSON of an answer, or a refusal saying what went wrong when there is none (a signature failure answers 401). */
async function answerOf<T>(response: Response): Promise<T | { ok: false; reason: string; message: string }> {
  try {
    const body: unknown = await response.json();
    if (typeof body === 'object' && body !== null && 'ok' in body) return body as T;
  } catch {
    // Not JSON: said below.
  }
  return { ok: false, reason: `http_${response.status}`, message: `enrichbridge answered ${response.status} ${response.statusText}`.trim() };
}

type Loaded = { readonly state: 'loading' } | { readonly state: 'view'; readonly view: RecordView } | { readonly state: 'error'; readonly message: string };

export function EnrichmentPanel({ pollMs = POLL_MS }: { readonly pollMs?: number } = {}) {
  const context = useExtensionContext<'crm.record.sidebar'>();
  const actions = useExtensionActions<'crm.record.sidebar'>();
  const objectId = context.crm.objectId;
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const [busy, setBusy] = useState<CardAction | null>(null);
  const [notice, setNotice] = useState<{ variant: 'warning' | 'error'; title: string; message: string } | null>(null);

  // The view's loader reads the actions through a ref: a new actions object from the host must not
  // make a new loader, which would load the view again.
  const actionsRef = useRef(actions);
  actionsRef.current = actions;
  const load = useCallback(async (): Promise<void> => {
    try {
      // Our properties as HubSpot shows them, read with HubSpot's own call and sent with the view
      // request: the view then costs no call on the portal's API budget. Where they cannot be read,
      // enrichbridge reads the contact itself (GET).
      let seen: Record<string, string> | null = null;
      try {
        const read: unknown = await actionsRef.current.fetchCrmObjectProperties([...ENRICHBRIDGE_PROPERTIES]);
        seen = typeof read === 'object' && read !== null ? (read as Record<string, string>) : null;
      } catch {
        seen = null;
      }
      const response =
        seen === null
          ? await hubspot.fetch(cardUrl(objectId), { method: 'GET', timeout: TIMEOUT_MS })
          : await hubspot.fetch(`${cardUrl(objectId)}/${VIEW_PATH}`, { method: 'POST', timeout: TIMEOUT_MS, body: { properties: seen } });
      const answer = await answerOf<ViewAnswer>(response);
      setLoaded(answer.ok ? { state: 'view', view: answer.view } : { state: 'error', message: answer.message });
    } catch (error) {
      setLoaded({ state: 'error', message: `enrichbridge could not be reached: ${error instanceof Error ? error.message : String(error)}` });
    }
  }, [objectId]);

  useEffect(() => {
    void load();
  }, [load]);

  // While the enrichment is queued, look again every few seconds; once it settles, the record's
  // properties on the page are refreshed too, since the enrichment wrote them.
  const polls = useRef(0);
  const wasPending = useRef(false);
  const status = loaded.state === 'view' ? loaded.view.status.value : null;
  useEffect(() => {
    if (status !== 'pending') {
      if (wasPending.current && status !== null) actions.refreshObjectProperties();
      wasPending.current = false;
      polls.current = 0;
      return undefined;
    }
    wasPending.current = true;
    if (polls.current >= MAX_POLLS) return undefined;
    const timer = setTimeout(() => {
      polls.current += 1;
      void load();
    }, pollMs);
    return () => clearTimeout(timer);
  }, [loaded, status, load, pollMs, actions]);

  const run = async (action: CardAction): Promise<void> => {
    setBusy(action);
    setNotice(null);
    try {
      const answer = await answerOf<ActionAnswer>(await hubspot.fetch(cardUrl(objectId, action), { method: 'POST', timeout: TIMEOUT_MS }));
      if (!answer.ok) {
        setNotice({ variant: 'error', title: `${ACTION_LABELS[action]} was refused`, message: answer.message });
        actions.addAlert({ type: 'danger', title: `${ACTION_LABELS[action]} was refused`, message: answer.message });
      } else {
        const leftAlone = 'leftAlone' in answer ? (answer.leftAlone ?? []) : [];
        if (leftAlone.length > 0) {
          const message = `Changed since by someone else, so left alone: ${leftAlone.map(propertyLabel).join(', ')} (${leftAlone.join(', ')}).`;
          setNotice({ variant: 'warning', title: 'Undone, except some fields', message });
          actions.addAlert({ type: 'warning', title: 'Undone, except some fields', message });
        } else {
          actions.addAlert({ type: 'success', message: doneMessage(action, answer) });
        }
        actions.refreshObjectProperties();
      }
    } catch (error) {
      const message = `enrichbridge could not be reached: ${error instanceof Error ? error.message : String(error)}`;
      setNotice({ variant: 'error', title: `${ACTION_LABELS[action]} failed`, message });
      actions.addAlert({ type: 'danger', title: `${ACTION_LABELS[action]} failed`, message });
    }
    await load();
    setBusy(null);
  };

  if (loaded.state === 'loading') return <LoadingSpinner label="Loading the enrichment" testId="loading" />;
  if (loaded.state === 'error') {
    return (
      <Flex direction="column" gap="sm">
        <Alert title="The enrichment could not be shown" variant="error" testId="load-error">
          {loaded.message}
        </Alert>
        <Button testId="retry" onClick={() => void load()}>
          Try again
        </Button>
      </Flex>
    );
  }
  const { view } = loaded;
  return (
    <Flex direction="column" gap="sm">
      <StatusLine view={view} />
      {notice === null ? null : (
        <Alert title={notice.title} variant={notice.variant} testId="notice">
          {notice.message}
        </Alert>
      )}
      <Summary view={view} />
      <ActionButtons view={view} busy={busy} onAction={(action) => void run(action)} />
      <Divider />
      <FieldTable view={view} />
    </Flex>
  );
}

function doneMessage(action: CardAction, answer: Extract<ActionAnswer, { ok: true }>): string {
  switch (action) {
    case 'enrich_now':
      return answer.queued === false ? 'An Enrich now of this contact was already waiting.' : 'Queued: the contact is enriched within seconds.';
    case 'undo':
      return 'Undone: every field is back to what it held before.';
    case 'exclude':
      return 'Excluded: this contact is no longer enriched.';
    case 'include':
      return 'Included again: this contact is enriched again when it changes or on request.';
  }
}

function StatusLine({ view }: { view: RecordView }) {
  const { status } = view;
  const by = view.excluded?.actor ?? view.undone?.actor ?? null;
  return (
    <Flex direction="column" gap="xs">
      <Flex direction="row" gap="xs" align="center">
        <StatusTag variant={STATUS_VARIANTS[status.value]} testId="status">
          {STATUS_LABELS[status.value]}
        </StatusTag>
        {view.environment === 'sandbox' ? <Text variant="microcopy">sandbox data</Text> : null}
      </Flex>
      {status.detail === null && status.reason === null ? null : (
        <Text variant="microcopy" testId="status-detail">
          {[status.detail, status.reason === null ? null : `(${status.reason})`].filter((part) => part !== null).join(' ')}
          {status.at === null ? '' : ` since ${when(status.at)}`}
          {by === null ? '' : `, by ${by.email ?? `user ${by.userId}`}`}
        </Text>
      )}
    </Flex>
  );
}

function Summary({ view }: { view: RecordView }) {
  return (
    <DescriptionList direction="column">
      <DescriptionListItem label="Net worth">
        <Text testId="net-worth">{netWorthBand(view) ?? '—'}</Text>
      </DescriptionListItem>
      <DescriptionListItem label="Giving">
        <Text testId="giving">{givingHeadline(view) ?? '—'}</Text>
      </DescriptionListItem>
      <DescriptionListItem label="Career">
        <Text testId="career">{careerHeadline(view) ?? '—'}</Text>
      </DescriptionListItem>
      <DescriptionListItem label="Match confidence">
        <Text testId="confidence">
          {`Household ${view.household.matched ? percent(view.household.confidence) : 'not matched'}, career ${view.career.matched ? percent(view.career.confidence) : 'not matched'}`}
        </Text>
      </DescriptionListItem>
      <DescriptionListItem label="Last enriched">
        <Text testId="last-enriched">{`${when(view.lastEnrichedAt)}${view.dataVersion === null ? '' : ` (data ${view.dataVersion})`}`}</Text>
      </DescriptionListItem>
    </DescriptionList>
  );
}

function ActionButtons({ view, busy, onAction }: { view: RecordView; busy: CardAction | null; onAction: (action: CardAction) => void }) {
  // Exclude and Include again are one switch: the one that applies is shown.
  const exclusion: CardAction = view.actions.include.allowed ? 'include' : 'exclude';
  const shownActions: CardAction[] = ['enrich_now', 'undo', exclusion];
  return (
    <Flex direction="column" gap="xs">
      {shownActions.map((action) => (
        <ActionButton key={action} action={action} availability={view.actions[action]} busy={busy} onAction={onAction} />
      ))}
    </Flex>
  );
}

function ActionButton(props: { action: CardAction; availability: ActionAvailability; busy: CardAction | null; onAction: (action: CardAction) => void }) {
  const { action, availability, busy, onAction } = props;
  return (
    <Flex direction="column" gap="flush">
      <Button
        testId={action}
        size="sm"
        variant={action === 'enrich_now' ? 'primary' : action === 'undo' || action === 'exclude' ? 'destructive' : 'secondary'}
        disabled={!availability.allowed || busy !== null}
        onClick={() => onAction(action)}
      >
        {busy === action ? `${ACTION_LABELS[action]}…` : ACTION_LABELS[action]}
      </Button>
      <Text variant="microcopy" testId={`${action}-note`}>
        {availability.allowed ? costLine(availability) : (availability.message ?? availability.reason ?? 'Not available now.')}
      </Text>
    </Flex>
  );
}

function FieldTable({ view }: { view: RecordView }) {
  if (view.fields.length === 0) return <Text testId="no-fields">No values of ours on this contact.</Text>;
  return (
    <Table bordered={true} testId="fields">
      <TableHead>
        <TableRow>
          <TableHeader>Field</TableHeader>
          <TableHeader>Value</TableHeader>
          <TableHeader>Written</TableHeader>
          <TableHeader>Replaced</TableHeader>
          <TableHeader>State</TableHeader>
        </TableRow>
      </TableHead>
      <TableBody>
        {view.fields.map((field) => (
          <TableRow key={field.property}>
            <TableCell>{propertyLabel(field.property)}</TableCell>
            <TableCell>{shown(field.value)}</TableCell>
            <TableCell>{when(field.writtenAt)}</TableCell>
            <TableCell>{shown(field.replaced)}</TableCell>
            <TableCell testId={`state-${field.property}`}>
              {field.state === 'edited'
                ? `${FIELD_STATE_LABELS.edited} (we wrote ${shown(field.written)})`
                : field.state === 'reused' && field.reusedFrom !== null
                  ? `${FIELD_STATE_LABELS.reused} from ${field.reusedFrom}`
                  : FIELD_STATE_LABELS[field.state]}
            </TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}
