// Vega-Lite specifications of the coordinator's analyses: each function
// takes one AnalyzeResponse part (protobuf's JSON mapping, proto field
// names) and returns a spec. Formatting follows the CLI (client/output_format.cc).
'use strict';

const Fmt = (() => {
  function significant3(v) {
    const a = Math.abs(v);
    if (a >= 99.95) return v.toFixed(0);
    if (a >= 9.995) return v.toFixed(1);
    if (a >= 0.9995) return v.toFixed(2);
    return v.toFixed(3);
  }
  // 2.36M, 12.3k: the CLI's HumanCount.
  function count(value) {
    if (value === null || value === undefined || !isFinite(value)) return '';
    const suffix = ['', 'k', 'M', 'G', 'T', 'P'];
    let unit = 0;
    while (Math.abs(value) >= 999.5 && unit + 1 < suffix.length) {
      value /= 1000;
      unit += 1;
    }
    if (unit === 0 && value === Math.floor(value)) return value.toFixed(0);
    return significant3(value) + suffix[unit];
  }
  // 850 µs, 12.3 ms, 1.20 s: the CLI's HumanMillis.
  function millis(ms) {
    if (ms === null || ms === undefined || !isFinite(ms)) return '';
    if (ms === 0) return '0';
    if (Math.abs(ms) < 0.9995) return significant3(ms * 1e3) + ' µs';
    if (Math.abs(ms) < 999.5) return significant3(ms) + ' ms';
    return significant3(ms / 1e3) + ' s';
  }
  function percent(p) {
    return p === null || p === undefined || !isFinite(p) ? '' : significant3(p) + '%';
  }
  // 0:42, 1:02:03: the CLI's HumanClock.
  function clock(seconds) {
    if (!isFinite(seconds) || seconds < 0) return '--';
    const total = Math.round(seconds);
    const h = Math.floor(total / 3600), m = Math.floor(total / 60) % 60, s = total % 60;
    const two = (n) => String(n).padStart(2, '0');
    return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
  }
  // A metric's value in the unit the analysis names.
  function metric(value, unit) {
    if (value === null || value === undefined || !isFinite(value)) return '';
    if (unit === 's') return millis(value * 1e3);
    if (unit === '%' || unit === 'fraction') return percent(unit === '%' ? value : value * 100);
    return count(value) + (unit ? ' ' + unit : '');
  }
  return { count, millis, percent, clock, metric, significant3 };
})();

const Charts = (() => {
  const kConfig = {
    view: { stroke: null },
    axis: { labelFontSize: 11, titleFontSize: 12 },
    legend: { labelFontSize: 11, titleFontSize: 12 },
  };

  // A chart's top level: the Vega-Lite version and the shared config, then `spec`.
  function vegaLite(spec) {
    return { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', config: kConfig, ...spec };
  }

  function allPositive(values) {
    return values.length > 0 && values.every((v) => v > 0);
  }

  // cells: [{x, y, panel, value, ...}] as app.js enriches them with the
  // jobs of each cell; every cell has a rect (mark "cells", in SVG .cells_marks), valued or not.
  function heatmap(response, cells) {
    const values = cells.filter((c) => c.value !== null).map((c) => c.value);
    const unit = response.unit ? ` (${response.unit})` : '';
    const spec = vegaLite({
      data: { values: cells },
      layer: [
        {
          name: 'cells',
          mark: { type: 'rect', invalid: 'show', stroke: '#fff', strokeWidth: 1, cursor: 'pointer' },
          encoding: {
            x: { field: 'x', type: 'ordinal', sort: response.x_values, title: response.x },
            y: {
              field: 'y', type: 'ordinal', sort: response.y_values.slice().reverse(),
              title: response.y,
            },
            color: {
              condition: { test: 'datum.value === null', value: '#e4e4e4' },
              field: 'value', type: 'quantitative', title: response.metric + unit,
              scale: { type: allPositive(values) ? 'log' : 'linear', scheme: 'viridis' },
              legend: { format: '.3~s', titleLimit: 320, gradientLength: 160 },
            },
            stroke: {
              condition: { test: 'datum.predicted > 0', value: '#d62728' }, value: '#fff',
            },
            tooltip: [
              { field: 'configuration', title: 'configuration' },
              { field: 'label', title: response.metric + unit },
              { field: 'statistics', title: 'results' },
              { field: 'jobs', title: 'job(s)' },
              { field: 'step', title: 'median step ±ci95' },
              { field: 'utilization', title: 'MFU' },
            ],
          },
        },
        {
          // style.css lets pointer events through it to the cell below.
          name: 'labels',
          mark: { type: 'text', fontSize: 10 },
          encoding: {
            x: { field: 'x', type: 'ordinal', sort: response.x_values },
            y: { field: 'y', type: 'ordinal', sort: response.y_values.slice().reverse() },
            text: { field: 'short' },
            color: { value: '#222' },
          },
        },
      ],
      width: { step: 64 },
      height: { step: 36 },
    });
    if (response.panel) {
      const layered = { layer: spec.layer, width: spec.width, height: spec.height };
      return vegaLite({
        data: spec.data,
        facet: { field: 'panel', type: 'nominal', title: response.panel },
        columns: 3, spec: layered, resolve: { scale: { x: 'independent', y: 'independent' } },
      });
    }
    return spec;
  }

  function sensitivity(response) {
    const rows = (response.weights || []).map((w) => ({ term: w.term, weight: w.weight, fit: 'all' }));
    if (response.measured_only && (response.measured_only.weights || []).length) {
      for (const w of response.measured_only.weights) {
        rows.push({ term: w.term, weight: w.weight, fit: 'measured only' });
      }
    }
    return vegaLite({
      data: { values: rows },
      mark: { type: 'bar', tooltip: true },
      encoding: {
        y: { field: 'term', type: 'nominal', sort: null, title: null },
        x: { field: 'weight', type: 'quantitative', title: 'standardized weight (sensitivity)' },
        yOffset: { field: 'fit' },
        color: { field: 'fit', type: 'nominal', title: 'fit' },
      },
      width: 420,
    });
  }

  // Lines of every calibrated roof: a horizontal line per compute roof
  // (and its theoretical peak, dashed), a diagonal per bandwidth roof up to
  // the highest compute roof, each with a label at its end.
  function roofLines(response, xmin, xmax) {
    const lines = [];
    const labels = [];
    for (const roofs of response.roofs || []) {
      const compute = roofs.compute || [];
      const top = Math.max(...compute.map((c) => c.flops_per_sec / 1e9), 1e-9);
      for (const c of compute) {
        const peak = c.flops_per_sec / 1e9;
        const name = `${c.kernel || 'matmul'} ${c.dtype} ${Fmt.count(peak)} GF/s`;
        lines.push({ roof: name, kind: 'calibrated', x: xmin, y: peak });
        lines.push({ roof: name, kind: 'calibrated', x: xmax, y: peak });
        labels.push({ x: xmax, y: peak, text: name });
        if (c.theoretical_flops_per_sec > 0) {
          const si = c.theoretical_flops_per_sec / 1e9;
          const siName = `peak ${c.dtype} ${Fmt.count(si)} GF/s (silicon)`;
          lines.push({ roof: siName, kind: 'theoretical', x: xmin, y: si });
          lines.push({ roof: siName, kind: 'theoretical', x: xmax, y: si });
          // Mid-way, so that it does not sit on its calibrated roof's label.
          labels.push({ x: Math.sqrt(xmin * xmax), y: si, text: siName });
        }
      }
      for (const b of roofs.bandwidth || []) {
        const gbs = b.bytes_per_sec / 1e9;
        const name = `${b.level} ${Fmt.count(gbs)} GB/s`;
        const ridge = Math.min(Math.max(top / gbs, xmin), xmax);
        lines.push({ roof: name, kind: 'bandwidth', x: xmin, y: gbs * xmin });
        lines.push({ roof: name, kind: 'bandwidth', x: ridge, y: gbs * ridge });
        labels.push({ x: xmin, y: gbs * xmin, text: name });
      }
    }
    return { lines, labels };
  }

  function roofline(response) {
    const points = (response.points || [])
      .filter((p) => p.intensity > 0 && p.flops_per_sec > 0)
      .map((p) => ({
        job_id: Number(p.job_id), label: p.label, precision: p.precision,
        kind: p.op ? 'operator' : 'job', intensity: p.intensity, gflops: p.flops_per_sec / 1e9,
        comm_gflops: (p.communication_ceiling_flops_per_sec || 0) / 1e9,
      }));
    // A data-parallel job's communication ceiling: a bar over its point at
    // the FLOP/s its all-reduce at the platform's roof allows.
    const ceilings = points.filter((p) => p.comm_gflops > 0).map((p) => ({
      label: p.label, job_id: p.job_id, x: p.intensity / 1.4, x2: p.intensity * 1.4, gflops: p.comm_gflops,
    }));
    const xs = points.map((p) => p.intensity);
    const xmin = xs.length ? Math.min(...xs) / 4 : 0.1;
    const xmax = xs.length ? Math.max(...xs) * 4 : 1000;
    const { lines, labels } = roofLines(response, xmin, xmax);
    const log = { type: 'log' };
    return vegaLite({
      width: 620, height: 380,
      layer: [
        {
          data: { values: lines },
          mark: { type: 'line', clip: true },
          encoding: {
            x: { field: 'x', type: 'quantitative', scale: log, title: 'intensity (FLOP/byte)' },
            y: { field: 'y', type: 'quantitative', scale: log, title: 'GFLOP/s' },
            detail: { field: 'roof' },
            color: { value: '#555' },
            strokeDash: {
              field: 'kind', type: 'nominal', title: 'roof',
              scale: { domain: ['calibrated', 'theoretical', 'bandwidth'], range: [[1, 0], [6, 4], [2, 2]] },
            },
          },
        },
        {
          data: { values: labels },
          mark: { type: 'text', align: 'right', dy: -6, fontSize: 10, clip: true },
          encoding: {
            x: { field: 'x', type: 'quantitative', scale: log },
            y: { field: 'y', type: 'quantitative', scale: log },
            text: { field: 'text' },
          },
        },
        {
          data: { values: ceilings },
          mark: { type: 'rule', strokeWidth: 2, color: '#b22222', clip: true },
          encoding: {
            x: { field: 'x', type: 'quantitative', scale: log },
            x2: { field: 'x2' },
            y: { field: 'gflops', type: 'quantitative', scale: log },
            tooltip: [
              { field: 'label' }, { field: 'job_id', title: 'job' },
              { field: 'gflops', format: '.3~s', title: 'communication ceiling GFLOP/s' },
            ],
          },
        },
        {
          name: 'points',
          data: { values: points },
          mark: { type: 'point', filled: true, size: 50, cursor: 'pointer' },
          encoding: {
            x: { field: 'intensity', type: 'quantitative', scale: log },
            y: { field: 'gflops', type: 'quantitative', scale: log },
            color: { field: 'precision', type: 'nominal' },
            shape: { field: 'kind', type: 'nominal' },
            tooltip: [
              { field: 'label' }, { field: 'job_id', title: 'job' },
              { field: 'intensity', format: '.3~s', title: 'FLOP/byte' },
              { field: 'gflops', format: '.3~s', title: 'GFLOP/s' },
            ],
          },
        },
      ],
      resolve: { scale: { color: 'independent' } },
    });
  }

  function boxplot(response) {
    const groups = (response.groups || []).map((g) => ({ ...g, count: Number(g.count) }));
    const outliers = [];
    for (const g of groups) for (const o of g.outliers || []) outliers.push({ name: g.name, value: o });
    const y = { type: 'quantitative', title: response.metric + (response.unit ? ` (${response.unit})` : '') };
    const x = { field: 'name', type: 'nominal', title: (response.group_by || []).join(', '), sort: null };
    return vegaLite({
      width: { step: 60 }, height: 320,
      layer: [
        { data: { values: groups }, mark: 'rule',
          encoding: { x, y: { ...y, field: 'whisker_low' }, y2: { field: 'whisker_high' } } },
        { data: { values: groups }, mark: { type: 'bar', size: 28, color: '#9ecae1' },
          encoding: {
            x, y: { ...y, field: 'q1' }, y2: { field: 'q3' },
            tooltip: [
              { field: 'name', title: 'group' }, { field: 'count' },
              { field: 'p50', title: 'median', format: '.3~s' }, { field: 'q1', format: '.3~s' },
              { field: 'q3', format: '.3~s' }, { field: 'p2', format: '.3~s' },
              { field: 'p98', format: '.3~s' }, { field: 'mean', format: '.3~s' },
              { field: 'predicted' },
            ],
          } },
        { data: { values: groups }, mark: { type: 'tick', size: 28, color: '#08306b', thickness: 2 },
          encoding: { x, y: { ...y, field: 'p50' } } },
      ].concat(outliers.length ? [{ data: { values: outliers }, mark: { type: 'point', color: '#d62728' },
        encoding: { x, y: { ...y, field: 'value' } } }] : []),
    });
  }

  function speedup(response) {
    const points = (response.points || []).map((p) => ({
      ...p, params: Number(p.params), predicted: p.baseline_predicted || p.candidate_predicted,
      verdict: p.verdict || 'not enough data',
    }));
    // Each point's 95 % interval as a bar (points without one have none).
    const intervals = points.filter((p) => p.speedup_low > 0 && p.speedup_high > 0);
    const log = { type: 'log' };
    return vegaLite({
      width: 560, height: 340,
      layer: [
        {
          data: { values: points },
          mark: { type: 'point', filled: true, size: 50 },
          encoding: {
            x: { field: 'params', type: 'quantitative', scale: log, title: 'trainable parameters' },
            y: {
              field: 'speedup', type: 'quantitative', scale: log,
              title: `speedup ${response.candidate} / ${response.baseline} (${response.metric})`,
            },
            color: response.color_by ? { field: 'color_value', type: 'ordinal', title: response.color_by }
              : { value: '#1f77b4' },
            shape: { field: 'verdict', type: 'nominal', title: 'verdict',
              scale: { domain: ['faster', 'slower', 'no difference detected', 'not enough data'],
                range: ['triangle-up', 'triangle-down', 'circle', 'cross'] } },
            tooltip: [
              { field: 'config' }, { field: 'speedup', format: '.3~f' },
              { field: 'speedup_low', format: '.3~f', title: '95 % low' },
              { field: 'speedup_high', format: '.3~f', title: '95 % high' },
              { field: 'verdict' }, { field: 'interval_basis', title: 'basis' },
              { field: 'q_value', format: '.3~g', title: 'q (BH)' },
              { field: 'baseline_value', format: '.4~s', title: response.baseline },
              { field: 'candidate_value', format: '.4~s', title: response.candidate },
              { field: 'predicted', title: 'predicted side' },
            ],
          },
        },
        {
          data: { values: intervals },
          mark: { type: 'rule', opacity: 0.5 },
          encoding: {
            x: { field: 'params', type: 'quantitative', scale: log },
            y: { field: 'speedup_low', type: 'quantitative', scale: log },
            y2: { field: 'speedup_high' },
          },
        },
        {
          data: { values: [{ y: response.geomean_speedup || 1, text: `geomean ${Fmt.significant3(response.geomean_speedup || 0)}x` }] },
          layer: [
            { mark: { type: 'rule', strokeDash: [4, 4], color: '#d62728' }, encoding: { y: { field: 'y', type: 'quantitative' } } },
            { mark: { type: 'text', align: 'left', dx: 4, dy: -6, color: '#d62728' },
              encoding: { y: { field: 'y', type: 'quantitative' }, x: { value: 0 }, text: { field: 'text' } } },
          ],
        },
      ],
    });
  }

  function scaling(response) {
    const rows = (response.summary || []).map((l) => ({ ...l, value: Number(l.value), configs: Number(l.configs) }));
    const base = rows.length ? rows[0].value : 1;
    const ideal = rows.map((l) => ({ value: l.value, ideal: l.value / base }));
    return vegaLite({
      width: 420, height: 280,
      layer: [
        { data: { values: ideal }, mark: { type: 'line', strokeDash: [4, 4], color: '#999' },
          encoding: { x: { field: 'value', type: 'quantitative', title: response.field },
            y: { field: 'ideal', type: 'quantitative', title: `median speedup (${response.metric})` } } },
        { data: { values: rows }, mark: { type: 'line', point: true },
          encoding: { x: { field: 'value', type: 'quantitative' },
            y: { field: 'median_speedup', type: 'quantitative' },
            tooltip: [{ field: 'value' }, { field: 'configs' }, { field: 'median_speedup', format: '.3~f' },
              { field: 'min_speedup', format: '.3~f' }, { field: 'max_speedup', format: '.3~f' },
              { field: 'median_efficiency', format: '.0%', title: 'efficiency' }] } },
      ],
    });
  }

  // A platform's copy and triad bandwidth against the working set (log-log):
  // the cache levels show as plateaus.
  function bandwidth(points) {
    const rows = points.map((b) => ({ kernel: b.kernel, bytes: Number(b.bytes), gbs: b.bytes_per_sec / 1e9 }));
    return vegaLite({
      width: 420, height: 220,
      data: { values: rows },
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'bytes', type: 'quantitative', scale: { type: 'log' }, title: 'working set (bytes)', axis: { format: '.2~s' } },
        y: { field: 'gbs', type: 'quantitative', scale: { type: 'log' }, title: 'GB/s' },
        color: { field: 'kernel', type: 'nominal' },
        tooltip: [{ field: 'kernel' }, { field: 'bytes', format: '.3~s', title: 'bytes' }, { field: 'gbs', format: '.3~f', title: 'GB/s' }],
      },
    });
  }

  return { heatmap, sensitivity, roofline, boxplot, speedup, scaling, bandwidth };
})();
