// The results table's shown fields, generated from db/result_fields.cc by
// db/result_field_code.cc; do not edit. Regenerate with
// PARADNN_UPDATE_GENERATED=1 ctest -R db_result_fields_test (in the build folder).
// app.js's resultColumns reads it; what each part means is ShownColumn and
// ShownWhen in db/result_fields.h.
'use strict';

const kResultFields = [
  { name: 'source', title: 'source', unit: 'text', when: 'source', path: '', predictedPath: '', multiply: 1, divide: 1, dashboard: true },
  { name: 'examples_per_sec', title: 'ex/s', unit: 'rate', when: 'predicted_or_timed', path: 'measurement.examples_per_sec', predictedPath: 'prediction.examples_per_sec', multiply: 1, divide: 1, dashboard: true },
  { name: 'suspect', title: '!', unit: 'flag', when: 'always', path: 'measurement.suspect', predictedPath: '', multiply: 1, divide: 1, dashboard: true },
  { name: 'step_median_ms', title: 'median', unit: 'millis', when: 'predicted_or_timed', path: 'measurement.stats.median_s', predictedPath: 'prediction.step_seconds', multiply: 1000, divide: 1, dashboard: true },
  { name: 'predicted_low_ms', title: 'pred lo', unit: 'millis', when: 'if_predicted', path: 'prediction.step_seconds_low', predictedPath: '', multiply: 1000, divide: 1, dashboard: false },
  { name: 'predicted_high_ms', title: 'pred hi', unit: 'millis', when: 'if_predicted', path: 'prediction.step_seconds_high', predictedPath: '', multiply: 1000, divide: 1, dashboard: false },
  { name: 'predicted_from', title: 'pred from', unit: 'integer', when: 'if_predicted', path: 'prediction.measurements', predictedPath: '', multiply: 1, divide: 1, dashboard: false },
  { name: 'step_ci95_pct', title: '±ci95', unit: 'percent', when: 'if_timed', path: 'measurement.stats.ci95_rel', predictedPath: '', multiply: 100, divide: 1, dashboard: true },
  { name: 'rerun_pct', title: '±re-run', unit: 'percent', when: 'if_set', path: 'rerun.half_width_rel', predictedPath: '', multiply: 100, divide: 1, dashboard: false },
  { name: 'rerun_basis', title: 're-run basis', unit: 'text', when: 'if_set', path: 'rerun.basis', predictedPath: '', multiply: 1, divide: 1, dashboard: false },
  { name: 'host_speed_pct', title: 'host', unit: 'percent', when: 'host_speed', path: 'measurement.sentinel', predictedPath: '', multiply: 100, divide: 1, dashboard: false },
  { name: 'step_p10_ms', title: 'p10', unit: 'millis', when: 'if_timed', path: 'measurement.stats.p10_s', predictedPath: '', multiply: 1000, divide: 1, dashboard: false },
  { name: 'step_p90_ms', title: 'p90', unit: 'millis', when: 'if_timed', path: 'measurement.stats.p90_s', predictedPath: '', multiply: 1000, divide: 1, dashboard: false },
  { name: 'step_cv', title: 'cv', unit: 'ratio', when: 'if_timed', path: 'measurement.stats.cv', predictedPath: '', multiply: 1, divide: 1, dashboard: false },
  { name: 'stall_pct', title: 'stalls', unit: 'percent', when: 'if_timed_positive', path: 'measurement.stats.stall_share', predictedPath: '', multiply: 100, divide: 1, dashboard: false },
  { name: 'steps', title: 'steps', unit: 'integer', when: 'if_timed', path: 'measurement.stats.steps', predictedPath: '', multiply: 1, divide: 1, dashboard: true },
  { name: 'stop_reason', title: 'stop', unit: 'text', when: 'if_timed', path: 'measurement.stats.stop_reason', predictedPath: '', multiply: 1, divide: 1, dashboard: false },
  { name: 'model_gflops_per_sec', title: 'model GF/s', unit: 'rate', when: 'predicted_or_timed', path: 'measurement.model_flops_per_sec', predictedPath: 'prediction.model_flops_per_sec', multiply: 1, divide: 1000000000, dashboard: true },
  { name: 'executed_gflops_per_sec', title: 'exec GF/s', unit: 'rate', when: 'if_timed', path: 'measurement.executed_flops_per_sec', predictedPath: '', multiply: 1, divide: 1000000000, dashboard: false },
  { name: 'mfu_pct', title: 'MFU', unit: 'percent', when: 'if_timed_positive', path: 'measurement.mfu', predictedPath: '', multiply: 100, divide: 1, dashboard: true },
  { name: 'hfu_pct', title: 'HFU', unit: 'percent', when: 'if_timed_positive', path: 'measurement.hfu', predictedPath: '', multiply: 100, divide: 1, dashboard: false },
  { name: 'silicon_mfu_pct', title: 'MFU(si)', unit: 'percent', when: 'if_timed_positive', path: 'measurement.silicon_mfu', predictedPath: '', multiply: 100, divide: 1, dashboard: true },
  { name: 'intra_op_threads', title: 'threads', unit: 'integer', when: 'if_timed', path: 'measurement.intra_op_threads', predictedPath: '', multiply: 1, divide: 1, dashboard: false },
  { name: 'replicas', title: 'replicas', unit: 'integer', when: 'if_positive', path: 'measurement.concurrent_replicas.replicas', predictedPath: '', multiply: 1, divide: 1, dashboard: false },
  { name: 'thread_pinning', title: 'placement', unit: 'text', when: 'if_set', path: 'measurement.thread_pinning', predictedPath: '', multiply: 1, divide: 1, dashboard: false },
  { name: 'params', title: '#params', unit: 'count', when: 'if_positive', path: 'measurement.counts.params', predictedPath: '', multiply: 1, divide: 1, dashboard: true },
  { name: 'peak_rss_mib', title: 'RSS MiB', unit: 'rate', when: 'if_positive', path: 'measurement.peak_rss_bytes', predictedPath: '', multiply: 1, divide: 1048576, dashboard: false },
  { name: 'peak_device_mib', title: 'device MiB', unit: 'rate', when: 'if_positive', path: 'measurement.peak_device_memory_bytes', predictedPath: '', multiply: 1, divide: 1048576, dashboard: false },
  { name: 'ranks', title: 'ranks', unit: 'integer', when: 'if_positive', path: 'measurement.data_parallel.ranks', predictedPath: '', multiply: 1, divide: 1, dashboard: false },
  { name: 'exposed_comm_ms', title: 'exposed comm', unit: 'millis', when: 'if_timed_positive', path: 'measurement.data_parallel.exposed_communication_s', predictedPath: '', multiply: 1000, divide: 1, dashboard: false },
  { name: 'allreduce_ms', title: 'all-reduce', unit: 'millis', when: 'if_timed_positive', path: 'measurement.data_parallel.allreduce_s', predictedPath: '', multiply: 1000, divide: 1, dashboard: false },
  { name: 'busbw_gb_per_sec', title: 'busbw GB/s', unit: 'rate', when: 'if_timed_positive', path: 'measurement.data_parallel.bus_bytes_per_sec', predictedPath: '', multiply: 1, divide: 1000000000, dashboard: false },
  { name: 'outcome', title: 'outcome', unit: 'text', when: 'outcome', path: 'measurement.outcome', predictedPath: '', multiply: 1, divide: 1, dashboard: true },
  { name: 'worker', title: 'worker', unit: 'text', when: 'always', path: 'worker_id', predictedPath: '', multiply: 1, divide: 1, dashboard: true },
  { name: 'reused_from_job', title: 'reused from', unit: 'integer', when: 'if_positive', path: 'reused_from_job_id', predictedPath: '', multiply: 1, divide: 1, dashboard: false },
  { name: 'error', title: 'error', unit: 'text', when: 'always', path: 'measurement.error', predictedPath: '', multiply: 1, divide: 1, dashboard: false },
];
