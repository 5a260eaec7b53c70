// The user's own training fleet on the #/fleet page (paradnn fleet ingest,
// docs/fleet-events.md): each job's goodput, scheduling × runtime × program,
// added up by device time over the fleet and its breakdowns, with the badput
// that lost most and the jobs behind it — what `paradnn fleet report`
// prints. Uses app.js's el, num and simpleTable at call time.
'use strict';

// A share the report leaves out where it is blank (a proto3 optional).
function shareText(v) {
  return v === undefined || v === null ? '–' : Fmt.percent(num(v) * 100);
}

// The GoodputParts field of a badput cause (fleet/job_goodput.cc BadputSeconds).
function badputSeconds(parts, cause) {
  const field = { initialization: 'initialization_s', compilation: 'compilation_s', data_loading: 'data_loading_s',
    checkpointing: 'checkpointing_s', lost_progress: 'lost_progress_s' }[cause] || 'other_s';
  return num((parts || {})[field]);
}

function fleetAggregateRow(a, name) {
  const holding = num(a.device_holding_s);
  const p = a.device_parts || {};
  const part = (seconds) => (!(holding > 0) ? '–' : num(seconds) === 0 ? '0%' : Fmt.percent((num(seconds) / holding) * 100));
  return [name, num(a.jobs), shareText(a.scheduling), shareText(a.runtime), shareText(a.program), shareText(a.mpg),
    part(p.initialization_s), part(p.compilation_s), part(p.data_loading_s), part(p.checkpointing_s),
    part(p.lost_progress_s), part(p.other_s)];
}

function fleetReportSection(r) {
  const fleet = r.fleet || {};
  if (num(fleet.jobs) === 0) {
    return el('p', { class: 'muted', id: 'fleet-report-empty' },
      `no complete jobs among ${num(r.events)} stored events: paradnn fleet ingest FILE stores a fleet's training-job events (docs/fleet-events.md)`);
  }
  const breakdowns = [['device kind', r.by_device_kind], ['job size (devices)', r.by_size],
    ['framework', r.by_framework], ['workload', r.by_workload], ['day (UTC)', r.by_day]];
  const rows = [fleetAggregateRow(fleet, 'fleet')];
  for (const [title, groups] of breakdowns) {
    for (const g of groups || []) rows.push(fleetAggregateRow(g, `${title}: ${g.group}`));
  }
  const badput = (r.badput || []).filter((b) => num(b.device_s) > 0).map((b) => [b.cause,
    Fmt.clock(num(b.device_s)), Fmt.percent(num(b.share_of_holding) * 100),
    (b.top_jobs || []).map((j) => `${j.job} (${j.device_kind} × ${num(j.devices)}: ${Fmt.clock(num(j.devices) * badputSeconds(j.parts, b.cause))})`).join('; ')]);
  const roofs = (r.roofs || []).map((f) => `${f.device_kind} ${f.dtype}: ${Fmt.count(num(f.flops_per_sec) / 1e9)} GFLOP/s, ${Fmt.count(num(f.bytes_per_sec) / 1e9)} GB/s (${f.source})`);
  const blank = Object.entries(r.program_blank || {}).map(([why, jobs]) => `program blank for ${num(jobs)} jobs: ${why}`);
  return el('div', { id: 'fleet-report-section' },
    el('p', {}, `${num(fleet.jobs)} jobs, ${num(r.events)} events; shares weighted by device time; init … other: badput as shares of the device time holding devices`),
    simpleTable('fleet-report', ['', 'jobs', 'scheduling', 'runtime', 'program', 'MPG', 'init', 'compile', 'data', 'checkpoint', 'lost', 'other'], rows),
    el('h3', {}, 'Largest badput and the jobs behind it'),
    simpleTable('fleet-badput', ['cause', 'device time', 'of holding', 'jobs (device time lost)'], badput),
    el('h3', {}, 'Program goodput measured against'),
    el('ul', { id: 'fleet-roofs' }, roofs.concat(blank).map((line) => el('li', {}, line))),
    (r.incomplete || []).length ? el('ul', { class: 'muted' }, r.incomplete.map((line) => el('li', {}, `incomplete: ${line}`))) : null);
}
