// The console's script, run by the browser on every console page (it acts only on a backfill run's page).
/* global document, fetch, location */
// A backfill under way: its status every second; the page is loaded again when its phase changes
// (other buttons apply) or the work stops moving.
const run = document.getElementById('run');
if (run !== null && run.dataset.live === '1') {
  const show = (id, text) => {
    const el = document.getElementById(id);
    if (el !== null) el.textContent = text;
  };
  const tick = async () => {
    try {
      const res = await fetch(run.dataset.status, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
      if (res.ok) {
        const status = await res.json();
        if (status.state !== run.dataset.state || !status.live) {
          location.reload();
          return;
        }
        show('headline', status.headline);
        const bar = document.getElementById('progress');
        if (bar !== null && status.percent !== null) {
          bar.value = status.percent;
          bar.textContent = status.percent + '%';
        }
        show('n-enqueued', String(status.enqueued));
        show('n-enriched', String(status.enriched));
        show('n-waiting', String(status.waiting));
        show('n-failed', String(status.failed));
      }
    } catch {
      // A missed poll: the next one tries again.
    }
    setTimeout(tick, 1000);
  };
  setTimeout(tick, 1000);
}
