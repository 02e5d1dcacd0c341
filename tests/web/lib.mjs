// What the browser test and the benchmark share: playwright-core from the build dir's
// node_modules (tests/web/install.bash), Debian's chromium, a watch on a page's console and
// requests, and the API read from Node for the expected values.
import { createRequire } from 'node:module';

export function playwright() {
  if (!process.env.WEB_NODE) throw new Error('WEB_NODE must name the folder of node_modules');
  const require = createRequire(process.env.WEB_NODE + '/package.json');
  return require('playwright-core');
}

export async function launch() {
  const { chromium } = playwright();
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    // as root in a container: no sandbox; /dev/shm may be small
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

// Record on `problems` every console error or warning, uncaught page error, failed request
// and answer of 400 or more that the page met.
export function watch(page, problems) {
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
}

// GET a JSON (or text) answer of the API from Node.
export async function api(base, path, { token, text } = {}) {
  const r = await fetch(base + '/api/v1/' + path, { headers: token ? { Authorization: 'Bearer ' + token } : {} });
  if (!r.ok) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
  return text ? r.text() : r.json();
}

// The API's nested flamegraph tree in pre-order, as the page lays it out ("other": a node
// standing for lighter frames merged, which carries "merged").
export function flatten(tree) {
  const out = [];
  const walk = (n, depth) => {
    out.push({ name: n.name, depth, total: n.total, self: n.self, other: n.merged !== undefined });
    for (const c of n.children || []) walk(c, depth + 1);
  };
  walk(tree, 0);
  return out;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
