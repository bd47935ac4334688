// The console's stylesheet and script, served from /console/assets (no CDN, nothing inline: the
// Content-Security-Policy allows only these). The script, on a backfill run's page, polls the run's
// status while it moves; every page reads the same without it (a reload shows the same progress).
// Times are written by the server in UTC (pages.ts, utcText) and left as they are.

/** Bar widths as classes (w0 … w100): an inline style would need 'unsafe-inline'. */
const BAR_WIDTHS = Array.from({ length: 101 }, (_, i) => `.w${i}{width:${i}%}`).join('');

export const CONSOLE_CSS = `
:root{color-scheme:light;--ink:#1d2733;--muted:#55606e;--line:#d5dbe3;--accent:#0b5cad;--ok:#1a7f37;--warn:#9a6700;--bad:#b42318;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;overflow-wrap:anywhere;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header{background:#fff;border-bottom:1px solid var(--line);padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between}
header .who{color:var(--muted)}
nav a{margin-right:1rem}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
a{color:var(--accent)}
a:focus,button:focus{outline:3px solid #f2b600;outline-offset:2px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.75rem}
.card{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.75rem 1rem}
.card dt{color:var(--muted);font-size:.875rem}
.card dd{margin:0 0 .5rem;font-weight:600}
.status-active{color:var(--ok)}.status-paused{color:var(--warn)}.status-disabled{color:var(--bad)}
table{width:100%;border-collapse:collapse;background:#fff;border:1px solid var(--line)}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.875rem;color:var(--muted)}
.scroll{overflow-x:auto}
.bar{display:block;height:.6rem;background:var(--accent);border-radius:2px;min-width:1px}
.bar.w0{background:transparent}
button{font:inherit;padding:.35rem .9rem;border:1px solid var(--ink);background:#fff;color:var(--ink);border-radius:4px;cursor:pointer}
.signin{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.75rem}
a.button{display:inline-block;font-weight:600;padding:.5rem 1rem;border:1px solid var(--ink);background:#fff;color:var(--ink);border-radius:4px;text-decoration:none}
.notice{background:#fff;border:1px solid var(--line);border-left:4px solid var(--accent);padding:.75rem 1rem;border-radius:4px}
.notice.bad{border-left-color:var(--bad)}
.muted{color:var(--muted)}
fieldset{border:1px solid var(--line);border-radius:6px;background:#fff;margin:0 0 1rem;padding:.5rem 1rem}
legend{font-weight:600;padding:0 .25rem}
.check{display:flex;gap:.5rem;align-items:flex-start;margin:.3rem 0}
.check input{margin-top:.35rem}
input[type=text]{font:inherit;padding:.3rem .5rem;border:1px solid var(--muted);border-radius:4px;max-width:10rem}
[aria-invalid=true]{border-color:var(--bad)!important;outline:2px solid var(--bad)}
.error{color:var(--bad);margin:.25rem 0 0;font-weight:600}
.fields{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:1rem}
.actions{display:flex;flex-wrap:wrap;gap:1rem;align-items:center}
code{font-size:.8rem;color:var(--muted);overflow-wrap:anywhere}
button.danger{border-color:var(--bad);color:var(--bad)}
.filters{display:flex;flex-wrap:wrap;gap:0 1rem;align-items:flex-end}
.filters p{margin:.25rem 0}
select,input[type=date]{font:inherit;padding:.3rem .5rem;border:1px solid var(--muted);border-radius:4px}
nav a{margin-right:1rem}
.outcome-failed{color:var(--bad)}
progress{width:100%;max-width:32rem;height:1.2rem}
textarea{font:.9rem/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;width:100%;max-width:44rem;padding:.4rem;border:1px solid var(--muted);border-radius:4px}
pre{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.75rem;overflow-x:auto;font-size:.85rem}
@media (max-width:40rem){th.opt,td.opt{display:none}main{padding:.75rem}}
${BAR_WIDTHS}
`;

export const CONSOLE_JS = `
// A backfill under way: its status every second; the page is loaded again when its phase changes
// (other buttons apply) or the work stops moving.
const run = document.getElementById('run');
if (run !== null && run.dataset.live === '1') {
  const show = (id, text) => { const el = document.getElementById(id); if (el !== null) el.textContent = text; };
  const tick = async () => {
    try {
      const res = await fetch(run.dataset.status, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
      if (res.ok) {
        const status = await res.json();
        if (status.state !== run.dataset.state || !status.live) { location.reload(); return; }
        show('headline', status.headline);
        const bar = document.getElementById('progress');
        if (bar !== null && status.percent !== null) { bar.value = status.percent; bar.textContent = status.percent + '%'; }
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
`;
