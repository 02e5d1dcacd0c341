// The web page in a real browser (Debian's chromium through playwright-core) against a real
// server (tests/e2e/web.sh starts it and stores the fixtures): every view walked the way a
// person would, the DOM and the flamegraph's drawn nodes (window.__spaaDebug) checked
// against the API's own answers, screenshots saved, and any console error, failed request
// or error answer fails the test.
//   node walk.mjs open    the open relay: services, profiles, flamegraph, top, sandwich,
//                         exports, diff, narrow window, keyboard, deep links, a missing
//                         profile and an empty selection (one message, nothing stale)
//   node walk.mjs token   a relay with a read token: the prompt, the token kept, downloads
// Environment: SERVER_URL, SHOTS (screenshot folder), LARGE_ID SMALL_ID SENTRY_ID OTLP_ID
// (open), TOKEN (token), WEB_NODE and CHROMIUM (tests/web/install.bash).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { launch, watch, api, flatten } from './lib.mjs';
import { fmtValue } from '../../server/web/util.js'; // the page's own way of writing a value

const BASE = process.env.SERVER_URL;
const SHOTS = process.env.SHOTS;
const mode = process.argv[2];
const problems = [];
const ROW = 18; // the flamegraph's row height (server/web/flame.js)
let step = '';

const t0 = Date.now();
function say(s) {
  step = s;
  console.log(`web: ${((Date.now() - t0) / 1000).toFixed(1)}s ${s}`);
}

async function shot(page, name) {
  await page.screenshot({ path: `${SHOTS}/${name}.png` });
}

// Wait until the main flamegraph has been drawn more than `after` times.
async function drawn(page, after) {
  await page.waitForFunction((n) => window.__spaaDebug && window.__spaaDebug.draws > n && window.__spaaDebug.nodeCount > 0, after);
}

const draws = (page) => page.evaluate(() => (window.__spaaDebug ? window.__spaaDebug.draws : 0));
// as JSON text: tens of thousands of objects cross from the page far faster so (x is null,
// not NaN, where a node was not drawn)
const nodes = async (page) => JSON.parse(await page.evaluate(() => JSON.stringify(window.__spaaDebug.nodes)));
// A diff tree is large (every path of both sides): summed up in the page.
const diffNodes = (page) => page.evaluate(() => {
  const n = window.__spaaDebug.nodes;
  return { root: n[0].total, up: n.filter((x) => x.delta > 0.001).length, down: n.filter((x) => x.delta < -0.001).length,
    matched: n.filter((x) => x.match).map((x) => x.name).slice(0, 1000) };
});
const hashParams = (page) => page.evaluate(() => Object.fromEntries(new URLSearchParams(location.hash.split('?')[1] || '')));

// The drawn nodes agree with the API's tree: same names, depths, totals, in pre-order.
function sameTree(got, json, what) {
  const want = flatten(json.tree);
  assert.equal(got.length, want.length, `${what}: node count`);
  const others = want.filter((x) => x.other).length;
  assert.equal(others, json.other_nodes, `${what}: the "other" nodes counted`);
  assert.equal(got.length, json.nodes + 1 + others, `${what}: the answer's nodes, the root and the "other" nodes`);
  for (let i = 0; i < want.length; i++) {
    assert.equal(got[i].name, i ? want[i].name : 'root', `${what}: node ${i} name`);
    assert.equal(got[i].depth, want[i].depth, `${what}: node ${i} depth`);
    assert.equal(got[i].total, want[i].total, `${what}: node ${i} total`);
    assert.equal(got[i].self, want[i].self, `${what}: node ${i} self`);
    assert.equal(got[i].other, want[i].other, `${what}: node ${i} an "other" node or not`);
  }
  assert.equal(got[0].total, json.total, `${what}: root total`);
}

// Page coordinates of a drawn node's middle.
async function nodePoint(page, node, selector = '.flame-pane .flame-canvas') {
  const box = await page.locator(selector).boundingBox();
  assert.ok(node.drawn, `node ${node.name} is drawn`);
  return [box.x + node.x + Math.min(node.w / 2, 30), box.y + node.depth * ROW + ROW / 2];
}

async function services(page) {
  say('services');
  const want = (await api(BASE, 'services')).services;
  await page.goto(BASE + '/');
  await page.waitForSelector('table.services tbody tr');
  const names = await page.$$eval('table.services tbody tr', (rs) => rs.map((r) => r.dataset.service));
  assert.deepEqual(names, want.map((s) => s.name), 'the services listed');
  for (const s of want) {
    const row = page.locator(`tr[data-service="${s.name}"]`);
    assert.equal(await row.locator('td').nth(1).innerText(), String(s.profiles), `${s.name}: profile count`);
    assert.equal(await row.locator('.chip').allInnerTexts().then((x) => x.join(',')), s.sources.join(','), `${s.name}: sources`);
  }
  for (const src of ['sentry', 'otlp', 'pprof']) {
    assert.ok(want.some((s) => s.sources.includes(src)), `a service from ${src}`);
  }
  await shot(page, 'services');
  await page.fill('#service-search', 'sho');
  await page.waitForFunction(() => document.querySelectorAll('table.services tbody tr').length === 1);
  assert.equal((await hashParams(page)).q, 'sho', 'the search is in the URL');
  assert.equal(await page.locator('table.services tbody tr').getAttribute('data-service'), 'shop');
}

async function profiles(page) {
  say('profiles of a service');
  await page.click('a.service-link:text-is("shop")');
  await page.waitForFunction(() => location.hash.startsWith('#/profiles'));
  assert.equal((await hashParams(page)).service, 'shop');
  const list = await api(BASE, 'profiles?service=shop');
  await page.waitForFunction((n) => document.querySelectorAll('table.profiles tbody tr').length === n, list.profiles.length);
  const ids = await page.$$eval('table.profiles tbody tr', (rs) => rs.map((r) => r.dataset.id));
  assert.deepEqual(ids, list.profiles.map((p) => p.id), 'newest first, as the API lists them');
  const tl = await page.evaluate(() => window.__spaaDebug.timeline);
  assert.equal(tl.profiles, list.profiles.length, 'the strip counts the selection');
  assert.equal(tl.counts.reduce((a, b) => a + b, 0), list.profiles.length, 'the strip bars sum to the selection');
  assert.equal(tl.counts.length, 60);
  await shot(page, 'profiles');
  // a label filter narrows the list and the strip
  say('label filter');
  await page.selectOption('#f-label-key', 'env');
  await page.waitForSelector('#f-label-value option[value="prod"]', { state: 'attached' });
  await page.selectOption('#f-label-value', 'prod');
  await page.click('button:text-is("Add label")');
  await page.waitForFunction(() => document.querySelectorAll('table.profiles tbody tr').length === 1);
  assert.equal((await hashParams(page)).label, 'env:prod');
  assert.equal(await page.locator('table.profiles tbody tr').getAttribute('data-id'), process.env.LARGE_ID);
  assert.equal(await page.evaluate(() => window.__spaaDebug.timeline.profiles), 1);
  // a relative time range: the fixtures' profiles are years old, so none is in the last hour
  say('time range');
  const asked = Date.now() * 1e6;
  await page.selectOption('#f-time', 'now-1h');
  await page.waitForFunction(() => window.__spaaDebug.timeline && window.__spaaDebug.timeline.profiles === 0 && location.hash.includes('from=now-1h'));
  assert.equal(await page.locator('table.profiles tbody tr').count(), 0);
  // the last hour's strip reaches the present, not the newest profile (here: none)
  const hour = await page.evaluate(() => window.__spaaDebug.timeline);
  assert.ok(hour.to >= asked && hour.to <= Date.now() * 1e6, `the strip ends now: ${hour.to} (asked at ${asked})`);
  assert.ok(hour.to - hour.from > 3599e9, `the strip spans the hour: ${hour.from} to ${hour.to}`);
  const prevLink = page.locator('a[data-action="previous-period"]');
  assert.ok((await prevLink.innerText()).includes('by received time'), 'on profile time the comparison says what it selects on');
  const prev = new URLSearchParams((await prevLink.getAttribute('href')).split('?')[1]);
  assert.deepEqual([prev.get('base.from'), prev.get('base.to'), prev.get('target.from'), prev.get('base.label'), prev.get('target.service'),
    prev.get('base.time'), prev.get('target.time')],
  ['now-2h', 'now-1h', 'now-1h', 'env:prod', 'shop', 'received', 'received'], 'the previous period of the last hour');
  await page.goBack();
  await page.waitForFunction(() => window.__spaaDebug.timeline.profiles === 1 && document.querySelectorAll('table.profiles tbody tr').length === 1);
  await page.goBack();
  await page.waitForFunction((n) => document.querySelectorAll('table.profiles tbody tr').length === n, list.profiles.length);

  say('a bar of the strip narrows to an absolute range');
  const strip = await page.locator('.strip-canvas').boundingBox();
  await page.mouse.click(strip.x + strip.width - 2, strip.y + strip.height - 3); // the newest start's bar
  await page.waitForFunction(() => location.hash.includes('to=') && document.querySelectorAll('table.profiles tbody tr').length === 1);
  const range = await hashParams(page);
  assert.ok(!isNaN(Date.parse(range.from)) && !isNaN(Date.parse(range.to)), `an absolute range: ${range.from} ${range.to}`);
  assert.equal(await page.locator('table.profiles tbody tr').getAttribute('data-id'), process.env.LARGE_ID, 'the profile of that bar');
  assert.equal(await page.inputValue('#f-time'), 'custom');
  assert.ok(await page.locator('.custom-range input').first().inputValue(), 'the range shown in the custom inputs');
  await page.goBack();
  await page.waitForFunction((n) => document.querySelectorAll('table.profiles tbody tr').length === n, list.profiles.length);

  say('totals in their units');
  await page.waitForSelector('.table-wrap[data-units="done"]', { state: 'attached' });
  const lp = list.profiles.find((x) => x.id === process.env.LARGE_ID);
  for (const m of ['cpu', 'samples']) {
    const unit = (await api(BASE, `profiles/${lp.id}/top?limit=1&metric=${m}`)).unit;
    const cell = await page.locator(`tr[data-id="${lp.id}"] td.events`).innerText();
    const want = `${m} ${unit === 'count' ? fmtValue(lp.events[0].totals[m]) : fmtValue(lp.events[0].totals[m], unit)}`;
    assert.ok(cell.includes(want), `the ${m} total in ${unit}: "${want}" in "${cell}"`);
  }
  assert.ok((await page.locator(`tr[data-id="${lp.id}"] td.events`).innerText()).includes(' s'), 'a time in seconds');

  await previousPeriod(page);

  say('paging');
  await page.goto(BASE + '/#/profiles?service=paged');
  await page.waitForFunction(() => document.querySelectorAll('table.profiles tbody tr').length === 50);
  const paged = await api(BASE, 'profiles?service=paged&limit=50');
  assert.deepEqual(await page.$$eval('table.profiles tbody tr', (rs) => rs.map((r) => r.dataset.id)), paged.profiles.map((p) => p.id));
  await page.click('.pager button.older');
  await page.waitForFunction(() => document.querySelectorAll('table.profiles tbody tr').length === 10);
  assert.equal((await hashParams(page)).cursor, paged.next_cursor, 'the cursor in the URL');
  const older = await api(BASE, `profiles?service=paged&limit=50&cursor=${paged.next_cursor}`);
  assert.deepEqual(await page.$$eval('table.profiles tbody tr', (rs) => rs.map((r) => r.dataset.id)), older.profiles.map((p) => p.id));
  assert.equal(await page.locator('.pager button.older').count(), 0, 'no page after the last');
  await page.click('.pager button:text-is("« Newest")');
  await page.waitForFunction(() => document.querySelectorAll('table.profiles tbody tr').length === 50);
  await page.goto(BASE + '/#/profiles?service=shop');
  await page.waitForFunction((n) => document.querySelectorAll('table.profiles tbody tr').length === n, list.profiles.length);
}

// The ids of the profiles one side of a diff link selects, as the page asks the API (the
// page says time=profile for a range without a time basis).
async function sideIds(sides, side) {
  const q = new URLSearchParams();
  for (const [k, v] of sides) if (k.startsWith(side + '.')) q.append(k.slice(side.length + 1), v);
  if ((q.has('from') || q.has('to')) && !q.has('time')) q.set('time', 'profile');
  q.set('limit', '1000');
  return (await api(BASE, 'profiles?' + q)).profiles.map((x) => x.id);
}

// "Compare with the previous period" puts no profile in both periods: the 60 "paged"
// profiles are back to back minute-long ranges of their own time, so a range on profile time
// starting inside one has a profile on its boundary, which the API (profiles overlapping a
// range) would select in both periods; on received time each profile is one instant.
async function previousPeriod(page) {
  say('the previous period on profile time: no profile in both');
  const at = (s) => new Date(s * 1000).toISOString();
  const from = at(1700000000 + 60 * 30 + 30), to = at(1700000000 + 60 * 40);
  await page.goto(`${BASE}/#/profiles?service=paged&from=${from}&to=${to}`);
  await page.waitForFunction(() => document.querySelectorAll('table.profiles tbody tr').length === 11);
  let link = page.locator('a[data-action="previous-period"]');
  let sides = new URLSearchParams((await link.getAttribute('href')).split('?')[1]);
  let [base, target] = [await sideIds(sides, 'base'), await sideIds(sides, 'target')];
  assert.deepEqual(base.filter((x) => target.includes(x)), [], `no profile in both periods: ${sides}`);

  say('the time basis switched to received time, and its previous period');
  // only the hash changes: the rows and strip of the range before stay until the new
  // answers come, so the strip's last answer is forgotten and the new one awaited
  await page.evaluate(() => { window.__spaaDebug.timeline = null; });
  await page.goto(`${BASE}/#/profiles?service=paged&from=now-1h`);
  await page.waitForFunction(() => window.__spaaDebug.timeline !== null &&
    !document.querySelector('[aria-busy="true"]'));
  assert.equal(await page.evaluate(() => window.__spaaDebug.timeline.profiles), 0, 'on profile time the last hour holds none');
  await page.selectOption('#f-time-basis', 'received');
  await page.waitForFunction(() => location.hash.includes('time=received') && window.__spaaDebug.timeline.profiles === 60);
  assert.equal(await page.locator('table.profiles tbody tr').count(), 50, 'received in the last hour: all 60, 50 a page');
  link = page.locator('a[data-action="previous-period"]');
  assert.equal(await link.innerText(), 'Compare with the previous period');
  sides = new URLSearchParams((await link.getAttribute('href')).split('?')[1]);
  [base, target] = [await sideIds(sides, 'base'), await sideIds(sides, 'target')];
  assert.deepEqual(base.filter((x) => target.includes(x)), [], 'no profile in both periods');
  assert.equal(base.length + target.length, 60, 'each profile of the selection in one period');
  assert.equal(target.length, 60, 'all received in this period');
}

async function flame(page) {
  say('open a profile');
  const id = process.env.LARGE_ID;
  const before = await draws(page);
  await page.click(`tr[data-id="${id}"] a.open-profile`);
  await drawn(page, before);
  assert.equal((await hashParams(page)).id, id);
  const json = await api(BASE, `profiles/${id}/flamegraph`);
  let got = await nodes(page);
  sameTree(got, json, 'google-pprof_large.cpu');
  const info = await page.locator('.info').innerText();
  const trimmedPct = ((json.trimmed_value / json.total) * 100).toFixed(2) + '%';
  assert.ok(json.trimmed_nodes > 0 && info.includes(trimmedPct), `the trimmed share ${trimmedPct} shown: ${info}`);
  const cutPct = ((json.cut_value / json.total) * 100).toFixed(2) + '%';
  assert.ok(json.cut_value ? info.includes(`${cutPct} of the total ends in`) : info.includes('every stack drawn to its leaf'), info);
  assert.ok(got[0].drawn && Math.abs(got[0].w - (await page.locator('.flame-pane .flame-canvas').boundingBox()).width) < 1, 'the root spans the canvas');
  await page.waitForSelector('.top-pane tbody tr');
  await shot(page, 'flamegraph');

  say('hover');
  const next = got.find((n) => n.name === 'main.next');
  await page.mouse.move(...(await nodePoint(page, next)));
  await page.waitForSelector('#tooltip:not([hidden])');
  // the first hover fetches the functions' source lines; the tooltip shows them when they come
  await page.waitForFunction(() => /large\.go:\d+/.test(document.getElementById('tooltip').innerText));
  const tip = await page.locator('#tooltip').innerText();
  const pct = ((next.total / json.total) * 100).toFixed(2) + '%';
  assert.ok(tip.includes('main.next') && tip.includes(pct) && /Self/.test(tip) && /Total/.test(tip), `tooltip: ${tip}`);

  say('an "other" node: what it stands for, and no function to focus on');
  const other = got.find((x) => x.other && x.drawn && x.w > 40);
  assert.ok(other, 'a drawn "other" node');
  await page.mouse.move(...(await nodePoint(page, other)));
  await page.waitForFunction(() => /lighter frames merged/.test(document.getElementById('tooltip').innerText));
  assert.ok(!/shift\+click/.test(await page.locator('#tooltip').innerText()), 'no shift+click offered');
  const hash = await page.evaluate(() => location.hash);
  await page.keyboard.down('Shift');
  await page.mouse.click(...(await nodePoint(page, other)));
  await page.keyboard.up('Shift');
  assert.equal(await page.evaluate(() => location.hash), hash, 'shift+click on "other" focuses no function named "other"');

  say('zoom');
  let n = await draws(page);
  await page.mouse.click(...(await nodePoint(page, next)));
  await drawn(page, n);
  assert.deepEqual(await page.evaluate(() => window.__spaaDebug.zoomPath), ['runtime.main', 'main.main', 'main.next']);
  assert.ok((await hashParams(page)).zoom.includes('main.next'), 'the zoom is in the URL');
  got = await nodes(page);
  const z = got.find((x) => x.name === 'main.next');
  const width = (await page.locator('.flame-pane .flame-canvas').boundingBox()).width;
  assert.ok(Math.abs(z.w - width) < 1, 'the zoomed node spans the canvas');
  assert.ok(!got.find((x) => x.name === 'time.now' && x.depth === 1).drawn, 'a node outside the zoom is hidden');
  assert.ok(got.filter((x) => x.depth > 3 && x.drawn).length > 0, 'the zoomed subtree is drawn');
  assert.equal(await page.locator('.crumb[aria-current="true"]').innerText(), 'main.next');
  await shot(page, 'zoomed');
  n = await draws(page);
  await page.click('button.reset-zoom');
  await drawn(page, n);
  assert.deepEqual(await page.evaluate(() => window.__spaaDebug.zoomPath), []);

  say('keyboard zoom');
  await page.focus('.flame-pane .flame-canvas');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  assert.deepEqual(await page.evaluate(() => window.__spaaDebug.zoomPath), ['runtime.main']);
  await page.keyboard.press('Escape');
  assert.deepEqual(await page.evaluate(() => window.__spaaDebug.zoomPath), []);

  say('search');
  await page.fill('#flame-search', 'time.');
  await page.waitForFunction(() => document.querySelector('.matches').dataset.count > 0);
  got = await nodes(page);
  let count = 0, value = 0, until = 0;
  const all = flatten(json.tree);
  const ends = endsOf(all);
  all.forEach((x, i) => {
    if (i && x.name.toLowerCase().includes('time.')) {
      count++;
      assert.ok(got[i].match, `node ${i} ${x.name} highlighted`);
      if (i >= until) {
        value += x.total;
        until = ends[i];
      }
    } else assert.ok(!got[i].match, `node ${i} ${x.name} not highlighted`);
  });
  const m = await page.locator('.matches').evaluate((e) => ({ count: Number(e.dataset.count), share: Number(e.dataset.share), text: e.innerText }));
  assert.equal(m.count, count, 'matches counted');
  assert.ok(Math.abs(m.share - value / json.total) < 1e-12, 'share of the matches');
  assert.ok(m.text.includes(((value / json.total) * 100).toFixed(2) + '%'), `share shown: ${m.text}`);
  assert.equal((await hashParams(page)).q, 'time.');
  await shot(page, 'search');
  await page.fill('#flame-search', '');
  await page.waitForFunction(() => document.querySelector('.matches').dataset.count === '');

  say('metric switch');
  n = await draws(page);
  await page.selectOption('#flame-metric', 'samples');
  await drawn(page, n);
  const samples = await api(BASE, `profiles/${id}/flamegraph?metric=samples`);
  sameTree(await nodes(page), samples, 'metric=samples');
  assert.equal(samples.total, 24029);

  say('max nodes');
  n = await draws(page);
  await page.selectOption('#flame-max', '500');
  await drawn(page, n);
  const five = await api(BASE, `profiles/${id}/flamegraph?metric=samples&max_nodes=500`);
  sameTree(await nodes(page), five, 'max_nodes=500');
  assert.ok((await page.locator('.info').innerText()).includes(((five.trimmed_value / five.total) * 100).toFixed(2) + '%'));

  say('max nodes 50,000: the graph drawn as deep as the deepest stack');
  n = await draws(page);
  await page.selectOption('#flame-max', '50000');
  await drawn(page, n);
  const big = await api(BASE, `profiles/${id}/flamegraph?metric=samples&max_nodes=50000`);
  assert.ok(big.nodes + big.other_nodes <= 50000 && big.nodes + big.other_nodes > 25000, `the budget used, and kept: ${big.nodes} + ${big.other_nodes}`);
  got = await nodes(page);
  sameTree(got, big, 'max_nodes=50000');
  const folded = await api(BASE, `profiles/${id}/collapsed?metric=samples`, { text: true });
  const deepest = Math.max(...folded.trim().split('\n').map((l) => l.slice(0, l.lastIndexOf(' ')).split(';').length));
  assert.equal(Math.max(...got.map((x) => x.depth)), deepest, 'as deep as the deepest stack');
  assert.ok(got.some((x) => x.drawn && x.depth >= 30), 'the graph drawn 30 frames deep and more, not stopped under main.next');
  assert.ok((await page.locator('.info').innerText()).includes('passes through one'));
  n = await draws(page);
  await page.goto(`${BASE}/#/flame?id=${id}`);
  await drawn(page, n);
  await page.waitForSelector('.top-pane tbody tr');
  return json;
}

// end[i]: the index after node i's subtree, of a pre-order list with depths.
function endsOf(list) {
  const ends = new Array(list.length).fill(list.length);
  const open = [];
  list.forEach((x, i) => {
    while (open.length && list[open[open.length - 1]].depth >= x.depth) ends[open.pop()] = i;
    open.push(i);
  });
  return ends;
}

async function top(page, json) {
  say('top table');
  const id = process.env.LARGE_ID;
  const t = await api(BASE, `profiles/${id}/top?limit=1000`);
  await page.click('.segmented button[data-show="top"]');
  assert.ok(await page.locator('.flame-pane').isHidden(), 'the flamegraph is hidden');
  assert.ok(await page.locator('.top-pane').isVisible(), 'the top table is shown');
  assert.equal((await hashParams(page)).show, 'top');
  const rows = page.locator('.top-pane tbody tr');
  assert.equal(await rows.count(), 300, 'the first 300 rows');
  assert.equal(await rows.first().locator('th').innerText(), t.top[0].name, 'sorted by self');
  await page.click('.top-pane button.sort[data-key="total"]');
  const byTotal = [...t.top].sort((a, b) => b.total - a.total);
  assert.equal(await rows.first().locator('th').innerText(), byTotal[0].name, 'sorted by total');
  assert.equal((await hashParams(page)).sort, 'total');
  await page.click('.top-pane button.sort[data-key="total"]');
  assert.equal((await hashParams(page)).dir, 'asc');
  await page.click('.top-pane button.sort[data-key="self"]');
  await shot(page, 'top');

  say('focus a function from the table: sandwich');
  const fn = t.top.find((r) => r.name === 'time.Now');
  const n = await draws(page);
  await page.click('.top-pane button.row-button:text-is("time.Now")');
  await drawn(page, n);
  await page.waitForFunction(() => document.querySelector('.sandwich').dataset.callersTotal);
  assert.equal((await hashParams(page)).fn, 'time.Now');
  const focused = await api(BASE, `profiles/${id}/flamegraph?focus=${encodeURIComponent('^time[.]Now$')}`);
  sameTree(await nodes(page), focused, 'focus=time.Now');
  const sand = await page.locator('.sandwich').evaluate((e) => [Number(e.dataset.callersTotal), Number(e.dataset.calleesTotal)]);
  assert.deepEqual(sand, [fn.total, fn.total], 'the sandwich halves add up to the function total');
  assert.equal(await page.locator('.sandwich canvas').count(), 2);

  say('the focused function\'s share, after a reload');
  await page.reload(); // the sandwich's answer may come before the graph's and the table's
  await drawn(page, 0);
  await page.waitForFunction(() => document.querySelector('.sandwich').dataset.callersTotal);
  await page.waitForSelector('.top-pane tbody tr');
  const share = ((fn.total / t.total) * 100).toFixed(2) + '%';
  const sandText = await page.locator('.sand-total').innerText();
  assert.ok(sandText.includes(`total ${fmtValue(fn.total, t.unit)} · ${share} of the profile`), `the sandwich: ${sandText}, want ${share}`);
  const line = await page.locator('.matches').innerText();
  assert.ok(line.includes(`${share} of the profile`), `the highlight line: ${line}`);
  await page.click('.segmented button[data-show="both"]');
  await page.locator('.sandwich').scrollIntoViewIfNeeded();
  await shot(page, 'sandwich');
  return json;
}

async function exportsAndCurl(page, context) {
  say('exports and copy as curl');
  const id = process.env.SMALL_ID;
  const n = await draws(page);
  await page.goto(`${BASE}/#/flame?id=${id}`);
  await drawn(page, n);
  await page.waitForSelector('.top-pane tbody tr');
  const links = await page.$$eval('.exports a.export', (as) => as.map((a) => [a.dataset.export, a.href]));
  assert.deepEqual(links.map((l) => l[0]), ['pprof', 'collapsed', 'speedscope', 'SPAA']);
  const types = { pprof: 'application/octet-stream', collapsed: 'text/plain', speedscope: 'application/json', SPAA: 'application/x-ndjson' };
  for (const [name, href] of links) {
    assert.ok(href.startsWith(`${BASE}/api/v1/profiles/${id}/`), `${name}: ${href}`);
    const r = await context.request.get(href);
    assert.equal(r.status(), 200, `${name} export`);
    assert.ok(r.headers()['content-type'].startsWith(types[name].split(';')[0]) || name === 'SPAA', `${name}: ${r.headers()['content-type']}`);
    assert.ok((await r.body()).length > 0);
  }
  await page.click('button.copy-curl');
  const cmd = await page.locator('output.curl').innerText();
  assert.ok(cmd.startsWith('curl ') && cmd.includes(`${BASE}/api/v1/profiles/${id}/flamegraph`), `curl: ${cmd}`);
  const out = JSON.parse(execFileSync('sh', ['-c', cmd], { encoding: 'utf8' }));
  const fn = await page.evaluate(() => window.__spaaDebug.nodes[0].total);
  assert.equal(out.total, fn, 'the curl command answers what the page drew');
}

async function diffPicked(page) {
  say('diff of two picked profiles');
  await page.goto(BASE + '/#/profiles?service=shop');
  await page.waitForSelector('table.profiles tbody tr');
  await page.check(`tr[data-id="${process.env.LARGE_ID}"] input[type="checkbox"]`);
  await page.check(`tr[data-id="${process.env.SMALL_ID}"] input[type="checkbox"]`);
  const n = await draws(page);
  await page.click('button.diff-picked');
  await drawn(page, n);
  const p = await hashParams(page);
  // the older by the profiles' own time is the base (each has one), not the first received
  const large = await api(BASE, `profiles/${process.env.LARGE_ID}`);
  const small = await api(BASE, `profiles/${process.env.SMALL_ID}`);
  assert.ok(large.start_at && small.start_at, 'both profiles have their own time');
  const older = large.start_at < small.start_at ? [large.id, small.id] : [small.id, large.id];
  assert.deepEqual([p.base, p.target], older, 'the older profile is the base');
  const d = await api(BASE, `diff?base=${p.base}&target=${p.target}&limit=1000&sort=share`);
  const rows = page.locator('.movers tbody tr');
  await page.waitForFunction(() => document.querySelectorAll('.movers tbody tr').length > 0);
  assert.equal(await rows.count(), Math.min(300, d.functions.length));
  const ranked = [...d.functions].sort((a, b) => Math.abs(b.delta_pct) - Math.abs(a.delta_pct));
  assert.equal(await rows.first().locator('th').innerText(), ranked[0].name, 'the largest mover first');
  // the status column says which way the share went, as the change column does
  const st = (await rows.first().locator('td').last().innerText()).trim();
  const want = ['new', 'gone'].includes(ranked[0].status) ? ranked[0].status
    : ranked[0].delta_pct > 0 ? 'share up' : ranked[0].delta_pct < 0 ? 'share down' : 'same';
  assert.equal(st, want, 'the status of the largest mover');
  const got = await diffNodes(page);
  assert.ok(Math.abs(got.root - 2) < 1e-9, 'the root is both sides\' shares');
  assert.ok(got.up > 0 && got.down > 0, 'red and green nodes');
  const folded = await api(BASE, `diff?base=${p.base}&target=${p.target}&format=collapsed`, { text: true });
  let bsum = 0, tsum = 0;
  for (const l of folded.split('\n')) {
    const f = l.split(' ');
    if (f.length < 3) continue;
    bsum += Number(f[f.length - 2]);
    tsum += Number(f[f.length - 1]);
  }
  assert.equal(bsum, d.base_total);
  assert.equal(tsum, d.target_total);
  const summary = await page.locator('.diff-summary').innerText();
  assert.ok(summary.includes(`profile ${p.base}`) && summary.includes(`profile ${p.target}`), summary);
  await shot(page, 'diff');
  say('a mover highlights its frames');
  await rows.first().locator('button').click();
  await page.waitForFunction(() => Number(document.querySelector('.matches').dataset.count) > 0);
  const hl = (await diffNodes(page)).matched;
  assert.ok(hl.length > 0 && hl.every((x) => x === ranked[0].name), 'only the mover\'s frames highlighted');
}

async function diffSelections(page) {
  say('diff of two selections through the form');
  await page.goto(BASE + '/#/diff');
  await page.waitForSelector('.side-base select[name="base.service"]');
  await page.selectOption('.side-base select[name="base.service"]', 'shop');
  await page.fill('.side-base input[name="base.labels"]', 'env:dev');
  await page.selectOption('.side-target select[name="target.service"]', 'shop');
  await page.fill('.side-target input[name="target.labels"]', 'env:prod');
  const n = await draws(page);
  await page.click('.diff-go button[type="submit"]');
  await drawn(page, n);
  const p = await hashParams(page);
  assert.deepEqual([p['base.service'], p['base.label'], p['target.label']], ['shop', 'env:dev', 'env:prod']);
  const d = await api(BASE, 'diff?base.service=shop&base.label=env:dev&target.service=shop&target.label=env:prod&limit=1000&sort=share');
  assert.ok(Math.abs((await diffNodes(page)).root - 2) < 1e-9);
  assert.equal(await page.locator('.movers tbody tr').first().locator('th').innerText(),
    [...d.functions].sort((a, b) => Math.abs(b.delta_pct) - Math.abs(a.delta_pct))[0].name);
}

async function merged(page) {
  say('merged flamegraph of a service');
  await page.goto(BASE + '/#/services');
  await page.waitForSelector('tr[data-service="shop"]');
  const n = await draws(page);
  await page.click('tr[data-service="shop"] a:text-is("Merged flamegraph")');
  await drawn(page, n);
  sameTree(await nodes(page), await api(BASE, 'flamegraph?service=shop'), 'merged shop');
  const links = await page.$$eval('.exports a.export', (as) => as.map((a) => a.dataset.export));
  assert.deepEqual(links, ['pprof', 'collapsed', 'speedscope'], 'SPAA is per profile');
}

async function otherSources(page) {
  for (const [name, id] of [['sentry', process.env.SENTRY_ID], ['otlp', process.env.OTLP_ID]]) {
    say(`a ${name} profile`);
    const n = await draws(page);
    await page.goto(`${BASE}/#/flame?id=${id}`);
    await drawn(page, n);
    sameTree(await nodes(page), await api(BASE, `profiles/${id}/flamegraph`), name);
    await page.waitForSelector('.top-pane tbody tr');
  }
}

async function deepLink(context) {
  say('a deep link restores the view');
  const page = await context.newPage();
  watch(page, problems);
  const id = process.env.SMALL_ID;
  const zoom = encodeURIComponent(JSON.stringify(['runtime.main', 'main.main']));
  await page.goto(`${BASE}/#/flame?id=${id}&q=pprof&zoom=${zoom}&fn=main.work&show=both&sort=total`);
  await drawn(page, 0);
  await page.waitForFunction(() => document.querySelector('.sandwich').dataset.callersTotal);
  assert.equal(await page.inputValue('#flame-search'), 'pprof');
  assert.ok((await nodes(page)).some((x) => x.match && x.name === 'runtime/pprof.Do'), 'the search restored');
  const work = (await api(BASE, `profiles/${id}/top`)).top.find((r) => r.name === 'main.work');
  assert.equal(await page.locator('.sandwich').evaluate((e) => Number(e.dataset.calleesTotal)), work.total);
  assert.deepEqual(await page.evaluate(() => window.__spaaDebug.zoomPath), ['runtime.main', 'main.main']);
  assert.ok(await page.locator('.focus-line').isVisible());
  assert.equal(await page.locator('.top-pane th[aria-sort="descending"] button').getAttribute('data-key'), 'total');
  await page.close();
}

// What a view shows after a failed or empty load: its error boxes, its "nothing matched"
// notes, the main graph's node count, the export links, the rows of its tables, its text.
const shown = (page) => page.evaluate(() => ({
  errors: [...document.querySelectorAll('main .error')].map((e) => e.innerText),
  nothing: [...document.querySelectorAll('main .nothing')].map((e) => e.innerText),
  nodes: window.__spaaDebug.nodeCount,
  exports: document.querySelectorAll('main .exports a.export, main .exports .export').length,
  rows: document.querySelectorAll('main tbody tr').length,
  controls: document.querySelectorAll('#flame-metric, #flame-event, #flame-search').length,
  text: document.querySelector('main').innerText,
}));

// Go to `hash` in the open page and wait until `ready` holds and the answers of every
// request matching `urls` (regular expressions) have come (a failed load makes several).
async function goHash(page, hash, ready, urls = []) {
  const answers = urls.map((re) => page.waitForResponse((r) => re.test(r.url())));
  await page.evaluate((h) => { location.hash = h; }, hash);
  await Promise.all(answers);
  await page.waitForFunction(ready);
  await page.waitForTimeout(300); // anything the last answers would still draw
}

// A profile id that does not exist, reached from a shown profile (the view must drop it),
// on a fresh load, and in a diff; a selection matching nothing; a bad time range. Each
// failure shows one error and nothing of what was shown before. Its own page: the 404s and
// 400s are expected here, and only those.
async function missing(context) {
  const page = await context.newPage();
  const seen = [];
  watch(page, seen);
  const ZERO = '00000000000000000000000000000000';
  const good = process.env.SMALL_ID;
  say('a missing profile after a shown one');
  await page.goto(`${BASE}/#/flame?id=${good}`);
  await drawn(page, 0);
  await page.waitForSelector('.top-pane tbody tr');
  await page.waitForSelector('#flame-metric option', { state: 'attached' });
  let s = await shown(page);
  assert.ok(s.nodes > 0 && s.exports === 4 && s.rows > 0 && /Total /.test(s.text), 'the good profile is shown first');
  const gone = (s, what) => {
    assert.equal(s.nodes, 0, `${what}: no flamegraph`);
    assert.equal(s.exports, 0, `${what}: no export links`);
    assert.equal(s.rows, 0, `${what}: no table rows`);
    assert.equal(s.controls, 0, `${what}: no metric, event or search controls`);
    assert.ok(!/Total |functions|nodes|null/.test(s.text), `${what}: no totals, function count or "null": ${s.text}`);
  };
  const oneError = (s, what) => {
    assert.equal(s.errors.length, 1, `${what}: exactly one error: ${JSON.stringify(s.errors)}`);
    assert.ok(s.errors[0].includes('404') && s.errors[0].includes(`no profile with id ${ZERO}`), `${what}: ${s.errors[0]}`);
    gone(s, what);
  };
  await goHash(page, `#/flame?id=${ZERO}`, () => document.querySelector('main .error'),
    [new RegExp(`/profiles/${ZERO}$`), new RegExp(`/profiles/${ZERO}/flamegraph`)]);
  oneError(await shown(page), 'after a shown profile');
  assert.ok(await page.locator('.flame-pane').isHidden() && await page.locator('.top-pane').isHidden(), 'no panes');
  await shot(page, 'missing-profile');

  say('a missing profile, loaded fresh');
  await page.reload();
  await page.waitForSelector('main .error');
  await page.waitForTimeout(500);
  oneError(await shown(page), 'a fresh load');

  say('a good profile after the missing one');
  await goHash(page, `#/flame?id=${good}`, () => window.__spaaDebug.nodeCount > 0 && document.querySelector('.top-pane tbody tr'));
  s = await shown(page);
  assert.ok(s.errors.length === 0 && s.exports === 4 && s.controls === 3, `the error gone, the view back: ${JSON.stringify(s.errors)}`);

  say('a selection that matches nothing');
  await goHash(page, '#/flame?service=shop', () => window.__spaaDebug.nodeCount > 0 && document.querySelector('.top-pane tbody tr'));
  // the relay answers 404 not_found for it: the page shows its note, not an error banner
  const emptyAnswer = page.waitForResponse((r) => /\/api\/v1\/flamegraph\?.*no-such-service/.test(r.url()));
  await goHash(page, '#/flame?service=no-such-service', () => document.querySelector('main .nothing'));
  const answer = await emptyAnswer;
  assert.equal(answer.status(), 404, 'the relay answers an empty selection with a 404');
  assert.equal((await answer.json()).detail, 'no stored profile matches the selection (service=no-such-service)');
  s = await shown(page);
  assert.equal(s.errors.length, 0, 'no error: an empty selection is an answer');
  assert.equal(s.nothing.length, 1, 'one note');
  assert.ok(/No stored profile matched this selection \(service no-such-service\)/.test(s.nothing[0]), s.nothing[0]);
  gone(s, 'an empty selection');
  await shot(page, 'empty-selection');
  await page.reload();
  await page.waitForSelector('main .nothing');
  await page.waitForTimeout(300);
  gone(await shown(page), 'an empty selection loaded fresh');

  say('a diff against a missing profile after a shown diff');
  await goHash(page, `#/diff?base=${process.env.LARGE_ID}&target=${good}`,
    () => window.__spaaDebug.nodeCount > 0 && document.querySelector('.movers tbody tr'));
  assert.equal((await shown(page)).exports, 3);
  await goHash(page, `#/diff?base=${good}&target=${ZERO}`, () => document.querySelector('main .error'), [/diff\?.*format=collapsed/, /diff\?.*limit=/]);
  s = await shown(page);
  oneError(s, 'a diff');
  assert.ok(await page.locator('.diff-pane').isHidden() && await page.locator('.movers').isHidden(), 'no diff graph or movers');

  say('a diff of two selections that match nothing');
  await goHash(page, '#/diff?base.service=no-such-service&target.service=nor-this', () => document.querySelector('main .nothing'));
  s = await shown(page);
  assert.equal(s.errors.length, 0);
  assert.ok(/Base: service no-such-service — no stored profile matched this selection/.test(s.text), s.text);
  assert.ok(/Target: service nor-this — no stored profile matched this selection/.test(s.text), s.text);
  assert.ok(s.nothing[0].includes('the base selection (service=no-such-service) and the target selection (service=nor-this)'), s.nothing[0]);
  gone(s, 'an empty diff');

  say('a diff whose target matches nothing, after a shown diff of selections');
  await goHash(page, '#/diff?base.service=shop&target.service=shop',
    () => window.__spaaDebug.nodeCount > 0 && document.querySelector('.movers tbody tr'));
  await goHash(page, '#/diff?base.service=shop&target.service=no-such-service', () => document.querySelector('main .nothing'),
    [/diff\?.*format=collapsed/, /diff\?.*limit=/]);
  s = await shown(page);
  assert.equal(s.errors.length, 0, `no error banner: ${JSON.stringify(s.errors)}`);
  assert.equal(s.nothing.length, 1, 'one note');
  assert.ok(s.nothing[0].includes('the target selection matches no stored profile (service=no-such-service)'), s.nothing[0]);
  assert.ok(/Target: service no-such-service — no stored profile matched this selection/.test(s.text), s.text);
  assert.ok(!/Base: service shop — no stored profile/.test(s.text), `the base matched: ${s.text}`);
  gone(s, 'a diff with an empty target');
  assert.ok(await page.locator('.diff-pane').isHidden() && await page.locator('.movers').isHidden(), 'no stale diff graph or movers');
  await shot(page, 'empty-diff-side');
  say('and swapped: the base matches nothing');
  await goHash(page, '#/diff?base.service=no-such-service&target.service=shop', () => document.querySelector('main .nothing'),
    [/diff\?.*format=collapsed/, /diff\?.*limit=/]);
  s = await shown(page);
  assert.equal(s.errors.length, 0);
  assert.ok(s.nothing[0].includes('the base selection matches no stored profile (service=no-such-service)'), s.nothing[0]);
  gone(s, 'a diff with an empty base');

  say('the diff form keeps what its lists do not hold');
  await goHash(page, '#/diff?base.service=no-such-service&base.event=cpu&target.service=shop&target.event=cpu&metric=cpu',
    () => document.querySelector('main .nothing'));
  await page.click('.diff-go button[type="submit"]');
  const kept = await hashParams(page);
  assert.deepEqual([kept['base.service'], kept['base.event'], kept['target.service'], kept['target.event'], kept.metric],
    ['no-such-service', 'cpu', 'shop', 'cpu', 'cpu'], 'Compare keeps a service no list holds, and the event');

  say('a bad time range after a shown list');
  await goHash(page, '#/profiles?service=shop', () => document.querySelector('table.profiles tbody tr') && window.__spaaDebug.timeline);
  await goHash(page, '#/profiles?service=shop&from=garbage', () => document.querySelector('main .error'), [/\/profiles\?.*garbage/, /timeline\?.*garbage/]);
  s = await shown(page);
  assert.equal(s.errors.length, 1, `one error: ${JSON.stringify(s.errors)}`);
  assert.ok(/^400: bad 'from'/.test(s.errors[0]), s.errors[0]);
  assert.equal(s.rows, 0, 'no rows of the previous list');
  assert.equal(await page.locator('.pager button').count(), 0, 'no pager');
  assert.equal(await page.evaluate(() => window.__spaaDebug.timeline), null, 'no strip');
  assert.ok(!/profiles in the selection/.test(s.text), s.text);

  // only the failures asked for: 404s of the missing id and of the selections that match
  // nothing, 400s of the bad range
  const expected = (p) => (/^HTTP 404: /.test(p) && (p.includes(ZERO) || p.includes('no-such-service') || p.includes('nor-this'))) ||
    (/^HTTP 400: /.test(p) && p.includes('garbage')) ||
    /^console error: Failed to load resource: the server responded with a status of (404|400)/.test(p);
  const others = seen.filter((p) => !expected(p));
  assert.deepEqual(others, [], 'no other problem on the page');
  assert.ok(seen.some((p) => p.startsWith('HTTP 404')), 'the 404s were met');
  await page.close();
}

async function layout(page) {
  say('1280x800 and a narrow window');
  let n = await draws(page);
  await page.goto(`${BASE}/#/flame?id=${process.env.SMALL_ID}`);
  await drawn(page, n);
  await page.waitForSelector('.top-pane tbody tr');
  const wide = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
  assert.ok(wide[0] <= wide[1], `no horizontal scroll at 1280: ${wide}`);
  const split = await page.evaluate(() => {
    const a = document.querySelector('.flame-pane').getBoundingClientRect(), b = document.querySelector('.top-pane').getBoundingClientRect();
    return [a.right <= b.left, a.top === b.top];
  });
  assert.deepEqual(split, [true, true], 'flamegraph and top table side by side');
  n = await draws(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction((k) => window.__spaaDebug.draws > k, n);
  const narrow = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth,
    document.querySelector('.flame-pane .flame-canvas').getBoundingClientRect().right]);
  assert.ok(narrow[0] <= narrow[1] && narrow[2] <= narrow[1], `no horizontal scroll at 390: ${narrow}`);
  await shot(page, 'narrow-flamegraph');
  await page.goto(`${BASE}/#/profiles?service=shop`);
  await page.waitForSelector('table.profiles tbody tr');
  const p = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
  assert.ok(p[0] <= p[1], `profiles: no page-wide horizontal scroll at 390: ${p}`);
  await shot(page, 'narrow-profiles');
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function keyboard(page) {
  say('keyboard');
  const n = await draws(page);
  await page.goto(`${BASE}/#/flame?id=${process.env.SMALL_ID}&show=both`);
  await drawn(page, n);
  await page.waitForSelector('.top-pane tbody tr');
  const seen = new Set();
  for (let i = 0; i < 40 && !seen.has('CANVAS'); i++) {
    await page.keyboard.press('Tab');
    seen.add(await page.evaluate(() => document.activeElement.tagName));
  }
  assert.ok(seen.has('A') && seen.has('SELECT') && seen.has('INPUT') && seen.has('CANVAS'), `Tab reaches links, settings, search, canvas: ${[...seen]}`);
  await page.keyboard.press('ArrowDown');
  await page.waitForSelector('#tooltip:not([hidden])');
  assert.ok((await page.locator('#tooltip').innerText()).includes('runtime.main'));
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'flame-search', '"/" focuses the search');
}

// The README's picture: a Go profile's flamegraph beside its top table, a tooltip shown.
async function readme(page) {
  say('the README screenshot');
  await page.goto(`${BASE}/#/services`); // a fresh flamegraph view, drawn once
  await page.waitForSelector('table.services tbody tr');
  const n = await draws(page);
  await page.goto(`${BASE}/#/flame?id=${process.env.SMALL_ID}`);
  await drawn(page, n);
  await page.waitForSelector('.top-pane tbody tr');
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  const got = await nodes(page);
  const deep = got.find((x) => x.drawn && x.name === 'main.slowFunction') || got[1];
  await page.mouse.move(...(await nodePoint(page, deep)));
  await page.waitForSelector('#tooltip:not([hidden])');
  await page.waitForFunction(() => !/loading/.test(document.getElementById('tooltip').innerText));
  await shot(page, 'readme');
}

async function open() {
  const browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(120000); // a safety net: a sanitizer build answers slowly
  const page = await context.newPage();
  watch(page, problems);
  await services(page);
  await profiles(page);
  const json = await flame(page);
  await top(page, json);
  await exportsAndCurl(page, context);
  await diffPicked(page);
  await diffSelections(page);
  await merged(page);
  await otherSources(page);
  await deepLink(context);
  await missing(context);
  await layout(page);
  await keyboard(page);
  await readme(page);
  await browser.close();
}

async function token() {
  const T = process.env.TOKEN;
  const browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  context.setDefaultTimeout(120000); // a safety net: a sanitizer build answers slowly
  const page = await context.newPage();
  watch(page, problems);
  say('token prompt');
  await page.goto(BASE + '/');
  await page.waitForSelector('#token-dialog[open]');
  await shot(page, 'token');
  say('the prompt closed without a token, and opened again');
  await page.keyboard.press('Escape');
  await page.waitForSelector('main button:text-is("Enter a token")');
  assert.ok(!(await page.locator('#token-dialog').evaluate((d) => d.open)));
  await page.click('main button:text-is("Enter a token")');
  await page.waitForSelector('#token-dialog[open]');
  await page.fill('#token-dialog input', 'wrong');
  await page.click('#token-dialog button[type="submit"]');
  await page.waitForFunction(() => /refused/.test(document.querySelector('.token-note').textContent));
  assert.ok(await page.locator('#token-dialog').evaluate((d) => d.open), 'a wrong token keeps the prompt');
  await page.fill('#token-dialog input', T);
  await page.click('#token-dialog button[type="submit"]');
  await page.waitForSelector('table.services tbody tr');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('spaa-relay.read-token')), T);
  assert.ok(await page.locator('#token-button').isVisible());
  say('the token is kept for the tab');
  await page.reload();
  await page.waitForSelector('table.services tbody tr');
  assert.ok(!(await page.locator('#token-dialog').evaluate((d) => d.open)), 'no prompt with a stored token');
  say('a profile and a download with the token');
  const list = await api(BASE, 'profiles', { token: T });
  const id = list.profiles[0].id;
  await page.goto(`${BASE}/#/flame?id=${id}`);
  await drawn(page, 0);
  sameTree(await nodes(page), await api(BASE, `profiles/${id}/flamegraph`, { token: T }), 'with a token');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('.exports a[data-export="pprof"]')]);
  const path = await dl.path();
  assert.ok(execFileSync('sh', ['-c', `gzip -dc '${path}' | wc -c`], { encoding: 'utf8' }).trim() > 0, 'the pprof download');
  await page.click('button.copy-curl');
  assert.ok((await page.locator('output.curl').innerText()).includes('Authorization: Bearer $SPAA_READ_TOKEN'), 'curl names the token, never writes it');
  await browser.close();
}

mkdirSync(SHOTS, { recursive: true });
try {
  if (mode === 'open') await open();
  else if (mode === 'token') await token();
  else throw new Error('usage: walk.mjs open|token');
} catch (e) {
  console.error(`FAIL web (${mode}) at "${step}": ${e.stack || e}`);
  if (problems.length) console.error('page problems so far:\n  ' + problems.join('\n  '));
  process.exit(1);
}
if (problems.length) {
  console.error(`FAIL web (${mode}): the page met ${problems.length} problems:\n  ` + problems.join('\n  '));
  process.exit(1);
}
console.log(`web (${mode}): every step passed, screenshots in ${SHOTS}`);
