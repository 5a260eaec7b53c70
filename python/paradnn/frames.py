"""DataFrames from paradnn's messages, shared by the client and open_db.

result_frame mirrors `paradnn results --format csv` (client/result_table.cc:
BuildResultTable, ConfigColumns, MeasurementColumns) column for column and
value for value, so a number in a notebook is the number the CLI printed: its
columns after the configuration are the shown result fields, generated from
the CLI's own table (paradnn.result_fields, from db/result_fields.cc), and
read by the same rules.
The other frames take their columns from the messages' descriptors.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from paradnn.result_fields import SHOWN_FIELDS
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
    """One result row as the shown fields read it (db/result_fields.cc ShownCell)."""

    row: coordinator_pb2.ResultRow
    timed: bool  # a measurement that is OK or took timed steps
    predicted: bool  # a budgeted sweep's unmeasured configuration

    @staticmethod
    def of(row: coordinator_pb2.ResultRow) -> "_RowView":
        measured = row.HasField("measurement")
        m = row.measurement
        timed = measured and (m.outcome == metrics_pb2.OK or m.stats.steps > 0)
        return _RowView(row, timed, not measured and row.HasField("prediction"))


def _real(value: float) -> Optional[float]:
    # The CLI prints NaN and infinities as empty fields (ShortestDouble).
    return value if math.isfinite(value) else None


def _text(text: str) -> Optional[str]:
    return text or None


# The kinds of the shown units (db/result_fields.h ShownUnit).
_UNIT_KINDS = {"text": TEXT, "flag": TEXT, "integer": INT, "count": INT}


@functools.lru_cache(maxsize=None)
def _path_fields(path: str) -> tuple[tuple[str, ...], str, bool]:
    """`path`'s message fields, then its last field (or a map's key) and whether
    that is a map key: "measurement.stack.blas_core" -> (("measurement", "stack"),
    "blas_core", True)."""
    parts = path.split(".")
    descriptor = coordinator_pb2.ResultRow.DESCRIPTOR
    for index, part in enumerate(parts[:-1]):
        field = descriptor.fields_by_name[part]
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            return tuple(parts[:index + 1]), parts[index + 1], True
        descriptor = field.message_type
    return tuple(parts[:-1]), parts[-1], False


def _read(row: coordinator_pb2.ResultRow, path: str) -> Any:
    """The value at `path` (db/result_fields.h ResultField.path): a map's value by
    key ("" when absent), a repeated string joined with "; "."""
    messages, last, is_key = _path_fields(path)
    message: Any = row
    for name in messages:
        message = getattr(message, name)
    if is_key:
        return message.get(last, "")
    value = getattr(message, last)
    return value if isinstance(value, (int, float, str)) else "; ".join(value)


def _host_speed(sentinel: metrics_pb2.HostSentinel) -> Optional[float]:
    """The sentinel's speed around the job (common/host_sentinel.h HostSpeedAround)."""
    before, after = sentinel.compute_before, sentinel.compute_after
    if before > 0 and after > 0:
        return math.sqrt(before * after)
    if before > 0:
        return before
    return after if after > 0 else None


def _shown(value: Any, unit: str, multiply: float, divide: float) -> Any:
    """`value` as its column holds it: text ("" absent), an integer, or a real scaled."""
    if isinstance(value, str):
        return value or None
    if _UNIT_KINDS.get(unit) == INT:
        return int(value)
    return _real(float(value) * multiply / divide)


def _shown_cell(field: tuple, r: _RowView) -> Any:
    """One cell, by the field's rule (db/result_fields.h ShownWhen)."""
    _, _, unit, when, path, predicted_path, multiply, divide = field
    row = r.row
    if when == "source":
        return "measured" if row.HasField("measurement") else "predicted" if r.predicted else None
    if when == "outcome":
        if row.HasField("measurement"):
            return metrics_pb2.Outcome.Name(row.measurement.outcome)
        return coordinator_pb2.JobState.Name(row.state).removeprefix("JOB_")
    if when == "host_speed":
        speed = _host_speed(row.measurement.sentinel)
        return None if speed is None else _shown(speed, unit, multiply, divide)
    if when == "predicted_or_timed" and r.predicted:
        return _shown(_read(row, predicted_path), unit, multiply, divide)
    if when in ("if_timed", "if_timed_positive", "predicted_or_timed") and not r.timed:
        return None
    if when == "if_predicted" and not r.predicted:
        return None
    if when == "if_set" and not row.HasField(path.split(".")[0]):
        return None
    value = _read(row, path)
    if when in ("if_positive", "if_timed_positive") and not value > 0:
        return None
    return _shown(value, unit, multiply, divide)


# The columns after the configuration, in the CLI's order: name, kind, cell;
# generated from the one table of result fields (db/result_fields.cc).
MEASUREMENT_COLUMNS: list[tuple[str, str, Callable[[_RowView], Any]]] = [
    (field[0], _UNIT_KINDS.get(field[2], FLOAT), lambda r, f=field: _shown_cell(f, r))
    for field in SHOWN_FIELDS
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
