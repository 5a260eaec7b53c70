// The dashboard in a real browser: a coordinator and one worker on loopback
// with a fresh SQLite file, the quick sweep (examples/quick.yaml) submitted
// with the CLI, then Debian's Chromium (driven by playwright-core) opens the
// sweep's page, waits for live progress to reach done, and checks the heat
// map (one cell per configuration, hover tooltip, click opens the job), the
// results table (one row per job, sort, filter), every analysis drawn, the
// workers page (fingerprint, roofs, stack doctor), fleet goodput, the JSON
// API's errors, and that another site's page (or a DNS-rebound name) can
// neither drive the API nor read it. Screenshots go to $DASHBOARD_TEST_OUT.
//
//   node dashboard_test.cjs BIN_DIR SOURCE_DIR OUT_DIR
'use strict';

const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const assert = require('assert');
const { chromium } = require('playwright-core');

const [binDir, sourceDir, outDir] = process.argv.slice(2);
if (!binDir || !sourceDir || !outDir) {
  console.error('usage: node dashboard_test.cjs BIN_DIR SOURCE_DIR OUT_DIR');
  process.exit(2);
}
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'paradnn-dashboard-'));
const children = [];

function start(name, args) {
  const log = fs.openSync(path.join(outDir, `${name}.log`), 'w');
  const child = spawn(path.join(binDir, name), args, { stdio: ['ignore', log, log] });
  children.push(child);
  return child;
}

async function waitForFile(file, seconds) {
  for (let i = 0; i < seconds * 10; i++) {
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim()) return fs.readFileSync(file, 'utf8').trim();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${file} did not appear within ${seconds} s`);
}

function cli(address, ...args) {
  return execFileSync(path.join(binDir, 'paradnn'), ['--coordinator', address, ...args], { encoding: 'utf8' });
}

async function checkApiErrors(base) {
  const bad = await fetch(`${base}/api/v1/sweeps/abc`);
  assert.strictEqual(bad.status, 400);
  const badJson = await bad.json();
  assert.strictEqual(badJson.error.code, 'INVALID_ARGUMENT');
  assert.match(badJson.error.message, /sweep 'abc' is not a sweep id/);
  const missing = await fetch(`${base}/api/v1/sweeps/999999`);
  assert.strictEqual(missing.status, 404);
  const body = await fetch(`${base}/api/v1/analyze`,
    { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"heatmap": {"nope": 1}}' });
  assert.strictEqual(body.status, 400);
  assert.match((await body.json()).error.message, /nope/);
  // What another site's page can send without asking (text/plain) runs nothing.
  const plain = await fetch(`${base}/api/v1/analyze`, { method: 'POST', body: '{"heatmap": {"nope": 1}}' });
  assert.strictEqual(plain.status, 415);
  const query = await fetch(`${base}/api/v1/fleet?sweeps=1`);
  assert.strictEqual(query.status, 400);
  assert.match((await query.json()).error.message, /'sweeps' is not one of: sweep, window_seconds/);
  const method = await fetch(`${base}/api/v1/sweeps`, { method: 'POST', body: '{}' });
  assert.strictEqual(method.status, 405);
}

// Another site's page in the same browser, and the dashboard reached
// through a name of another site's that resolves to loopback (DNS
// rebinding, played by --host-resolver-rules): nothing it sends runs and
// nothing it asks for can be read.
async function checkForeignPages(browser, base) {
  const http = require('http');
  const form = '<form id="f" method="POST" enctype="text/plain" target="sink">' +
    '<input name=\'{"boxplot": {"x": "node", "metric": "step_time", "ignore": "\' value=\'"}}\'></form>' +
    '<iframe name="sink"></iframe>';
  const elsewhere = http.createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html' });
    response.end(`<!doctype html><title>elsewhere</title>${form}`);
  });
  await new Promise((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const seen = [];
    page.on('response', (r) => {
      if (r.url().startsWith(base)) seen.push({ method: r.request().method(), path: new URL(r.url()).pathname, status: r.status() });
    });
    await page.goto(`http://127.0.0.1:${elsewhere.address().port}/`);
    const outcome = await page.evaluate(async (base) => {
      const tried = {};
      const attempt = async (name, request) => {
        try {
          const response = await request();
          tried[name] = response.type === 'opaque' ? 'opaque' : `read ${response.status}`;
        } catch (e) {
          tried[name] = 'blocked';
        }
      };
      const analysis = '{"boxplot": {"x": "node", "metric": "step_time"}}';
      await attempt('simple', () => fetch(`${base}/api/v1/analyze`, { method: 'POST', mode: 'no-cors', body: analysis }));
      await attempt('json', () => fetch(`${base}/api/v1/analyze`,
        { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: analysis }));
      await attempt('read', () => fetch(`${base}/api/v1/sweeps`));
      return tried;
    }, base);
    const formPosted = page.waitForResponse((r) => r.url() === `${base}/api/v1/analyze` && r.request().method() === 'POST' &&
      (r.request().headers()['content-type'] || '').startsWith('text/plain') && r.frame() !== page.mainFrame());
    await page.evaluate((base) => {
      const f = document.getElementById('f');
      f.action = `${base}/api/v1/analyze`;
      f.submit();
    }, base);
    await formPosted;
    console.log(`another site's page: ${JSON.stringify(outcome)}; the coordinator answered ` +
      seen.map((s) => `${s.method} ${s.path} ${s.status}`).join(', '));
    assert.strictEqual(outcome.json, 'blocked', 'a JSON POST needs a preflight the API does not grant');
    assert.strictEqual(outcome.read, 'blocked', 'no CORS header lets another origin read');
    const posts = seen.filter((s) => s.method === 'POST');
    assert.ok(posts.length >= 2, `the simple POST and the form reached the coordinator: ${JSON.stringify(seen)}`);
    for (const s of seen) assert.ok(s.status === 403 || s.status === 405 || s.status === 415, `${s.method} ${s.path}: ${s.status}`);
    // What the browser sent for the read, with its Origin (a failed CORS
    // read shows the page no answer): refused by the coordinator too.
    const read = await fetch(`${base}/api/v1/sweeps`, { headers: { Origin: `http://127.0.0.1:${elsewhere.address().port}` } });
    assert.strictEqual(read.status, 403, 'the read is refused by its Origin, not only by the browser');

    // DNS rebinding: rebind.test resolves to the coordinator's loopback
    // address, so its pages would be same-origin with the API.
    const port = new URL(base).port;
    for (const target of ['/', '/api/v1/sweeps']) {
      const response = await page.goto(`http://rebind.test:${port}${target}`);
      assert.strictEqual(response.status(), 403, target);
      assert.match(await response.text(), /Host 'rebind\.test:\d+' is not a loopback address/);
    }
  } finally {
    await context.close();
    elsewhere.close();
  }
}

// The sweep page, opened while the sweep ran: its progress moved on its own.
async function watchProgress(page, base, sweepId) {
  await page.goto(`${base}/#/sweep/${sweepId}`);
  await page.waitForSelector('dd[data-key="done"]', { timeout: 30000 });
  await page.evaluate(() => {
    window.seenProgress = new Set();
    setInterval(() => {
      const done = document.querySelector('dd[data-key="done"]');
      if (done) window.seenProgress.add(done.textContent);
    }, 100);
  });
  await page.waitForSelector('dl.facts[data-state="done"]', { timeout: 600000 });
  // The last value as the page shows it now: the 100 ms sampler may not have
  // run between the final update and the done state.
  const seen = await page.evaluate(() => {
    window.seenProgress.add(document.querySelector('dd[data-key="done"]').textContent);
    return [...window.seenProgress];
  });
  assert.ok(seen.length >= 2, `progress updated without a reload (seen: ${seen})`);
  assert.ok(seen.includes('12/12'), `progress reached 12/12 (seen: ${seen})`);
  return seen;
}

async function checkSweepPage(page, sweepId, rows) {
  const configurations = new Set(rows.map((r) => `${r.config.params.node}x${r.config.params.batch}`));
  await page.waitForSelector('#heatmap-chart svg .cells_marks path', { timeout: 60000 });
  const cells = await page.locator('#heatmap-chart svg .cells_marks path').count();
  assert.strictEqual(cells, configurations.size, 'one heat-map cell per configuration');
  assert.strictEqual(await page.locator('#results tbody tr').count(), rows.length, 'one table row per job');
  // Hover: the tooltip names the cell's configuration and its statistics.
  const cell = page.locator('#heatmap-chart svg .cells_marks path').first();
  await cell.hover();
  const tooltip = page.locator('#vg-tooltip-element.visible');
  await tooltip.waitFor({ timeout: 10000 });
  const tip = await tooltip.innerText();
  assert.match(tip, /node=\d+ batch=\d+/);
  assert.match(tip, /1 ok, 0 OOM/);
  assert.match(tip, /examples\/s|ex\/s/);
  fs.writeFileSync(path.join(outDir, 'tooltip.txt'), tip);
  await page.screenshot({ path: path.join(outDir, 'dashboard-sweep.png'), fullPage: true });
  // Every analysis drew a chart (or said why it could not).
  for (const id of ['sensitivity', 'roofline', 'boxplot']) {
    await page.waitForSelector(`#${id}-chart svg, #${id}-chart .error`, { timeout: 60000 });
    assert.strictEqual(await page.locator(`#${id}-chart .error`).count(), 0, `${id} drew without an error`);
  }
  // Sort by examples/s, descending, then filter to one batch size.
  const header = page.locator('#results th[data-column="examples_per_sec"]');
  await header.click();
  await header.click();
  const column = await page.locator('#results th').evaluateAll((ths) => ths.findIndex((t) => t.dataset.column === 'examples_per_sec'));
  const values = await page.locator(`#results tbody tr td:nth-child(${column + 1})`).allInnerTexts();
  assert.strictEqual(values.length, rows.length);
  const expected = rows.map((r) => r.measurement.examples_per_sec).sort((a, b) => b - a);
  assert.strictEqual(values[0], fmtCount(expected[0]), 'sorted descending by ex/s');
  await page.fill('#results-filter', 'batch=64');
  assert.strictEqual(await page.locator('#results tbody tr').count(), rows.filter((r) => r.config.params.batch === '64').length);
  // Click a cell: its job opens.
  await cell.click();
  await page.waitForSelector('text=Measurement', { timeout: 10000 });
  assert.match(page.url(), /#\/sweep\/\d+\/job\/\d+$/);
  await page.waitForSelector('#steps-chart svg', { timeout: 10000 });
}

// The CLI's HumanCount, to compare a cell with the API's number.
function fmtCount(value) {
  const suffix = ['', 'k', 'M', 'G'];
  let unit = 0;
  while (Math.abs(value) >= 999.5 && unit + 1 < suffix.length) { value /= 1000; unit += 1; }
  const a = Math.abs(value);
  const s = a >= 99.95 ? value.toFixed(0) : a >= 9.995 ? value.toFixed(1) : a >= 0.9995 ? value.toFixed(2) : value.toFixed(3);
  return unit === 0 && value === Math.floor(value) ? value.toFixed(0) : s + suffix[unit];
}

async function checkWorkersAndFleet(page, base, address) {
  await page.goto(`${base}/#/workers`);
  await page.waitForSelector('#workers tbody tr', { timeout: 20000 });
  assert.ok(await page.locator('.platform[data-fingerprint]').count() >= 1, 'a platform card');
  const platform = await page.locator('.platform').first().innerText();
  assert.match(platform, /fingerprint/);
  assert.match(platform, /Roofs \(calibrated\)/);
  assert.match(platform, /matmul\s+float32/);
  assert.match(platform, /Stack doctor/);
  await page.screenshot({ path: path.join(outDir, 'dashboard-workers.png'), fullPage: true });
  await page.goto(`${base}/#/fleet`);
  await page.waitForSelector('#fleet tbody tr', { timeout: 20000 });
  assert.match(await page.locator('#fleet').innerText(), /total/);
  await page.waitForSelector('#fleet-report-empty', { timeout: 20000 });
  // The user's own fleet: two jobs ingested, decomposed on the same page.
  const events = path.join(work, 'fleet.jsonl');
  const line = (job, fields) => JSON.stringify({ v: 1, job, ...fields });
  const job = (name, devices, initEnd) => [
    line(name, { event: 'submitted', time: 0, framework: 'jax', workload: 'pretrain' }),
    line(name, { event: 'requested', time: 0, device_kind: 'tpu', devices }),
    line(name, { event: 'granted', time: 10, devices }),
    line(name, { event: 'init', start: 10, end: initEnd }),
    ...[1, 2, 3, 4].map((k) => line(name, { event: 'step', start: initEnd + 10 * (k - 1), end: initEnd + 10 * k, step: k, examples: 64 })),
    line(name, { event: 'ended', time: initEnd + 40, status: 'completed' }),
  ];
  fs.writeFileSync(events, job('train-a', 8, 30).concat(job('train-b', 2, 60)).join('\n') + '\n');
  assert.match(cli(address, 'fleet', 'ingest', events), /18 events stored/);
  await page.locator('#fleet-report-refresh, button:has-text("read again")').first().click();
  await page.waitForSelector('#fleet-report tbody tr', { timeout: 20000 });
  const report = await page.locator('#fleet-report').innerText();
  assert.match(report, /^fleet\t2\t/m, report);
  assert.match(report, /device kind: tpu\t2\t/, report);
  assert.match(report, /job size \(devices\): 2-8/, report);
  assert.match(await page.locator('#fleet-badput').innerText(), /initialization\t.*train-a \(tpu × 8/);
  await page.screenshot({ path: path.join(outDir, 'dashboard-fleet.png'), fullPage: true });
  await page.goto(`${base}/#/`);
  await page.waitForSelector('#sweeps tbody tr[data-state="done"]', { timeout: 20000 });
}

// `paradnn local --dashboard` prints its private coordinator's dashboard,
// which serves the sweep while it runs. The sweep is data-parallel (hosts 1
// and 2, two local workers): once it is done, a coordinator serving the same
// database draws its scaling panel.
async function checkLocalDashboard(browser) {
  const sweep = path.join(work, 'tiny.yaml');
  fs.writeFileSync(sweep, 'name: tiny\nfamily: fc\ndevice: cpu\nparams: {layer: 1, node: {values: [32, 64]}, ' +
    'input: 64, output: 8, batch: 8, hosts: {values: [1, 2]}}\nrun: {max_seconds: 0.5, warmup_steps: 1}\n');
  const db = path.join(work, 'local.db');
  const local = spawn(path.join(binDir, 'paradnn'), ['local', '--dashboard', '--workers', '2', '--db', db, sweep],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(local);
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    local.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = stderr.match(/dashboard on (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) resolve(m[1]);
    });
    local.on('exit', () => reject(new Error(`paradnn local ended without a dashboard line:\n${stderr}`)));
  });
  // The dashboard is up before the CLI submits: the sweep appears shortly.
  let sweeps = [];
  for (let i = 0; i < 300 && sweeps.length === 0; i++) {
    ({ sweeps } = await (await fetch(`${url}api/v1/sweeps`)).json());
    if (sweeps.length === 0) await new Promise((r) => setTimeout(r, 100));
  }
  assert.strictEqual(sweeps.length, 1);
  assert.strictEqual(sweeps[0].name, 'tiny');
  const code = await new Promise((resolve) => (local.exitCode !== null ? resolve(local.exitCode) : local.on('exit', resolve)));
  assert.strictEqual(code, 0, stderr);

  const httpFile = path.join(work, 'local-http');
  start('paradnn-coordinator', ['--db', db, '--listen', '127.0.0.1:0', '--metrics-listen', '127.0.0.1:0',
    '--metrics-address-file', httpFile]);
  const base = 'http://' + (await waitForFile(httpFile, 30));
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}/#/sweep/${sweeps[0].sweep_id}`);
  await page.waitForSelector('#scale_out-chart svg, #scale_out-chart .error', { timeout: 60000 });
  assert.strictEqual(await page.locator('#scale_out-chart .error').count(), 0,
    await page.locator('#scale_out-chart').innerText());
  assert.match(await page.locator('#scale_out-note').innerText(), /communication/);
  await page.locator('#scale_out').screenshot({ path: path.join(outDir, 'dashboard-scale-out.png') });
  assert.deepStrictEqual(errors, [], 'no script errors on the data-parallel sweep page');
}

// A sweep of thread settings (stack.threads, as paradnn tune runs them):
// its heat map opens as intra-op threads x inter-op pools, one panel per
// batch, each cell the step time of the counts that ran.
async function checkTuningHeatmap(page, base, address) {
  const sweep = path.join(work, 'threads.yaml');
  fs.writeFileSync(sweep, 'name: threads\nfamily: fc\ndevice: cpu\nparams: {layer: 1, node: 32, input: 64, ' +
    'output: 8, batch: {values: [8, 16]}}\nstack: {threads: ["intra=1,inter=1", "intra=2,inter=1", ' +
    '"intra=1,inter=2"]}\nrun: {max_seconds: 0.3, warmup_steps: 1}\n');
  const sweepId = cli(address, 'submit', sweep, '-q').trim();
  cli(address, 'watch', sweepId);
  await page.goto(`${base}/#/sweep/${sweepId}`);
  await page.waitForSelector('#heatmap-chart svg .cells_marks path, #heatmap-chart .error', { timeout: 60000 });
  assert.strictEqual(await page.locator('#heatmap select[name="x"]').inputValue(), 'intra_op_threads');
  assert.strictEqual(await page.locator('#heatmap select[name="y"]').inputValue(), 'inter_op_threads');
  assert.strictEqual(await page.locator('#heatmap select[name="panel"]').inputValue(), 'batch');
  assert.strictEqual(await page.locator('#heatmap select[name="metric"]').inputValue(), 'step_time');
  // Two intra-op x two inter-op counts in each of two panels (batch 8, 16):
  // three settings ran, the fourth cell of each panel (2 x 2) has none.
  assert.strictEqual(await page.locator('#heatmap-chart svg .cells_marks path').count(), 8);
  assert.match(await page.locator('#heatmap-note').innerText(), /8 cells/);
  await page.locator('#heatmap').screenshot({ path: path.join(outDir, 'dashboard-tuning-heatmap.png') });
}

async function main() {
  fs.mkdirSync(outDir, { recursive: true });
  const addressFile = path.join(work, 'address');
  const httpFile = path.join(work, 'http');
  start('paradnn-coordinator', ['--db', path.join(work, 'dashboard.db'), '--listen', '127.0.0.1:0',
    '--address-file', addressFile, '--metrics-listen', '127.0.0.1:0', '--metrics-address-file', httpFile]);
  const address = await waitForFile(addressFile, 30);
  const base = 'http://' + (await waitForFile(httpFile, 30));
  // The calibration cache is the suite's (XDG_STATE_HOME, build/test-state):
  // a host calibrated by another test is not calibrated again (its lock makes
  // the second wait for the first), and the roofs shown are calibrated either way.
  start('paradnn-worker', ['--coordinator', address, '--worker-id', 'dashboard-worker',
    '--calibrate', 'auto']);
  const sweepId = cli(address, 'submit', path.join(sourceDir, 'examples/quick.yaml'), '-q').trim();
  assert.match(sweepId, /^\d+$/);
  await checkApiErrors(base);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--host-resolver-rules=MAP rebind.test 127.0.0.1'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const seen = await watchProgress(page, base, sweepId);
    console.log(`progress seen on the page: ${seen.join(', ')}`);
    const { rows } = await (await fetch(`${base}/api/v1/sweeps/${sweepId}/results`)).json();
    assert.strictEqual(rows.length, 12, 'the quick sweep has 12 jobs');
    assert.ok(rows.every((r) => r.measurement && r.measurement.outcome === 'OK'), 'every job measured OK');
    await checkSweepPage(page, sweepId, rows);
    await checkWorkersAndFleet(page, base, address);
    await checkTuningHeatmap(page, base, address);
    assert.deepStrictEqual(errors, [], 'no script errors on any page');
    await checkForeignPages(browser, base);
    await checkLocalDashboard(browser);
  } finally {
    await browser.close();
  }
  console.log(`dashboard test passed; screenshots in ${outDir}`);
}

main().then(() => cleanup(0), (error) => {
  console.error(error);
  cleanup(1);
});

function cleanup(code) {
  for (const child of children.reverse()) child.kill('SIGTERM');
  setTimeout(() => {
    for (const child of children) child.kill('SIGKILL');
    fs.rmSync(work, { recursive: true, force: true });
    process.exit(code);
  }, 3000).unref();
  Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.on('exit', r))))).then(() => {
    fs.rmSync(work, { recursive: true, force: true });
    process.exit(code);
  });
}
