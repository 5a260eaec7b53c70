// The sweep page's analyses: one panel per kind of analysis, each a form of
// its options, a note and a chart (charts.js) of the coordinator's answer to
// POST /api/v1/analyze (docs/dashboard.md). The kinds come from one table,
// kAnalysisPanels; a kind of AnalyzeRequest without a panel is in kNoPanel
// with where it is shown instead (tests/python/test_analysis_request.py
// checks the two against the proto; docs/extending.md "Add an analysis
// kind"). Uses app.js's helpers (el, api, embed, num, errorBox, ApiError,
// configText); loaded before it.
'use strict';

const kMetrics = ['examples_per_sec', 'gflops', 'executed_gflops', 'mfu', 'hfu', 'silicon_mfu',
  'step_time', 'step_cv', 'params', 'model_flops', 'intensity', 'peak_rss'];

function select(name, values, chosen) {
  return el('select', { name }, values.map((v) => el('option', { value: v, selected: v === chosen }, v === '' ? '(none)' : v)));
}

// A sweep whose stack.threads axis varies (paradnn tune's sweeps,
// docs/tuning.md) is about thread settings: the counts that ran are fields
// too, and its heat map is intra-op threads x inter-op pools per model.
const kThreadFields = ['intra_op_threads', 'inter_op_threads'];

function varyingParams(sweep, rows) {
  const values = {};
  const add = (k, v) => (values[k] = values[k] || new Set()).add(v);
  for (const r of rows) {
    for (const [k, v] of Object.entries((r.config && r.config.params) || {})) add(k, v);
    for (const [k, v] of Object.entries((r.config && r.config.options) || {})) add(k, v);
    for (const [k, v] of Object.entries((r.config && r.config.stack) || {})) add('stack.' + k, v);
  }
  const threads = values['stack.threads'] && values['stack.threads'].size > 1;
  const models = Object.keys(values).filter((k) => values[k].size > 1 && !k.startsWith('stack.'));
  const varying = Object.keys(values).filter((k) => values[k].size > 1).sort();
  const family = (sweep.spec && sweep.spec.family) || sweep.family;
  const preferred = family === 'fc' ? ['node', 'batch'] : ['batch', 'filters', 'hidden', 'layer'];
  const byPreference = (a, b) => (preferred.indexOf(a) + 1 || 99) - (preferred.indexOf(b) + 1 || 99);
  varying.sort(byPreference);
  models.sort(byPreference);
  const all = Object.keys(values).concat(threads ? kThreadFields : []).sort();
  return { varying: threads ? kThreadFields : varying, all, panel: threads ? (models[0] || '') : '' };
}

// The heat map's cells, each with the jobs it holds and their statistics
// for the tooltip.
function heatmapCells(heatmap, rows) {
  // The jobs of each (x, y, panel), grouped in one pass over the rows.
  const key = (x, y, panel) => JSON.stringify([x, y, heatmap.panel ? panel : '']);
  const byCell = new Map();
  for (const r of rows) {
    const k = key(fieldValue(r, heatmap.x), fieldValue(r, heatmap.y), fieldValue(r, heatmap.panel));
    if (byCell.has(k)) byCell.get(k).push(r);
    else byCell.set(k, [r]);
  }
  const cells = [];
  for (const panel of heatmap.panels || []) {
    for (const c of panel.cells || []) {
      const jobs = byCell.get(key(c.x, c.y, panel.panel_value)) || [];
      const value = c.value === undefined ? null : c.value;
      const one = jobs.length === 1 && jobs[0].measurement && jobs[0].measurement.outcome === 'OK' ? jobs[0] : null;
      const st = one ? one.measurement.stats : null;
      cells.push({
        x: c.x, y: c.y, panel: panel.panel_value, value,
        predicted: num(c.predicted_results),
        label: value === null ? 'no OK result' : Fmt.metric(value, heatmap.unit) + (num(c.predicted_results) ? ' (~predicted)' : ''),
        short: value === null ? (num(c.oom_results) + num(c.predicted_oom_results) ? 'OOM' : '') : Fmt.metric(value, ['fraction', 's'].includes(heatmap.unit) ? heatmap.unit : '').replace(/ $/, ''),
        configuration: `${heatmap.x}=${c.x} ${heatmap.y}=${c.y}` + (heatmap.panel ? ` ${heatmap.panel}=${panel.panel_value}` : '') +
          (one ? ' · ' + configText(one.config, [heatmap.x, heatmap.y, heatmap.panel]) : ''),
        statistics: `${num(c.ok_results)} ok, ${num(c.oom_results)} OOM, ${num(c.predicted_oom_results)} predicted OOM, ${num(c.failed_results)} failed`,
        jobs: jobs.map((r) => r.job_id).join(', '),
        job_ids: jobs.map((r) => Number(r.job_id)),
        step: st ? `${Fmt.millis(st.median_s * 1e3)} ±${Fmt.percent(st.ci95_rel * 100)} (${st.steps} steps)` : '',
        utilization: one && one.measurement.mfu > 0 ? Fmt.percent(one.measurement.mfu * 100) : '',
      });
    }
  }
  return cells;
}

function fieldValue(row, field) {
  const c = row.config || {};
  if (c.params && c.params[field] !== undefined) return String(c.params[field]);
  if (c.options && c.options[field] !== undefined) return c.options[field];
  if (field === 'precision' || field === 'optimizer' || field === 'family') return c[field];
  if (field === 'worker') return row.worker_id;
  if (field === 'repeat') return String(num(row.repeat));
  if (field.startsWith('stack.') && c.stack) return c.stack[field.slice(6)];
  if (kThreadFields.includes(field) && row.measurement) return String(num(row.measurement[field]));
  return undefined;
}

function scopeText(response) {
  const scope = response.scope || {};
  const parts = [`${num(response.results)} results`];
  if ((scope.platforms || []).length) parts.push('on ' + scope.platforms.join(', '));
  if (scope.aggregation) parts.push(scope.aggregation);
  for (const f of scope.aggregated || []) parts.push(`over ${f.field} ∈ {${f.values.join(', ')}}`);
  if (num(response.predicted_results)) parts.push(`${num(response.predicted_results)} predicted`);
  return parts.join('; ');
}

// One analysis panel: a form of its options, and its chart (or its error).
function analysisPanel(id, title, controls, run) {
  const chart = el('div', { class: 'chart', id: id + '-chart' });
  const note = el('p', { class: 'muted', id: id + '-note' });
  const form = el('form', { class: 'toolbar', onsubmit: (e) => { e.preventDefault(); go(); } }, controls, el('button', { type: 'submit' }, 'draw'));
  async function go() {
    chart.replaceChildren(el('p', { class: 'muted' }, 'computing…'));
    note.textContent = '';
    try {
      await run(Object.fromEntries(new FormData(form).entries()), chart, note);
    } catch (error) {
      chart.replaceChildren(errorBox(error));
    }
  }
  return { node: el('section', { class: 'analysis', id }, el('h2', {}, title), form, note, chart), go, auto: true };
}

// What every panel's functions read: the sweep, its rows, the other sweeps,
// the hyper-parameters (all, and those that vary, most telling first), and
// the heat map's current axes (its cells' click filters the results by them).
function analysisContext(sweep, rows, sweeps) {
  const sweepId = Number(sweep.sweep_id);
  const { varying, all, panel } = varyingParams(sweep, rows);
  const x0 = varying[0] || all[0] || 'batch', y0 = varying[1] || varying[0] || all[1] || 'batch';
  const others = sweeps.filter((s) => Number(s.sweep_id) !== sweepId).map((s) => String(s.sweep_id));
  const family = (sweep.spec && sweep.spec.family) || sweep.family;
  return { sweepId, rows, all, x0, y0, panel0: panel, others, family, axes: { x: x0, y: y0 } };
}

// The selection of most panels: this sweep, with its predictions when the
// form's "predicted" box is ticked.
function sweepSelection(f, ctx) {
  return { sweep_ids: [ctx.sweepId], include_predicted: f.include_predicted === 'on' };
}

function predictedBox() {
  return el('label', {}, el('input', { type: 'checkbox', name: 'include_predicted' }), ' predicted');
}

function checkbox(name, label, checked) {
  return el('label', {}, el('input', { type: 'checkbox', name, checked: Boolean(checked) }), label);
}

// A heat-map cell clicked: its job, or the results filtered to its jobs.
function openHeatmapCell(datum, ctx) {
  if (datum.job_ids && datum.job_ids.length === 1) location.hash = `#/sweep/${ctx.sweepId}/job/${datum.job_ids[0]}`;
  else if (datum.job_ids) {
    const f = document.getElementById('results-filter');
    f.value = `${ctx.axes.x}=${datum.x} ${ctx.axes.y}=${datum.y}`;
    f.dispatchEvent(new Event('input'));
    f.scrollIntoView();
  }
}

function speedupNote(s, r) {
  const interval = num(s.geomean_low) > 0 ? ` [${Fmt.significant3(num(s.geomean_low))}x, ${Fmt.significant3(num(s.geomean_high))}x]` : '';
  const verdicts = [['faster', s.faster], ['slower', s.slower], ['no difference detected', s.no_difference], ['not enough data', s.not_enough_data]]
    .filter(([, n]) => num(n) > 0).map(([name, n]) => `${num(n)} ${name}`).join(', ');
  return `geomean ${Fmt.significant3(num(s.geomean_speedup))}x${interval} (95 %; min ${Fmt.significant3(num(s.min_speedup))}x, max ${Fmt.significant3(num(s.max_speedup))}x) over ${(s.points || []).length} configurations; verdicts: ${verdicts || 'none'} (false discovery rate ${num(s.fdr) * 100} %, bars: 95 % intervals); only in baseline ${num(s.baseline_only)}, only in candidate ${num(s.candidate_only)}; ${scopeText(r)}`;
}

// The scale-out answer in words: per series its kind, baseline, largest
// N's efficiency and where communication passes half of the step.
function scaleOutNote(s, r) {
  const series = (s.series || []).map((one) => {
    const points = one.points || [];
    const last = points[points.length - 1] || {};
    const kind = one.mode === 'weak' ? `weak (batch ${one.batch})` : one.mode === 'strong' ? `strong (global batch ${one.global_batch})` : 'neither weak nor strong';
    const efficiency = last.efficiency === undefined ? '' : `, ${Fmt.percent(last.efficiency * 100)} efficient at ${s.field}=${last.n}`;
    return `${kind}${efficiency}; baseline ${one.baseline || '-'}; communication ≥ 50 %: ${one.crossover || '-'}`;
  });
  return `${series.length} series over ${s.field}: ${series.join(' · ')}; ${scopeText(r)}`;
}

// Throughput against N (log-log, dashed the ideal line) beside the first
// series' step stacked into its parts.
function scaleOutChart(s) {
  const label = (one) => `${one.mode} ${one.mode === 'strong' ? 'B=' + one.global_batch : 'b=' + one.batch} ${one.config}`;
  const lines = [];
  for (const one of s.series || []) {
    for (const p of one.points || []) {
      const base = { series: label(one), n: Number(p.n), efficiency: p.efficiency, share: num(p.communication_share) };
      lines.push({ ...base, kind: 'measured', value: num(p.examples_per_sec) });
      if (one.mode !== 'neither') lines.push({ ...base, kind: 'ideal', value: num(p.ideal_examples_per_sec) });
    }
  }
  const first = (s.series || [])[0] || { points: [] };
  const parts = [];
  for (const p of first.points || []) {
    for (const [part, field] of [['compute', 'compute_s'], ['exposed communication', 'exposed_communication_s'], ['optimizer', 'optimizer_s'], ['other', 'other_s']]) {
      parts.push({ n: String(p.n), part, ms: num(p[field]) * 1e3 });
    }
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    hconcat: [
      { width: 380, height: 260, title: `examples/s vs ${s.field} (dashed: ideal)`, data: { values: lines.filter((d) => d.value > 0) },
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'n', type: 'quantitative', scale: { type: 'log', base: 2 }, title: s.field },
          y: { field: 'value', type: 'quantitative', scale: { type: 'log' }, title: 'examples/s (whole job)' },
          color: { field: 'series', type: 'nominal', legend: { orient: 'bottom', columns: 1, labelLimit: 360 } },
          strokeDash: { field: 'kind', type: 'nominal', scale: { domain: ['measured', 'ideal'], range: [[1, 0], [4, 4]] }, legend: null },
          tooltip: [{ field: 'series' }, { field: 'n', title: s.field }, { field: 'kind' }, { field: 'value', format: '.4~s', title: 'examples/s' },
            { field: 'efficiency', format: '.0%' }, { field: 'share', format: '.0%', title: 'communication share' }] } },
      { width: 260, height: 260, title: `step of ${first.mode ? label(first) : 'no series'}`.slice(0, 60), data: { values: parts },
        mark: 'bar',
        encoding: {
          x: { field: 'n', type: 'ordinal', sort: null, title: s.field },
          y: { field: 'ms', type: 'quantitative', stack: 'zero', title: 'ms per step' },
          color: { field: 'part', type: 'nominal', sort: ['compute', 'exposed communication', 'optimizer', 'other'],
            scale: { range: ['#1f77b4', '#d62728', '#2ca02c', '#bbbbbb'] } },
          order: { field: 'part', sort: 'ascending' },
          tooltip: [{ field: 'n', title: s.field }, { field: 'part' }, { field: 'ms', format: '.3~f' }] } },
    ],
    resolve: { scale: { color: 'independent' } },
  };
}

// The communication roofs in words: per series its roof (alpha, beta, what
// it rests on) or why there is none.
function allreduceNote(a, r) {
  const si = (v, unit) => `${Fmt.significant3(v >= 1e9 ? v / 1e9 : v >= 1e6 ? v / 1e6 : v >= 1e3 ? v / 1e3 : v)} ${v >= 1e9 ? 'G' : v >= 1e6 ? 'M' : v >= 1e3 ? 'k' : ''}${unit}`;
  const series = (a.series || []).map((one) => {
    const roof = one.roof || {};
    const name = `${one.platform || one.fingerprint}, ${one.backend}, ${one.ranks} ranks`;
    if (!roof.fitted) return `${name}: no roof (${roof.note || 'not fitted'})`;
    const beta = num(roof.beta_bytes_per_sec) > 0 ? si(num(roof.beta_bytes_per_sec), 'B/s') : 'unresolved (latency-bound)';
    return `${name}: alpha ${Fmt.millis(num(roof.alpha_s) * 1e3)}, beta ${beta} over ${num(roof.sizes)} sizes (residual ${Fmt.percent(num(roof.relative_residual) * 100)}` +
      `${roof.constraint ? '; ' + roof.constraint : ''})`;
  });
  return `${series.length} roof(s), t(M) = alpha + M·2(n-1)/n / beta: ${series.join(' · ')}${a.note ? '; ' + a.note : ''}; ${scopeText(r)}`;
}

// Bus bandwidth against message size (log x): the measured points and
// each fitted roof's curve, one colour per (platform, backend, ranks).
function allreduceChart(a) {
  const points = [], curves = [];
  for (const one of a.series || []) {
    const name = `${one.platform || one.fingerprint}, ${one.backend}, ${one.ranks} ranks`;
    const factor = one.ranks > 1 ? 2 * (one.ranks - 1) / one.ranks : 0;
    const sizes = (one.points || []).map((p) => Number(p.bytes)).filter((b) => b > 0);
    for (const p of one.points || []) {
      if (Number(p.bytes) > 0 && factor > 0) points.push({ series: name, bytes: Number(p.bytes), busbw: num(p.bus_bytes_per_sec), time_ms: num(p.time_s) * 1e3, fraction: num(p.roof_fraction), runs: num(p.runs) });
    }
    const roof = one.roof || {};
    if (!roof.fitted || !(num(roof.beta_bytes_per_sec) > 0) || factor === 0 || sizes.length < 2) continue;
    const lo = Math.log(Math.min(...sizes)), hi = Math.log(Math.max(...sizes));
    for (let k = 0; k < 40; k++) {
      const bytes = Math.exp(lo + (hi - lo) * k / 39), bus = bytes * factor;
      curves.push({ series: name, bytes, busbw: bus / (num(roof.alpha_s) + bus / num(roof.beta_bytes_per_sec)) });
    }
  }
  const x = { field: 'bytes', type: 'quantitative', scale: { type: 'log', base: 2 }, title: 'message (bytes)' };
  const y = { field: 'busbw', type: 'quantitative', title: 'bus bandwidth (B/s)', axis: { format: '.2~s' } };
  const color = { field: 'series', type: 'nominal', legend: { orient: 'bottom', columns: 1, labelLimit: 360 } };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json', width: 560, height: 300,
    title: 'all-reduce bus bandwidth vs message size (lines: fitted roof)',
    layer: [
      { data: { values: curves }, mark: { type: 'line', strokeWidth: 2 }, encoding: { x, y, color } },
      { data: { values: points }, mark: { type: 'point', filled: true, size: 60 },
        encoding: { x, y, color, tooltip: [{ field: 'series' }, { field: 'bytes', format: ',' }, { field: 'time_ms', format: '.4~f', title: 'ms' },
          { field: 'busbw', format: '.3~s', title: 'bus B/s' }, { field: 'fraction', format: '.0%', title: 'of roof' }, { field: 'runs' }] } },
    ],
  };
}

// The one table of the dashboard's analysis kinds, in the order the page
// shows them. Per kind (its AnalyzeRequest oneof name): the panel's title,
// its form's controls, the request's selection (default: this sweep) and
// the kind's part from the form's values `f`, and how the answer `r` is
// shown (`part` is r[kind]). `auto`: drawn when the page opens (default
// yes), else `idle` says what to choose.
const kAnalysisPanels = {
  heatmap: {
    title: 'Heat map',
    controls: (ctx) => ['x ', select('x', ctx.all, ctx.x0), ' y ', select('y', ctx.all, ctx.y0),
      ' panel ', select('panel', [''].concat(ctx.all), ctx.panel0 || ''),
      ' metric ', select('metric', kMetrics, ctx.x0 === 'intra_op_threads' ? 'step_time' : 'examples_per_sec'), ' ', predictedBox(), ' '],
    request: (f, ctx) => {
      ctx.axes = { x: f.x, y: f.y };
      return { metric: f.metric, x: f.x, y: f.y, panel: f.panel };
    },
    show: async (part, r, ctx, chart, note) => {
      const cells = heatmapCells(part, ctx.rows);
      note.textContent = `${cells.length} cells; ${scopeText(r)}. Hover a cell for its configuration and statistics; click it to open its job.`;
      await embed(chart, Charts.heatmap(part, cells), (datum) => openHeatmapCell(datum, ctx));
    },
  },
  sensitivity: {
    title: 'Sensitivity (linear regression)',
    controls: () => ['metric ', select('metric', kMetrics, 'examples_per_sec'),
      checkbox('log2', ' log2 features and target', true), checkbox('interactions', ' interactions'), ' ', predictedBox(), ' '],
    request: (f) => ({ metric: f.metric, log2_features: f.log2 === 'on', log2_target: f.log2 === 'on', interactions: f.interactions === 'on' }),
    show: async (s, r, ctx, chart, note) => {
      note.textContent = `R² ${Fmt.significant3(s.r_squared)} over ${num(s.points)} points` + ((s.dropped || []).length ? `; left out: ${s.dropped.join('; ')}` : '') + `; ${scopeText(r)}`;
      await embed(chart, Charts.sensitivity(s));
    },
  },
  roofline: {
    title: 'Roofline',
    controls: () => [checkbox('include_ops', ' profiled operators'), ' '],
    request: (f) => ({ include_ops: f.include_ops === 'on' }),
    show: async (roofline, r, ctx, chart, note) => {
      note.textContent = `${(roofline.points || []).length} points against ${(roofline.roofs || []).length} platform(s)' calibrated roofs (log-log); ${scopeText(r)}`;
      await embed(chart, Charts.roofline(roofline), (d) => d.job_id && (location.hash = `#/sweep/${ctx.sweepId}/job/${d.job_id}`));
    },
  },
  boxplot: {
    title: 'Box plots',
    controls: (ctx) => ['metric ', select('metric', kMetrics, 'mfu'), ' group by ',
      select('group_by', ['precision', 'optimizer', 'family', 'device_name', 'worker'].concat(ctx.all), 'precision'), ' ', predictedBox(), ' '],
    request: (f) => ({ metric: f.metric, group_by: [f.group_by] }),
    show: async (boxplot, r, ctx, chart, note) => {
      note.textContent = `Tukey boxes (q1–q3, whiskers 1.5 IQR, outliers red); ${scopeText(r)}`;
      await embed(chart, Charts.boxplot(boxplot));
    },
  },
  speedup: {
    title: 'Speedup',
    controls: (ctx) => ['against sweep ', select('other', ctx.others.length ? ctx.others : ['(no other sweep)'], ctx.others[0]),
      ' or field ', select('field', ['sweep', 'worker', 'device_kind', 'device_name', 'libtorch_version', 'precision', 'intra_op_threads'], 'sweep'),
      ' baseline ', el('input', { name: 'baseline', size: 10, placeholder: 'value' }), ' candidate ', el('input', { name: 'candidate', size: 10, placeholder: 'value' }),
      ' metric ', select('metric', kMetrics, 'examples_per_sec'), ' colour ', select('color_by', [''].concat(ctx.all), ''), ' '],
    // Against another sweep: both sweeps, this one the candidate.
    selection: (f, ctx) => {
      if (f.field !== 'sweep') return { sweep_ids: [ctx.sweepId] };
      if (!/^\d+$/.test(f.other)) throw new ApiError(400, 'INVALID_ARGUMENT', 'there is no other sweep to compare with');
      return { sweep_ids: [Number(f.other), ctx.sweepId] };
    },
    request: (f, ctx) => {
      const bySweep = f.field === 'sweep';
      return { metric: f.metric, field: f.field, baseline: bySweep ? f.other : f.baseline,
        candidate: bySweep ? String(ctx.sweepId) : f.candidate, color_by: f.color_by };
    },
    show: async (s, r, ctx, chart, note) => {
      note.textContent = speedupNote(s, r);
      await embed(chart, Charts.speedup(s));
    },
    auto: (ctx) => ctx.others.length > 0,
    idle: 'No other sweep to compare with: pick a field and two of its values, or run another sweep.',
  },
  scaling: {
    title: 'Scaling',
    controls: (ctx) => ['field ', select('field', ['intra_op_threads'].concat(ctx.all), 'intra_op_threads'),
      ' metric ', select('metric', kMetrics, 'examples_per_sec'), ' '],
    request: (f) => ({ metric: f.metric, field: f.field }),
    show: async (scaling, r, ctx, chart, note) => {
      note.textContent = `median speedup over the smallest ${scaling.field} (dashed: perfect scaling); ${scopeText(r)}`;
      await embed(chart, Charts.scaling(scaling));
    },
    auto: (ctx) => ctx.all.includes('intra_op_threads'),
    idle: 'Draw with a field whose levels vary, such as intra_op_threads in a sweep over threads.',
  },
  scale_out: {
    title: 'Data-parallel scaling',
    controls: (ctx) => ['field ', select('field', ['hosts', 'devices'], ctx.all.includes('hosts') ? 'hosts' : 'devices'), ' '],
    request: (f) => ({ field: f.field }),
    show: async (part, r, ctx, chart, note) => {
      note.textContent = scaleOutNote(part, r);
      await embed(chart, scaleOutChart(part));
    },
    auto: (ctx) => ctx.all.includes('hosts') || ctx.all.includes('devices'),
    idle: 'Draw with a sweep over hosts (gang size) or devices (replicas per process).',
  },
  allreduce: {
    title: 'All-reduce roof',
    controls: () => [],
    request: () => ({}),
    show: async (part, r, ctx, chart, note) => {
      note.textContent = allreduceNote(part, r);
      await embed(chart, allreduceChart(part));
    },
    auto: (ctx) => ctx.family === 'allreduce',
    idle: 'Draw with a sweep of family allreduce (params.bytes over several sizes, hosts or devices for the ranks).',
  },
};

// Kinds of analysis the sweep page has no panel for, and where they are.
const kNoPanel = {
  history: 'across every sweep, not one: `paradnn history`',
  bisect: 'runs jobs of its own: `paradnn bisect`',
  tuning: 'a table of findings, no chart: `paradnn analyze tuning`',
};

// The panels of one sweep's page, in kAnalysisPanels' order.
function analyses(sweep, rows, sweeps) {
  const ctx = analysisContext(sweep, rows, sweeps);
  return Object.entries(kAnalysisPanels).map(([kind, kindPanel]) => {
    const shown = analysisPanel(kind, kindPanel.title, kindPanel.controls(ctx), async (f, chart, note) => {
      const selection = (kindPanel.selection || sweepSelection)(f, ctx);
      const r = await api('analyze', { selection, [kind]: kindPanel.request(f, ctx) });
      await kindPanel.show(r[kind], r, ctx, chart, note);
    });
    shown.auto = kindPanel.auto ? kindPanel.auto(ctx) : true;
    if (!shown.auto) shown.node.querySelector('.muted').textContent = kindPanel.idle;
    return shown;
  });
}
