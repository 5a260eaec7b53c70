"""DataFrames from paradnn's messages, shared by the client and open_db.

result_frame mirrors `paradnn results --format csv` (client/output_format.cc:
BuildResultTable, ConfigColumns, MeasurementColumns) column for column and
value for value, so a number in a notebook is the number the CLI printed.
The other frames take their columns from the messages' descriptors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from paradnn.v1 import coordinator_pb2, metrics_pb2

# Column kinds and the dtypes they become. "id" columns are never absent;
# other integers are nullable (a job without a result has none); "time" is
# milliseconds since the epoch as a UTC datetime.
ID, INT, FLOAT, TEXT, BOOL, TIME, OBJECT = "id", "int", "float", "text", "bool", "time", "object"

# platform/stack_findings.h kStackKeyPrefix.
STACK_PREFIX = "stack."
PLATFORM_PREFIX = "platform_"

Platforms = Mapping[str, metrics_pb2.Platform]


def typed_frame(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> pd.DataFrame:
    """A DataFrame of `rows` (None = absent) with each column's dtype from its kind."""
    data = {}
    for index, (name, kind) in enumerate(columns):
        data[name] = _typed_column([row[index] for row in rows], kind)
    return pd.DataFrame(data, columns=[name for name, _ in columns])


def _typed_column(values: list, kind: str) -> Any:
    if kind == ID:
        return np.array(values, dtype=np.int64)
    if kind == INT:
        return pd.array(values, dtype="Int64")
    if kind == FLOAT:
        return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    if kind == BOOL:
        return pd.array(values, dtype="boolean")
    if kind == TIME:
        return pd.to_datetime(pd.array(values, dtype="Int64"), unit="ms", utc=True)
    return pd.Series(values, dtype=object)


# ---- results -------------------------------------------------------------------


@dataclass
class _RowView:
    """One result row as the measurement columns read it (output_format.cc RowView)."""

    row: coordinator_pb2.ResultRow
    m: metrics_pb2.Measurement
    stats: metrics_pb2.StepStats
    timed: bool  # outcomes other than OK carry no meaningful timing
    predicted: bool  # a budgeted sweep's unmeasured configuration

    @staticmethod
    def of(row: coordinator_pb2.ResultRow) -> "_RowView":
        measured = row.HasField("measurement")
        m = row.measurement
        timed = measured and (m.outcome == metrics_pb2.OK or m.stats.steps > 0)
        return _RowView(row, m, m.stats, timed, not measured and row.HasField("prediction"))

    def if_timed(self, value: float) -> Optional[float]:
        return _real(value) if self.timed else None

    def if_predicted(self, value: float) -> Optional[float]:
        return _real(value) if self.predicted else None

    def percent(self, fraction: float) -> Optional[float]:
        return _real(fraction * 100) if self.timed and fraction > 0 else None

    def predicted_or_timed(self, predicted: float, measured: float) -> Optional[float]:
        return _real(predicted) if self.predicted else self.if_timed(measured)


def _real(value: float) -> Optional[float]:
    # The CLI prints NaN and infinities as empty fields (ShortestDouble).
    return value if math.isfinite(value) else None


def _text(text: str) -> Optional[str]:
    return text or None


def _source(r: _RowView) -> Optional[str]:
    if r.row.HasField("measurement"):
        return "measured"
    return "predicted" if r.predicted else None


def _outcome(r: _RowView) -> str:
    if r.row.HasField("measurement"):
        return metrics_pb2.Outcome.Name(r.m.outcome)
    return coordinator_pb2.JobState.Name(r.row.state).removeprefix("JOB_")


# The columns after the configuration, in the CLI's order: name, kind, cell.
_MIB = 1024.0 * 1024.0

def _host_speed_pct(sentinel) -> Any:
    """The sentinel's matmul speed around the job against its calibration:
    the geometric mean of the readings the job holds (common/host_sentinel.h)."""
    readings = [r for r in (sentinel.compute_before, sentinel.compute_after) if r > 0]
    if not readings:
        return None
    return math.sqrt(readings[0] * readings[-1]) * 100


MEASUREMENT_COLUMNS: list[tuple[str, str, Callable[[_RowView], Any]]] = [
    ("source", TEXT, _source),
    ("examples_per_sec", FLOAT,
     lambda r: r.predicted_or_timed(r.row.prediction.examples_per_sec, r.m.examples_per_sec)),
    ("suspect", TEXT, lambda r: _text("; ".join(r.m.suspect))),
    ("step_median_ms", FLOAT,
     lambda r: r.predicted_or_timed(r.row.prediction.step_seconds * 1e3, r.stats.median_s * 1e3)),
    ("predicted_low_ms", FLOAT, lambda r: r.if_predicted(r.row.prediction.step_seconds_low * 1e3)),
    ("predicted_high_ms", FLOAT,
     lambda r: r.if_predicted(r.row.prediction.step_seconds_high * 1e3)),
    ("predicted_from", INT, lambda r: r.row.prediction.measurements if r.predicted else None),
    ("step_ci95_pct", FLOAT, lambda r: r.if_timed(r.stats.ci95_rel * 100)),
    # Where a re-run is expected on the platform (the coordinator's re-run model).
    ("rerun_pct", FLOAT,
     lambda r: r.row.rerun.half_width_rel * 100 if r.row.HasField("rerun") else None),
    ("rerun_basis", TEXT, lambda r: _text(r.row.rerun.basis) if r.row.HasField("rerun") else None),
    ("host_speed_pct", FLOAT, lambda r: _host_speed_pct(r.m.sentinel)),
    ("step_p10_ms", FLOAT, lambda r: r.if_timed(r.stats.p10_s * 1e3)),
    ("step_p90_ms", FLOAT, lambda r: r.if_timed(r.stats.p90_s * 1e3)),
    ("step_cv", FLOAT, lambda r: r.if_timed(r.stats.cv)),
    ("steps", INT, lambda r: r.stats.steps if r.timed else None),
    ("stop_reason", TEXT, lambda r: _text(r.stats.stop_reason) if r.timed else None),
    ("model_gflops_per_sec", FLOAT,
     lambda r: r.predicted_or_timed(r.row.prediction.model_flops_per_sec / 1e9,
                                    r.m.model_flops_per_sec / 1e9)),
    ("executed_gflops_per_sec", FLOAT, lambda r: r.if_timed(r.m.executed_flops_per_sec / 1e9)),
    ("mfu_pct", FLOAT, lambda r: r.percent(r.m.mfu)),
    ("hfu_pct", FLOAT, lambda r: r.percent(r.m.hfu)),
    ("silicon_mfu_pct", FLOAT, lambda r: r.percent(r.m.silicon_mfu)),
    ("intra_op_threads", INT, lambda r: r.m.intra_op_threads if r.timed else None),
    ("params", INT, lambda r: r.m.counts.params if r.m.counts.params > 0 else None),
    # The runner's peak RSS and, on CUDA, the caching allocator's peak of the job.
    ("peak_rss_mib", FLOAT, lambda r: r.m.peak_rss_bytes / _MIB if r.m.peak_rss_bytes > 0 else None),
    ("peak_device_mib", FLOAT,
     lambda r: r.m.peak_device_memory_bytes / _MIB if r.m.peak_device_memory_bytes > 0 else None),
    ("outcome", TEXT, _outcome),
    ("worker", TEXT, lambda r: _text(r.row.worker_id)),
    ("reused_from_job", INT, lambda r: r.row.reused_from_job_id or None),
    ("error", TEXT, lambda r: _text(r.m.error)),
]

_FIXED_COLUMNS = {"job_id", "repeat", "precision", "optimizer"} | {
    name for name, _, _ in MEASUREMENT_COLUMNS
}


def _config_columns(rows: Sequence[coordinator_pb2.ResultRow]) -> list[tuple[str, str, Callable]]:
    """Every hyper-parameter, option and stack setting (sorted unions), precision, optimizer."""
    params = sorted({key for row in rows for key in row.config.params})
    options = sorted({key for row in rows for key in row.config.options})
    stack = sorted({key for row in rows for key in row.config.stack})

    def shown(key: str) -> str:
        # A future family's parameter must not shadow a fixed column.
        return "param_" + key if key in _FIXED_COLUMNS else key

    # An integer is a value even when 0; a text "" is absent (TextCell).
    columns = [(shown(k), INT, lambda c, k=k: c.params[k] if k in c.params else None)
               for k in params]
    columns += [(shown(k), TEXT, lambda c, k=k: _text(c.options.get(k, ""))) for k in options]
    columns += [(STACK_PREFIX + k, TEXT, lambda c, k=k: _text(c.stack.get(k, ""))) for k in stack]
    columns += [("precision", TEXT, lambda c: _text(c.precision)),
                ("optimizer", TEXT, lambda c: _text(c.optimizer))]
    return columns


def result_frame(rows: Sequence[coordinator_pb2.ResultRow], platforms: Platforms,
                 samples: bool = False) -> pd.DataFrame:
    """One row per job: sweep_id, the CLI's result columns, then the platform's.

    `platforms` maps a fingerprint to its Platform; a row whose fingerprint
    it lacks has absent platform columns. With `samples`, a last column
    step_seconds holds each row's per-step seconds (a numpy array).
    """
    repeats = any(row.repeat > 0 for row in rows)
    config_columns = _config_columns(rows)
    platform_columns = _platform_columns()
    columns = [("sweep_id", ID), ("job_id", ID)] + ([("repeat", ID)] if repeats else [])
    columns += [(name, kind) for name, kind, _ in config_columns]
    columns += [(name, kind) for name, kind, _ in MEASUREMENT_COLUMNS]
    columns += [(PLATFORM_PREFIX + "fingerprint", TEXT)] + [(n, k) for n, k, _ in platform_columns]
    if samples:
        columns.append(("step_seconds", OBJECT))
    cells = []
    for row in rows:
        view = _RowView.of(row)
        cell = [row.sweep_id, row.job_id] + ([row.repeat] if repeats else [])
        cell += [value(row.config) for _, _, value in config_columns]
        cell += [value(view) for _, _, value in MEASUREMENT_COLUMNS]
        platform = platforms.get(row.platform_fingerprint)
        cell.append(_text(row.platform_fingerprint))
        cell += [None if platform is None else value(platform) for _, _, value in platform_columns]
        if samples:
            cell.append(np.array(row.measurement.step_seconds, dtype=np.float64))
        cells.append(cell)
    return typed_frame(columns, cells)


# ---- messages as rows ------------------------------------------------------------


def _kind_of(field: FieldDescriptor) -> str:
    if field.label == FieldDescriptor.LABEL_REPEATED:
        return OBJECT
    if field.cpp_type in (FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64,
                          FieldDescriptor.CPPTYPE_UINT32, FieldDescriptor.CPPTYPE_UINT64):
        return INT
    if field.cpp_type in (FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT):
        return FLOAT
    if field.cpp_type == FieldDescriptor.CPPTYPE_BOOL:
        return BOOL
    return TEXT


def field_value(message: Any, field: FieldDescriptor) -> Any:
    """A field as a cell: None when an optional field is unset, arrays for repeated."""
    value = getattr(message, field.name)
    if field.label == FieldDescriptor.LABEL_REPEATED:
        return np.array(value)
    if field.containing_oneof is not None and not message.HasField(field.name):
        return None
    if field.cpp_type == FieldDescriptor.CPPTYPE_ENUM:
        known = field.enum_type.values_by_number.get(value)
        return known.name if known is not None else str(value)
    return value


def message_columns(descriptor: Descriptor, prefix: str = "",
                    skip: Iterable[str] = ()) -> list[tuple[str, str, Callable[[Any], Any]]]:
    """Every scalar field of `descriptor` (and repeated scalars as arrays) as a column."""
    columns = []
    for field in descriptor.fields:
        if field.name in skip or field.cpp_type == FieldDescriptor.CPPTYPE_MESSAGE:
            continue
        columns.append((prefix + field.name, _kind_of(field), lambda m, f=field: field_value(m, f)))
    return columns


def _platform_columns() -> list[tuple[str, str, Callable]]:
    """platform_<field> for every scalar Platform field but the fingerprint (the row's own
    comes first); "" (not readable on that host) is absent, calibrated_unix_ms a time."""
    columns = message_columns(metrics_pb2.Platform.DESCRIPTOR, PLATFORM_PREFIX,
                              skip=("fingerprint",))
    columns = [(name, kind, (lambda p, v=value: _text(v(p))) if kind == TEXT else value)
               for name, kind, value in columns if kind != OBJECT]
    return _timestamp_columns(columns)


def _timestamp_columns(columns: list[tuple[str, str, Callable]]) -> list[tuple[str, str, Callable]]:
    """X_unix_ms becomes X_at, a UTC datetime (0 = not yet: NaT)."""
    out = []
    for name, kind, value in columns:
        if name.endswith("_unix_ms"):
            at = name.removesuffix("_unix_ms") + "_at"
            out.append((at, TIME, lambda m, v=value: v(m) or None))
        else:
            out.append((name, kind, value))
    return out


def _frame(columns: list[tuple[str, str, Callable]], messages: Sequence[Any]) -> pd.DataFrame:
    """A row per message, a column per (name, kind, value of a message)."""
    return typed_frame([(name, kind) for name, kind, _ in columns],
                       [[value(m) for _, _, value in columns] for m in messages])


# ---- sweeps, workers, goodput ----------------------------------------------------


def _sweep_state(sweep: coordinator_pb2.SweepStatus) -> str:
    # As `paradnn status --format csv` names them: "running", "done", ...
    return coordinator_pb2.SweepState.Name(sweep.state).removeprefix("SWEEP_").lower()


def sweeps_frame(sweeps: Sequence[coordinator_pb2.SweepStatus]) -> pd.DataFrame:
    """One row per sweep: every SweepStatus field but the spec (its budget_seconds
    excepted), times as UTC datetimes."""
    columns = [(name, kind, _sweep_state if name == "state" else value)
               for name, kind, value in message_columns(coordinator_pb2.SweepStatus.DESCRIPTOR)]
    columns.append(("budget_seconds", FLOAT, lambda s: s.spec.run.budget_seconds))
    return _frame(_timestamp_columns(columns), sweeps)


def workers_frame(workers: Sequence[coordinator_pb2.WorkerInfo]) -> pd.DataFrame:
    """One row per worker: its WorkerInfo fields and its platform's (as in result_frame)."""
    platform = [(PLATFORM_PREFIX + "fingerprint", TEXT, lambda p: _text(p.fingerprint))]
    platform += _platform_columns()
    columns = _timestamp_columns(message_columns(coordinator_pb2.WorkerInfo.DESCRIPTOR))
    columns += [(name, kind, lambda w, v=value: v(w.platform) if w.HasField("platform") else None)
                for name, kind, value in platform]
    return _frame(columns, workers)


def goodput_frame(response: coordinator_pb2.FleetGoodputResponse) -> pd.DataFrame:
    """A row per device kind and the total (device_kind "total"), as `paradnn fleet --format
    csv` prints them."""
    total = coordinator_pb2.Goodput()
    total.CopyFrom(response.total)
    total.device_kind = "total"
    return _frame(message_columns(coordinator_pb2.Goodput.DESCRIPTOR),
                  list(response.device_kinds) + [total])
