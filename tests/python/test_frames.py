"""result_frame on hand-made rows: the cases a small real sweep does not produce."""

from __future__ import annotations

import numpy as np
import pandas as pd

import paradnn
from paradnn.v1 import coordinator_pb2, metrics_pb2


def row(job_id: int, **params: int) -> coordinator_pb2.ResultRow:
    r = coordinator_pb2.ResultRow(job_id=job_id, sweep_id=3, state=coordinator_pb2.JOB_DONE)
    r.config.family, r.config.precision, r.config.optimizer = "fc", "float32", "rmsprop"
    r.config.params.update(params)
    return r


def measured(job_id: int, outcome: int = metrics_pb2.OK,
             steps: int = 10) -> coordinator_pb2.ResultRow:
    r = row(job_id, node=64, batch=16)
    m = r.measurement
    m.outcome, m.examples_per_sec, m.model_flops_per_sec = outcome, 1234.5, 2.5e9
    m.stats.steps, m.stats.median_s, m.stats.ci95_rel = steps, 0.0125, 0.01
    m.stats.stop_reason = "ci"
    m.counts.params = 5000
    m.mfu = 0.25
    r.worker_id, r.platform_fingerprint = "w1", "fp1"
    return r


PLATFORMS = {"fp1": metrics_pb2.Platform(fingerprint="fp1", device_name="Xeon", cores=8)}


def test_ok_row_values_follow_the_cli() -> None:
    frame = paradnn.result_frame([measured(1)], PLATFORMS)
    first = frame.iloc[0]
    assert first["source"] == "measured" and first["outcome"] == "OK"
    assert first["step_median_ms"] == 0.0125 * 1e3
    assert first["model_gflops_per_sec"] == 2.5e9 / 1e9
    assert first["mfu_pct"] == 0.25 * 100
    assert first["step_ci95_pct"] == 0.01 * 100
    assert pd.isna(first["hfu_pct"])  # no roof: blank, not 0
    assert first["platform_device_name"] == "Xeon" and first["platform_cores"] == 8
    assert "repeat" not in frame.columns


def test_pending_and_failed_rows_have_blank_measurements() -> None:
    pending = row(2, node=32, batch=16)
    pending.state = coordinator_pb2.JOB_PENDING
    oom = measured(3, outcome=metrics_pb2.OOM, steps=0)
    oom.measurement.error = "out of memory"
    frame = paradnn.result_frame([pending, oom], PLATFORMS)
    assert list(frame["outcome"]) == ["PENDING", "OOM"]
    assert frame.loc[0, "source"] is None and frame.loc[1, "source"] == "measured"
    for column in ("examples_per_sec", "step_median_ms", "mfu_pct"):
        assert frame[column].isna().all(), column
    assert frame["steps"].isna().all() and frame["steps"].dtype == "Int64"
    # #params is shown whenever counted, timed or not.
    assert pd.isna(frame.loc[0, "params"]) and frame.loc[1, "params"] == 5000
    assert frame.loc[1, "error"] == "out of memory" and frame.loc[0, "error"] is None
    assert frame.loc[0, "platform_fingerprint"] is None and pd.isna(frame.loc[0, "platform_cores"])


def test_predicted_rows_take_the_prediction() -> None:
    r = row(4, node=128, batch=64)
    r.state = coordinator_pb2.JOB_PREDICTED
    p = r.prediction
    p.step_seconds, p.step_seconds_low, p.step_seconds_high = 0.02, 0.018, 0.023
    p.examples_per_sec, p.model_flops_per_sec, p.measurements = 3200.0, 4e9, 7
    first = paradnn.result_frame([r], {}).iloc[0]
    assert first["source"] == "predicted" and first["outcome"] == "PREDICTED"
    assert first["examples_per_sec"] == 3200.0 and first["step_median_ms"] == 0.02 * 1e3
    assert first["predicted_low_ms"] == 0.018 * 1e3 and first["predicted_from"] == 7
    assert pd.isna(first["step_p10_ms"])


def test_config_columns_are_sorted_unions_and_never_shadow_fixed_ones() -> None:
    a = measured(1)
    a.config.params["steps"] = 3  # a parameter named like a measurement column
    a.config.options["cell"] = "lstm"
    a.config.stack["blas_core"] = "Haswell"
    b = measured(2)
    b.repeat = 1
    frame = paradnn.result_frame([a, b], PLATFORMS)
    columns = list(frame.columns)
    assert columns[:8] == ["sweep_id", "job_id", "repeat", "batch", "node", "param_steps", "cell",
                           "stack.blas_core"]
    assert frame.loc[0, "param_steps"] == 3 and pd.isna(frame.loc[1, "param_steps"])
    assert frame.loc[1, "cell"] is None
    assert list(frame["repeat"]) == [0, 1]


def test_samples_column_and_empty_frames() -> None:
    a = measured(1)
    a.measurement.step_seconds.extend([0.01, 0.02])
    frame = paradnn.result_frame([a], PLATFORMS, samples=True)
    assert isinstance(frame.loc[0, "step_seconds"], np.ndarray)
    assert list(frame.loc[0, "step_seconds"]) == [0.01, 0.02]
    empty = paradnn.result_frame([], {})
    assert len(empty) == 0 and "examples_per_sec" in empty.columns
    assert empty["examples_per_sec"].dtype == np.float64
