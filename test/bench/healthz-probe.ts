// A health checker in a process of its own, as a load balancer is: once started it prints `ready`,
// asks URL every INTERVAL_MS until its stdin ends, then prints the latencies (ms) as one JSON array.
// The benches run it beside their load, so what it measures is the server's answer, not the load
// generator's own event loop. Usage: healthz-probe.ts URL [INTERVAL_MS]
const [url, interval = '10'] = process.argv.slice(2);
if (url === undefined) throw new Error('usage: healthz-probe.ts URL [INTERVAL_MS]');
let asking = true;
process.stdin.on('end', () => {
  asking = false;
});
process.stdin.resume();
const latencies: number[] = [];
process.stdout.write('ready\n');
while (asking) {
  const started = performance.now();
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  await response.arrayBuffer();
  latencies.push(performance.now() - started);
  await new Promise((resolve) => setTimeout(resolve, Number(interval)));
}
process.stdout.write(`${JSON.stringify(latencies)}\n`);
