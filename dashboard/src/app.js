// paradnn's dashboard: one page, hash-routed (#/, #/sweep/ID, #/sweep/ID/job/JOB,
// #/workers, #/fleet), reading the coordinator's JSON API (docs/dashboard.md).
// Every value from the API is put into the page as text, never as markup.
'use strict';

const kPollMs = 1000;

const app = {
  token: sessionStorage.getItem('paradnn_token') || '',
  timers: [],
  views: [],      // vega views of the current page, finalized on leaving it
  generation: 0,  // bumped per route: late answers for an old page are dropped
};

// ---- small helpers ----------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function num(v) {
  return v === undefined || v === null || v === '' ? 0 : Number(v);
}

// A state as the CLI names it (common/state_names.cc): SWEEP_RUNNING is
// "running", SWEEP_STATE_UNSPECIFIED (or a state the JSON left out, as it
// leaves out every zero) "unspecified".
function stateName(state) {
  return String(state || 'STATE_UNSPECIFIED').replace(/^(SWEEP|JOB|WORKER)_/, '')
    .replace(/^STATE_/, '').toLowerCase();
}

function when(unixMs) {
  const ms = num(unixMs);
  return ms > 0 ? new Date(ms).toLocaleString() : '-';
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(path, body) {
  const init = { headers: {} };
  if (app.token) init.headers.Authorization = 'Bearer ' + app.token;
  if (body !== undefined) {
    init.method = 'POST';
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  const response = await fetch('/api/v1/' + path, init);
  const json = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (json && json.error) || { code: 'HTTP_' + response.status, message: response.statusText };
    if (response.status === 401) showTokenForm(error.message);
    throw new ApiError(response.status, error.code, error.message);
  }
  return json;
}

function errorBox(error) {
  return el('div', { class: 'error', role: 'alert' }, `${error.code || 'error'}: ${error.message}`);
}

function showTokenForm(message) {
  const auth = document.getElementById('auth');
  auth.replaceChildren(el('form', {
    onsubmit: (event) => {
      event.preventDefault();
      app.token = event.target.elements.token.value.trim();
      sessionStorage.setItem('paradnn_token', app.token);
      route();
    },
  }, el('span', { class: 'muted' }, message + ' '),
  el('input', { name: 'token', type: 'password', placeholder: 'client token', autocomplete: 'off' }),
  el('button', { type: 'submit' }, 'use token')));
}

function every(ms, fn) {
  const generation = app.generation;
  const tick = async () => {
    if (generation !== app.generation) return;
    const again = await fn();
    if (again !== false && generation === app.generation) app.timers.push(setTimeout(tick, ms));
  };
  tick();
}

async function embed(container, spec, onClick) {
  const result = await vegaEmbed(container, spec, { renderer: 'svg', actions: { export: true, source: false, compiled: false, editor: false } });
  app.views.push(result.view);
  if (onClick) result.view.addEventListener('click', (event, item) => item && item.datum && onClick(item.datum));
  return result.view;
}

// ---- progress ---------------------------------------------------------------

// The ETA as `paradnn watch` gives it: the step-time model's estimate when
// it has one, else the rate so far over the jobs left.
function eta(s) {
  if (s.state !== 'SWEEP_RUNNING') return '';
  if (num(s.model_seconds_left) > 0) return Fmt.clock(num(s.model_seconds_left)) + ' (model)';
  const done = num(s.done_jobs) + num(s.predicted_jobs);
  const left = num(s.total_jobs) - done;
  if (done === 0 || left <= 0) return '--';
  return Fmt.clock((num(s.elapsed_seconds) / done) * left) + ' (rate)';
}

function progressBar(s) {
  const total = Math.max(1, num(s.total_jobs));
  const done = num(s.done_jobs) + num(s.predicted_jobs);
  const bar = el('div', { class: 'bar', role: 'progressbar', 'aria-valuemin': 0,
    'aria-valuemax': num(s.total_jobs), 'aria-valuenow': done });
  bar.append(el('span', { style: `width:${(100 * done) / total}%` }));
  return el('div', { class: 'progress' }, bar, el('span', { class: 'progress-text' }, `${done}/${num(s.total_jobs)}`));
}

function sweepSummary(s) {
  return [
    ['state', stateName(s.state)], ['done', `${num(s.done_jobs)}/${num(s.total_jobs)}`],
    ['ok', num(s.ok_results)], ['failed', num(s.failed_jobs)], ['cancelled', num(s.cancelled_jobs)],
    ['running', num(s.leased_jobs)], ['pending', num(s.pending_jobs)],
    ['held', num(s.held_jobs)], ['predicted', num(s.predicted_jobs)], ['reused', num(s.reused_results)],
    ['elapsed', Fmt.clock(num(s.elapsed_seconds))], ['ETA', eta(s) || '-'],
  ];
}

// ---- the sweeps page --------------------------------------------------------

function sweepsTable(sweeps) {
  const head = ['sweep', 'name', 'family', 'device', 'state', 'progress', 'ok', 'failed', 'ETA', 'elapsed', 'created'];
  return el('table', { class: 'grid', id: 'sweeps' },
    el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, h)))),
    el('tbody', {}, sweeps.map((s) => el('tr', { 'data-sweep': s.sweep_id, 'data-state': stateName(s.state) },
      el('td', {}, el('a', { href: `#/sweep/${s.sweep_id}` }, s.sweep_id)),
      el('td', {}, s.name), el('td', {}, s.family), el('td', {}, s.device),
      el('td', { class: 'state ' + stateName(s.state) }, stateName(s.state)),
      el('td', {}, progressBar(s)), el('td', { class: 'n' }, num(s.ok_results)),
      el('td', { class: 'n' }, num(s.failed_jobs)), el('td', {}, eta(s)),
      el('td', { class: 'n' }, Fmt.clock(num(s.elapsed_seconds))), el('td', {}, when(s.created_unix_ms))))));
}

function sweepsPage(main) {
  const holder = el('div', {}, el('p', { class: 'muted' }, 'loading…'));
  main.replaceChildren(el('h1', {}, 'Sweeps'), holder);
  every(kPollMs, async () => {
    try {
      const { sweeps } = await api('sweeps');
      const sorted = (sweeps || []).slice().sort((a, b) => num(b.sweep_id) - num(a.sweep_id));
      holder.replaceChildren(sorted.length ? sweepsTable(sorted)
        : el('p', {}, 'No sweeps yet: paradnn submit FILE (or paradnn local FILE).'));
    } catch (error) {
      holder.replaceChildren(errorBox(error));
    }
    return true;  // sweeps come and go: keep polling while the page is open
  });
}

// ---- the results table --------------------------------------------------------

// How cellText prints each unit of a shown result field.
const kCellUnits = { text: 'text', flag: 'text', integer: 'int', count: 'rate', millis: 'ms', percent: 'pct', rate: 'rate', ratio: 'ratio' };

// The value at `path` ("measurement.stats.median_s") of a row as the API
// writes it (64-bit integers as text, unset messages absent); a list of
// text joined with "; ".
function pathValue(row, path) {
  let value = row;
  for (const part of path.split('.')) value = value === undefined || value === null ? undefined : value[part];
  return Array.isArray(value) ? value.join('; ') : value;
}

// A shown result field's cell of row `r`, by the rule the CLI computes it
// with (db/result_fields.h ShownWhen); null where blank.
function shownCell(field, r) {
  const text = field.unit === 'text' || field.unit === 'flag';
  const shown = (value) => {
    if (text) return value === undefined || value === null || value === '' ? null : String(value);
    return field.unit === 'integer' || field.unit === 'count' ? num(value) : num(value) * field.multiply / field.divide;
  };
  const m = r.measurement;
  const timed = Boolean(m) && (m.outcome === 'OK' || num(m.stats && m.stats.steps) > 0);
  const predicted = !m && Boolean(r.prediction);
  const value = () => pathValue(r, field.path);
  switch (field.when) {
    case 'source': return m ? 'measured' : predicted ? 'predicted' : null;
    case 'outcome': return m ? m.outcome : String(r.state || '').replace(/^JOB_/, '');
    case 'host_speed': {
      const s = (m && m.sentinel) || {};
      const before = num(s.compute_before), after = num(s.compute_after);
      if (before > 0 && after > 0) return shown(Math.sqrt(before * after));
      return before > 0 ? shown(before) : after > 0 ? shown(after) : null;
    }
    case 'predicted_or_timed': return predicted ? shown(pathValue(r, field.predictedPath)) : timed ? shown(value()) : null;
    case 'if_timed': return timed ? shown(value()) : null;
    case 'if_timed_positive': return timed && num(value()) > 0 ? shown(value()) : null;
    case 'if_positive': return num(value()) > 0 ? shown(value()) : null;
    case 'if_predicted': return predicted ? shown(value()) : null;
    case 'if_set': return r[field.path.split('.')[0]] ? shown(value()) : null;
    default: return shown(value());
  }
}

// The columns of `paradnn results` (client/result_table.cc), in its order
// and units: job, the hyper-parameters, precision, optimizer, then the
// shown result fields the dashboard keeps (kResultFields, generated from
// db/result_fields.cc into result_fields.js).
function resultColumns(rows) {
  const params = new Set(), options = new Set();
  for (const r of rows) {
    Object.keys((r.config && r.config.params) || {}).forEach((k) => params.add(k));
    Object.keys((r.config && r.config.options) || {}).forEach((k) => options.add(k));
  }
  const columns = [{ name: 'job_id', title: 'job', unit: 'int', get: (r) => num(r.job_id) }];
  if (rows.some((r) => num(r.repeat) > 0)) columns.push({ name: 'repeat', title: 'repeat', unit: 'int', get: (r) => num(r.repeat) });
  for (const p of [...params].sort()) columns.push({ name: p, title: p, unit: 'int', get: (r) => (r.config.params[p] === undefined ? null : num(r.config.params[p])) });
  for (const o of [...options].sort()) columns.push({ name: o, title: o, unit: 'text', get: (r) => r.config.options[o] || '' });
  columns.push(
    { name: 'precision', title: 'precision', unit: 'text', get: (r) => r.config.precision },
    { name: 'optimizer', title: 'optimizer', unit: 'text', get: (r) => r.config.optimizer });
  for (const field of kResultFields.filter((f) => f.dashboard)) {
    columns.push({ name: field.name, title: field.title, unit: kCellUnits[field.unit], get: (r) => shownCell(field, r) });
  }
  return columns;
}

function cellText(value, unit) {
  if (value === null || value === undefined || value === '') return '';
  if (unit === 'ms') return Fmt.millis(value);
  if (unit === 'pct') return Fmt.percent(value);
  if (unit === 'rate') return Fmt.count(value);
  return String(value);
}

// "node=256 outcome=OK mfu_pct>10 rmsprop": every term must hold; a term
// without an operator matches any cell's text.
function rowFilter(text, columns) {
  const terms = text.trim().split(/\s+/).filter(Boolean).map((term) => {
    const m = term.match(/^([\w.]+)(<=|>=|=|<|>)(.*)$/);
    if (!m) return { any: term.toLowerCase() };
    const column = columns.findIndex((c) => c.name === m[1] || c.title === m[1]);
    return { column, op: m[2], value: m[3] };
  });
  return (cells) => terms.every((t) => {
    if (t.any !== undefined) return cells.some((c) => String(c === null ? '' : c).toLowerCase().includes(t.any));
    if (t.column < 0) return false;
    const cell = cells[t.column];
    if (t.op === '=') return String(cell === null ? '' : cell) === t.value;
    const a = Number(cell), b = Number(t.value);
    if (cell === null || isNaN(a) || isNaN(b)) return false;
    return { '<': a < b, '>': a > b, '<=': a <= b, '>=': a >= b }[t.op];
  });
}

// `view` ({filter, sort, ascending}) keeps the user's filter and sort
// across the redraws live progress makes.
function resultsTable(rows, sweepId, view) {
  const columns = resultColumns(rows);
  const data = rows.map((r) => ({ row: r, cells: columns.map((c) => c.get(r)) }));
  let sortColumn = Math.max(0, columns.findIndex((c) => c.name === view.sort));
  let ascending = view.ascending !== false;
  const filter = el('input', { type: 'search', id: 'results-filter', placeholder: 'filter: node=256 outcome=OK mfu_pct>10 text…', size: 48, value: view.filter || '' });
  const count = el('span', { class: 'muted', id: 'results-count' });
  const tbody = el('tbody');
  const header = el('tr', {}, columns.map((c, i) => el('th', {
    'data-column': c.name, title: c.name, class: c.unit === 'text' ? '' : 'n',
    onclick: () => { ascending = sortColumn === i ? !ascending : true; sortColumn = i; render(); },
  }, c.title)));
  function render() {
    Object.assign(view, { filter: filter.value, sort: columns[sortColumn].name, ascending });
    const keep = rowFilter(filter.value, columns);
    const shown = data.filter((d) => keep(d.cells));
    const sign = ascending ? 1 : -1;
    shown.sort((a, b) => {
      const x = a.cells[sortColumn], y = b.cells[sortColumn];
      if (x === y) return 0;
      if (x === null || x === '') return 1;
      if (y === null || y === '') return -1;
      return (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y))) * sign;
    });
    header.querySelectorAll('th').forEach((th, i) => th.setAttribute('aria-sort', i === sortColumn ? (ascending ? 'ascending' : 'descending') : 'none'));
    tbody.replaceChildren(...shown.map((d) => el('tr', { 'data-job': d.row.job_id },
      d.cells.map((v, i) => el('td', { class: columns[i].unit === 'text' ? '' : 'n' },
        i === 0 ? el('a', { href: `#/sweep/${sweepId}/job/${d.row.job_id}` }, v) : cellText(v, columns[i].unit))))));
    count.textContent = `${shown.length} of ${data.length} jobs`;
  }
  filter.addEventListener('input', render);
  render();
  return el('div', {}, el('div', { class: 'toolbar' }, filter, ' ', count),
    el('div', { class: 'scroll' }, el('table', { class: 'grid', id: 'results' }, el('thead', {}, header), tbody)));
}

// ---- analyses (analysis.js draws them) -------------------------------------

function configText(config, skip) {
  const parts = Object.entries(config.params || {}).filter(([k]) => !skip.includes(k)).sort().map(([k, v]) => `${k}=${v}`);
  for (const [k, v] of Object.entries(config.options || {}).sort()) if (!skip.includes(k)) parts.push(`${k}=${v}`);
  if (!skip.includes('precision')) parts.push(config.precision);
  return parts.join(' ');
}

// ---- one sweep --------------------------------------------------------------

async function sweepPage(main, sweepId) {
  const status = el('div', { id: 'sweep-status' });
  const results = el('section', { id: 'results-section' }, el('h2', {}, 'Results'), el('p', { class: 'muted' }, 'loading…'));
  const charts = el('div', { id: 'analyses' });
  main.replaceChildren(el('h1', { id: 'sweep-title' }, `Sweep ${sweepId}`), status, results, charts);
  let shownDone = -1, drawn = false;
  const tableView = {};
  every(kPollMs, async () => {
    let s;
    try {
      s = await api(`sweeps/${sweepId}`);
    } catch (error) {
      status.replaceChildren(errorBox(error));
      return error.status !== 404;
    }
    document.getElementById('sweep-title').textContent = `Sweep ${s.sweep_id}: ${s.name} (${s.family} on ${s.device})`;
    status.replaceChildren(progressBar(s), el('dl', { class: 'facts inline', 'data-state': stateName(s.state) },
      sweepSummary(s).map(([k, v]) => [el('dt', {}, k), el('dd', { 'data-key': k }, String(v))])));
    const done = num(s.done_jobs) + num(s.predicted_jobs);
    const running = s.state === 'SWEEP_RUNNING';
    if (done !== shownDone || !running) {
      shownDone = done;
      const { rows } = await api(`sweeps/${sweepId}/results`);
      results.replaceChildren(el('h2', {}, 'Results'), resultsTable(rows || [], sweepId, tableView));
      if (!running && !drawn) {
        drawn = true;
        const { sweeps } = await api('sweeps');
        const panels = analyses(s, rows || [], sweeps || []);
        charts.replaceChildren(...panels.map((p) => p.node));
        // Drawn at once: those that need no choice first (speedup needs
        // another sweep, scaling a field that varies).
        for (const p of panels.filter((q) => q.auto)) await p.go();
      }
    }
    return running;
  });
}

// ---- one job ------------------------------------------------------------------

function facts(pairs) {
  return el('dl', { class: 'facts' }, pairs.filter(([, v]) => v !== '' && v !== undefined && v !== null)
    .map(([k, v]) => [el('dt', {}, k), el('dd', {}, String(v))]));
}

async function jobPage(main, sweepId, jobId) {
  main.replaceChildren(el('p', { class: 'muted' }, 'loading…'));
  try {
    const [{ rows }, { workers }] = await Promise.all([api(`sweeps/${sweepId}/results?include_samples=true`), api('workers')]);
    const row = (rows || []).find((r) => String(r.job_id) === String(jobId));
    if (!row) throw new ApiError(404, 'NOT_FOUND', `sweep ${sweepId} has no job ${jobId}`);
    const m = row.measurement, st = (m && m.stats) || {};
    const platform = (workers || []).map((w) => w.platform).find((p) => p && p.fingerprint === row.platform_fingerprint);
    const parts = [el('h1', {}, `Job ${jobId} of sweep `, el('a', { href: `#/sweep/${sweepId}` }, sweepId)),
      facts([['configuration', configText(row.config, [])], ['optimizer', row.config.optimizer], ['state', stateName(row.state)],
        ['worker', row.worker_id], ['platform', row.platform_fingerprint], ['harness', row.harness], ['attempts', row.attempts],
        ['reused from job', num(row.reused_from_job_id) || '']])];
    if (m) {
      parts.push(el('h2', {}, 'Measurement'), facts([
        ['outcome', m.outcome], ['error', m.error], ['examples/s', Fmt.count(m.examples_per_sec)],
        ['median step', Fmt.millis(st.median_s * 1e3)], ['±ci95', Fmt.percent(st.ci95_rel * 100)],
        ['p10 / p90', `${Fmt.millis(st.p10_s * 1e3)} / ${Fmt.millis(st.p90_s * 1e3)}`], ['cv', Number(st.cv || 0).toFixed(3)],
        ['steps', st.steps], ['stop', st.stop_reason], ['model GF/s', Fmt.count(m.model_flops_per_sec / 1e9)],
        ['executed GF/s', Fmt.count(m.executed_flops_per_sec / 1e9)], ['MFU', m.mfu > 0 ? Fmt.percent(m.mfu * 100) : ''],
        ['HFU', m.hfu > 0 ? Fmt.percent(m.hfu * 100) : ''], ['MFU (silicon)', m.silicon_mfu > 0 ? Fmt.percent(m.silicon_mfu * 100) : ''],
        ['roof', m.roof], ['#params', Fmt.count(num(m.counts.params))], ['threads', `${m.intra_op_threads} intra, ${m.inter_op_threads} inter`],
        ['build', Fmt.millis(m.build_seconds * 1e3)], ['peak RSS', Fmt.count(num(m.peak_rss_bytes)) + 'B'],
        ['suspect', (m.suspect || []).join('; ')], ['memory format', m.memory_format]]));
      if ((m.step_seconds || []).length) {
        const steps = m.step_seconds.map((s, i) => ({ step: i + 1, ms: s * 1e3 }));
        const chart = el('div', { class: 'chart', id: 'steps-chart' });
        parts.push(el('h2', {}, 'Timed steps'), chart);
        main.replaceChildren(...parts);
        await embed(chart, { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', data: { values: steps }, width: 520, height: 200,
          mark: { type: 'line', point: true }, encoding: { x: { field: 'step', type: 'quantitative' }, y: { field: 'ms', type: 'quantitative', title: 'step time (ms)' }, tooltip: [{ field: 'step' }, { field: 'ms', format: '.4~f' }] } });
      }
    }
    if (platform) parts.push(el('h2', {}, 'Platform'), platformCard(platform));
    main.replaceChildren(...parts);
  } catch (error) {
    main.replaceChildren(errorBox(error));
  }
}

// ---- workers, platforms and the fleet ------------------------------------------

function simpleTable(id, head, rows) {
  return el('table', { class: 'grid', id }, el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, h)))),
    el('tbody', {}, rows.map((r) => el('tr', {}, r.map((v) => el('td', { class: typeof v === 'number' ? 'n' : '' }, v === undefined ? '' : String(v)))))));
}

// The clocks the OS reports beside the one measured under load at
// calibration (platform/silicon_peak.h PlatformClockText): "2.45 GHz nominal,
// 3.24 GHz measured"; a GPU's max SM clock.
function clockText(p) {
  const ghz = (hz) => (num(hz) / 1e9).toFixed(2) + ' GHz';
  const base = num(p.base_clock_hz), max = num(p.max_clock_hz), measured = num(p.measured_clock_hz);
  return [base > 0 ? ghz(base) + ' nominal' : '', max > 0 && max !== base ? ghz(max) + ' max' : '',
    measured > 0 ? ghz(measured) + ' measured' : ''].filter(Boolean).join(', ');
}

function platformCard(p) {
  return el('div', { class: 'platform', 'data-fingerprint': p.fingerprint },
    facts([['fingerprint', p.fingerprint], ['device', `${p.device_kind}: ${p.device_name}`], ['host', p.hostname],
      ['cores', `${p.sockets} socket(s), ${p.cores} cores, ${p.logical_cpus} logical CPUs`], ['memory', Fmt.count(num(p.memory_bytes)) + 'B'],
      ['caches', p.cache_sizes], ['os', p.os], ['LibTorch', p.libtorch_version], ['oneDNN', p.onednn_version], ['BLAS', p.blas_backend],
      ['BLAS core', p.blas_core ? `${p.blas_core} (${p.blas_core_choice})` : ''], ['ATen capability', p.aten_capability ? `${p.aten_capability} (${p.aten_capability_choice})` : ''],
      ['ISA paths', p.isa_paths], ['CPU flags', p.cpu_flags], ['threads', p.default_intra_op_threads], ['parallel', p.parallel_backend],
      ['clock', clockText(p)],
      ['governor / boost', [p.frequency_governor, p.boost].filter(Boolean).join(' / ')], ['denormals flushed', p.flush_denormal],
      ['allocator', p.allocator], ['calibrated', when(p.calibrated_unix_ms)],
      // A CUDA device's facts (empty on a CPU platform, and then not shown).
      ['compute capability', p.compute_capability], ['SMs', num(p.sm_count) || ''],
      ['GPUs lent to a job (params.devices)', num(p.cuda_device_count) || ''],
      ['CUDA driver / runtime', [p.cuda_driver_version, p.cuda_runtime_version].filter(Boolean).join(' / ')],
      ['cuDNN', p.cudnn_version],
      ['memory bandwidth (theoretical)', num(p.theoretical_memory_bytes_per_sec) > 0 ? Fmt.count(p.theoretical_memory_bytes_per_sec) + 'B/s' : '']]),
    el('h3', {}, 'Roofs (calibrated)'),
    simpleTable('', ['kernel', 'dtype', 'GFLOP/s', 'shape m×n×k', 'silicon peak GFLOP/s', 'datasheet GFLOP/s', 'raised by a job'],
      (p.matmul_roofs || []).map((r) => [r.kernel || 'matmul', r.dtype, Fmt.count(r.flops_per_sec / 1e9), `${r.m}×${r.n}×${r.k}`,
        r.theoretical_flops_per_sec > 0 ? Fmt.count(r.theoretical_flops_per_sec / 1e9) : '', r.datasheet_flops_per_sec > 0 ? Fmt.count(r.datasheet_flops_per_sec / 1e9) : '', r.raised_by_job ? 'yes' : ''])),
    el('h3', {}, 'Memory bandwidth'),
    bandwidthChart(p.bandwidth || []),
    el('h3', {}, 'Silicon peaks'),
    simpleTable('', ['dtype', 'GFLOP/s', 'basis', 'source', 'inconsistency'],
      (p.silicon_peaks || []).map((s) => [s.dtype, Fmt.count(s.flops_per_sec / 1e9), s.basis, s.source, s.inconsistency])),
    el('h3', {}, 'Stack doctor'),
    simpleTable('', ['component', 'setting', 'speed (GFLOP/s or Gop/s)', 'max rel. error', 'correct', 'chosen', 'as installed', 'note'],
      (p.stack_findings || []).map((f) => [f.component, f.setting, f.flops_per_sec > 0 ? Fmt.count(f.flops_per_sec / 1e9) : '',
        f.max_relative_error ? f.max_relative_error.toExponential(1) : '0', f.correct ? 'yes' : 'no', f.chosen ? 'chosen' : '', f.as_installed ? 'yes' : '', f.note])));
}

function bandwidthChart(points) {
  const chart = el('div', { class: 'chart bandwidth' });
  if (points.length) embed(chart, Charts.bandwidth(points));
  else chart.append(el('p', { class: 'muted' }, 'not calibrated'));
  return chart;
}

async function workersPage(main) {
  const table = el('div', {}, el('p', { class: 'muted' }, 'loading…'));
  const cards = el('div');
  main.replaceChildren(el('h1', {}, 'Workers and platforms'), table, cards);
  let shownPlatforms = '';
  every(5 * kPollMs, async () => {
    try {
      const { workers } = await api('workers');
      const list = workers || [];
      const platforms = new Map();
      for (const w of list) if (w.platform && w.platform.fingerprint) platforms.set(w.platform.fingerprint, w.platform);
      table.replaceChildren(
        simpleTable('workers', ['worker', 'state', 'device', 'host', 'job', 'jobs done', 'connected', 'last seen', 'platform'],
          list.map((w) => [w.worker_id, w.state, w.device_kind, w.hostname, num(w.current_job_id) || '', num(w.jobs_done),
            when(w.connected_unix_ms), when(w.last_seen_unix_ms), (w.platform && w.platform.fingerprint) || ''])));
      // Platforms change rarely (a new worker, a recalibration): redrawn only then.
      const key = JSON.stringify([...platforms.values()]);
      if (key !== shownPlatforms) {
        shownPlatforms = key;
        cards.replaceChildren(...[...platforms.values()].map((p) => el('section', {}, el('h2', {}, `Platform ${p.fingerprint}`), platformCard(p))));
      }
    } catch (error) {
      table.replaceChildren(errorBox(error));
    }
  });
}

function goodputRow(g, name) {
  const pct = (v) => Fmt.percent(num(v) * 100);
  return [name, num(g.workers), Fmt.clock(num(g.connected_seconds)), Fmt.clock(num(g.busy_seconds)), pct(g.scheduling),
    Fmt.clock(num(g.job_wall_seconds)), Fmt.clock(num(g.timed_seconds)), pct(g.runtime), num(g.jobs), pct(g.program), pct(g.goodput)];
}

async function fleetPage(main) {
  const holder = el('div', {}, el('p', { class: 'muted' }, 'loading…'));
  const report = el('div', {}, el('p', { class: 'muted' }, 'loading…'));
  main.replaceChildren(el('h1', {}, 'Fleet goodput'),
    el('p', { class: 'muted' }, 'goodput = scheduling (busy / connected) × runtime (timed / job wall) × program (HFU weighted by timed seconds); docs/observability.md'), holder,
    el('h2', {}, 'Your training fleet'),
    el('p', { class: 'muted' }, 'the training jobs paradnn fleet ingest stored: MPG = scheduling × runtime × program per job; docs/fleet-events.md'), report);
  every(5 * kPollMs, async () => {
    try {
      const f = await api('fleet');
      holder.replaceChildren(el('p', {}, `from ${when(f.from_unix_ms)} to ${when(f.to_unix_ms)}`),
        simpleTable('fleet', ['device kind', 'workers', 'connected', 'busy', 'scheduling', 'job wall', 'timed', 'runtime', 'jobs', 'program', 'goodput'],
          (f.device_kinds || []).map((g) => goodputRow(g, g.device_kind)).concat(f.total ? [goodputRow(f.total, 'total')] : [])));
    } catch (error) {
      holder.replaceChildren(errorBox(error));
    }
  });
  // Read once, not polled: it decomposes every stored event (18 s over a
  // 1 GB fleet, docs/fleet-events.md "Figures"); the button reads it again.
  const generation = app.generation;
  const loadReport = async () => {
    try {
      const r = await api('fleet/report');
      if (generation === app.generation) report.replaceChildren(fleetReportSection(r), el('button', { id: 'fleet-report-refresh', onclick: loadReport }, 'read again'));
    } catch (error) {
      if (generation === app.generation) report.replaceChildren(errorBox(error), el('button', { onclick: loadReport }, 'read again'));
    }
  };
  loadReport();
}

// ---- routing ------------------------------------------------------------------

function route() {
  app.generation += 1;
  app.timers.forEach(clearTimeout);
  app.timers = [];
  app.views.forEach((v) => v.finalize());
  app.views = [];
  const main = document.getElementById('main');
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('active', a.getAttribute('href') === '#/' + (parts[0] === 'sweep' ? '' : parts[0] || '')));
  if (parts[0] === 'sweep' && /^\d+$/.test(parts[1] || '')) {
    if (parts[2] === 'job' && /^\d+$/.test(parts[3] || '')) jobPage(main, parts[1], parts[3]);
    else sweepPage(main, parts[1]);
  } else if (parts[0] === 'workers') {
    workersPage(main);
  } else if (parts[0] === 'fleet') {
    fleetPage(main);
  } else {
    sweepsPage(main);
  }
}

window.addEventListener('hashchange', route);
route();
