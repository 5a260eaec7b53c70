"""The results table's shown fields, generated from db/result_fields.cc by
db/result_field_code.cc; do not edit. Regenerate with
PARADNN_UPDATE_GENERATED=1 ctest -R db_result_fields_test (in the build folder).

paradnn.frames reads it: the columns of result_frame after the configuration."""

# (name, title, unit, when, path, predicted_path, multiply, divide); what each
# means is ShownColumn and ShownWhen in db/result_fields.h.
SHOWN_FIELDS = (
    ("source", "source", "text", "source", "", "", 1.0, 1.0),
    ("examples_per_sec", "ex/s", "rate", "predicted_or_timed", "measurement.examples_per_sec", "prediction.examples_per_sec", 1.0, 1.0),
    ("suspect", "!", "flag", "always", "measurement.suspect", "", 1.0, 1.0),
    ("step_median_ms", "median", "millis", "predicted_or_timed", "measurement.stats.median_s", "prediction.step_seconds", 1000.0, 1.0),
    ("predicted_low_ms", "pred lo", "millis", "if_predicted", "prediction.step_seconds_low", "", 1000.0, 1.0),
    ("predicted_high_ms", "pred hi", "millis", "if_predicted", "prediction.step_seconds_high", "", 1000.0, 1.0),
    ("predicted_from", "pred from", "integer", "if_predicted", "prediction.measurements", "", 1.0, 1.0),
    ("step_ci95_pct", "±ci95", "percent", "if_timed", "measurement.stats.ci95_rel", "", 100.0, 1.0),
    ("rerun_pct", "±re-run", "percent", "if_set", "rerun.half_width_rel", "", 100.0, 1.0),
    ("rerun_basis", "re-run basis", "text", "if_set", "rerun.basis", "", 1.0, 1.0),
    ("host_speed_pct", "host", "percent", "host_speed", "measurement.sentinel", "", 100.0, 1.0),
    ("step_p10_ms", "p10", "millis", "if_timed", "measurement.stats.p10_s", "", 1000.0, 1.0),
    ("step_p90_ms", "p90", "millis", "if_timed", "measurement.stats.p90_s", "", 1000.0, 1.0),
    ("step_cv", "cv", "ratio", "if_timed", "measurement.stats.cv", "", 1.0, 1.0),
    ("stall_pct", "stalls", "percent", "if_timed_positive", "measurement.stats.stall_share", "", 100.0, 1.0),
    ("steps", "steps", "integer", "if_timed", "measurement.stats.steps", "", 1.0, 1.0),
    ("stop_reason", "stop", "text", "if_timed", "measurement.stats.stop_reason", "", 1.0, 1.0),
    ("model_gflops_per_sec", "model GF/s", "rate", "predicted_or_timed", "measurement.model_flops_per_sec", "prediction.model_flops_per_sec", 1.0, 1000000000.0),
    ("executed_gflops_per_sec", "exec GF/s", "rate", "if_timed", "measurement.executed_flops_per_sec", "", 1.0, 1000000000.0),
    ("mfu_pct", "MFU", "percent", "if_timed_positive", "measurement.mfu", "", 100.0, 1.0),
    ("hfu_pct", "HFU", "percent", "if_timed_positive", "measurement.hfu", "", 100.0, 1.0),
    ("silicon_mfu_pct", "MFU(si)", "percent", "if_timed_positive", "measurement.silicon_mfu", "", 100.0, 1.0),
    ("intra_op_threads", "threads", "integer", "if_timed", "measurement.intra_op_threads", "", 1.0, 1.0),
    ("replicas", "replicas", "integer", "if_positive", "measurement.concurrent_replicas.replicas", "", 1.0, 1.0),
    ("thread_pinning", "placement", "text", "if_set", "measurement.thread_pinning", "", 1.0, 1.0),
    ("params", "#params", "count", "if_positive", "measurement.counts.params", "", 1.0, 1.0),
    ("peak_rss_mib", "RSS MiB", "rate", "if_positive", "measurement.peak_rss_bytes", "", 1.0, 1048576.0),
    ("peak_device_mib", "device MiB", "rate", "if_positive", "measurement.peak_device_memory_bytes", "", 1.0, 1048576.0),
    ("ranks", "ranks", "integer", "if_positive", "measurement.data_parallel.ranks", "", 1.0, 1.0),
    ("exposed_comm_ms", "exposed comm", "millis", "if_timed_positive", "measurement.data_parallel.exposed_communication_s", "", 1000.0, 1.0),
    ("allreduce_ms", "all-reduce", "millis", "if_timed_positive", "measurement.data_parallel.allreduce_s", "", 1000.0, 1.0),
    ("busbw_gb_per_sec", "busbw GB/s", "rate", "if_timed_positive", "measurement.data_parallel.bus_bytes_per_sec", "", 1.0, 1000000000.0),
    ("outcome", "outcome", "text", "outcome", "measurement.outcome", "", 1.0, 1.0),
    ("worker", "worker", "text", "always", "worker_id", "", 1.0, 1.0),
    ("reused_from_job", "reused from", "integer", "if_positive", "reused_from_job_id", "", 1.0, 1.0),
    ("error", "error", "text", "always", "measurement.error", "", 1.0, 1.0),
)
