// Navigation to a drawn flamegraph in headless chromium, against the API's own time for the
// same answer (see web_flame.sh). Arguments: triples of label, the page's hash route and the
// API path it fetches for the graph. Each round opens a fresh browser context (nothing
// cached) and waits for the first draw (window.__spaaDebug.drawnAt, ms since navigation
// start); the API is timed from Node over a kept-alive connection (request to the last byte,
// then JSON.parse). Medians of ROUNDS rounds are printed with page / API as the ratio.
import { mkdirSync } from 'node:fs';
import { launch, median } from '../tests/web/lib.mjs';

const BASE = process.env.SERVER_URL;
const ROUNDS = Number(process.env.ROUNDS || 7);
const OUT = process.env.OUT;
mkdirSync(OUT, { recursive: true });

async function apiTime(path) {
  const t0 = performance.now();
  const r = await fetch(`${BASE}/api/v1/${path}`, { headers: { 'Accept-Encoding': 'gzip' } });
  const json = JSON.parse(await r.text());
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return [performance.now() - t0, json];
}

async function pageTime(browser, route, path, shot) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(BASE + '/' + route);
  await page.waitForFunction(() => window.__spaaDebug && window.__spaaDebug.draws > 0, null, { timeout: 120000 });
  const r = await page.evaluate((p) => {
    const d = window.__spaaDebug;
    const fetches = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/v1/' + p));
    const f = fetches[0];
    const at = (part) => {
      const e = performance.getEntriesByType('resource').find((x) => x.name.includes(part));
      return e ? e.responseEnd : NaN;
    };
    return { drawn: d.drawnAt, nodes: d.nodeCount, draw: d.main.drawMs, modules: at('view_diff.js'), access: at('/api/v1/access'),
      html: performance.getEntriesByType('navigation')[0].responseEnd,
      fetchStart: f ? f.startTime : NaN, fetchEnd: f ? f.responseEnd : NaN };
  }, path.split('?')[0]);
  if (shot) await page.screenshot({ path: `${OUT}/${shot}.png` });
  // the top table is asked for once the graph is drawn: let it finish, or its work on the
  // server would overlap the next round's
  await page.waitForSelector('.top-pane tbody tr', { timeout: 120000 });
  await context.close();
  if (errors.length) throw new Error('page errors: ' + errors.join('; '));
  return r;
}

// The page already open (on the services view, its files loaded): from the hash change to
// the first draw of the graph, in the page's own clock.
async function warmTime(page, route) {
  await page.goto(BASE + '/#/services');
  await page.waitForSelector('table.services tbody tr');
  return page.evaluate(async (r) => {
    const d = window.__spaaDebug || { draws: 0 };
    const before = d.draws;
    const t0 = performance.now();
    location.hash = r.slice(1);
    while (!window.__spaaDebug || window.__spaaDebug.draws === before) await new Promise((ok) => setTimeout(ok, 2));
    const ms = window.__spaaDebug.drawnAt - t0;
    while (!document.querySelector('.top-pane tbody tr')) await new Promise((ok) => setTimeout(ok, 10));
    return ms;
  }, route);
}

const browser = await launch();
const warmPage = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
const args = process.argv.slice(2);
for (let k = 0; k < args.length; k += 3) {
  const [label, route, path] = args.slice(k, k + 3);
  await apiTime(path); // warm: the store's pages and caches, as the page's rounds find them
  const api = [], page = [], start = [], fetchMs = [], draw = [], html = [], modules = [], access = [], warm = [];
  let nodes = 0, json;
  for (let i = 0; i < ROUNDS; i++) {
    let t;
    [t, json] = await apiTime(path);
    api.push(t);
    const r = await pageTime(browser, route, path, i === 0 ? `bench-${k / 3}` : null);
    page.push(r.drawn);
    start.push(r.fetchStart);
    fetchMs.push(r.fetchEnd - r.fetchStart);
    draw.push(r.draw);
    html.push(r.html);
    modules.push(r.modules);
    access.push(r.access);
    nodes = r.nodes;
    warm.push(await warmTime(warmPage, route));
  }
  const a = median(api), p = median(page);
  console.log(`web_flame: ${label}: ${json.nodes} nodes and ${json.other_nodes} "other" drawn (${nodes} with the root), ` +
    `${json.trimmed_nodes} nodes of the whole tree not under their own path`);
  console.log(`  API flamegraph answer (floor)  ${a.toFixed(1)} ms   (min ${Math.min(...api).toFixed(1)})`);
  console.log(`  page navigation -> drawn       ${p.toFixed(1)} ms   (min ${Math.min(...page).toFixed(1)})   ratio ${(p / a).toFixed(2)}  (a fresh browser context: nothing cached)`);
  const w = median(warm);
  console.log(`  page open, link -> drawn       ${w.toFixed(1)} ms   (min ${Math.min(...warm).toFixed(1)})   ratio ${(w / a).toFixed(2)}  (the page already loaded)`);
  console.log(`    page at ${median(html).toFixed(1)} ms, modules at ${median(modules).toFixed(1)}, access checked at ${median(access).toFixed(1)}, ` +
    `graph asked at ${median(start).toFixed(1)} and answered in ${median(fetchMs).toFixed(1)}, drawn in ${median(draw).toFixed(1)}`);
}
await browser.close();
