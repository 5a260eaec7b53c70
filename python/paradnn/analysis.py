"""The coordinator's analyses: requests from keywords, responses as DataFrames.

The kinds and their fields come from analysis.proto's descriptors
(AnalyzeRequest's oneof), so a field added there is a keyword here with no
other change; what the descriptors do not say (whether a kind reads stored
results, which of its response's fields are a DataFrame's rows) is this
module's one table of kinds, `_KINDS`, which tests/python checks against the
oneof. Keywords are the request's field names, plus the CLI's flag names
where they differ (`log2`, `ops`) and the selection's `where` and
`include_predicted` (AnalyzeRequest.selection, shared by every kind):

    build_request("heatmap", 1, metric="gflops", x="node", y="batch")
    build_request("sensitivity", [1, 2], metric="gflops", log2=True,
                  where={"precision": "float32"})
"""

from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd
from google.protobuf.descriptor import FieldDescriptor

from paradnn import frames
from paradnn.v1 import analysis_pb2

_ONEOF = analysis_pb2.AnalyzeRequest.DESCRIPTOR.oneofs_by_name["analysis"]
KINDS: tuple[str, ...] = tuple(field.name for field in _ONEOF.fields)
# `paradnn analyze` flag names -> request fields (client/analyze_flags.cc).
ALIASES = {"log2": "log2_features", "ops": "include_ops"}
_SELECTION_FIELDS = ("where", "include_predicted")


@dataclass(frozen=True)
class _Kind:
    """How this package serves one kind of analysis."""
    # The response's repeated field with a frame() row per element ...
    rows: str
    # ... or, when set, per element of this repeated field of each of those, with the
    # outer message's fields `leading` names (column -> field) as the first columns.
    nested: Optional[str] = None
    leading: Mapping[str, str] = dataclass_field(default_factory=dict)
    # Its request reads the results AnalyzeRequest.selection names (bisect carries its
    # own measurements: `paradnn bisect` drives it).
    reads_results: bool = True


# The one table of kinds (docs/extending.md "Add an analysis kind").
_KINDS: dict[str, _Kind] = {
    "heatmap": _Kind(rows="panels", nested="cells", leading={"panel": "panel_value"}),
    "sensitivity": _Kind(rows="weights"),
    "roofline": _Kind(rows="points"),
    "boxplot": _Kind(rows="groups"),
    "speedup": _Kind(rows="points"),
    "scaling": _Kind(rows="summary"),
    "history": _Kind(rows="series", nested="points",
                     leading={"config": "config", "hardware": "hardware"}),
    "bisect": _Kind(rows="decisions", reads_results=False),
    "scale_out": _Kind(rows="series", nested="points",
                       leading={"config": "config", "mode": "mode", "baseline_kind": "baseline_kind"}),
    "allreduce": _Kind(rows="series", nested="points",
                       leading={"platform": "platform", "fingerprint": "fingerprint",
                                "backend": "backend", "ranks": "ranks"}),
    "tuning": _Kind(rows="configs"),
}


def sweep_id_list(sweep_ids: Union[int, Iterable[int]]) -> list[int]:
    """`sweep_ids` (one id or several) as a list; ValueError unless positive integers."""
    several = isinstance(sweep_ids, Iterable) and not isinstance(sweep_ids, (str, bytes))
    ids = list(sweep_ids) if several else [sweep_ids]
    for sweep_id in ids:
        integer = isinstance(sweep_id, (int, np.integer)) and not isinstance(sweep_id, bool)
        if not integer or sweep_id <= 0:
            raise ValueError(f"sweep_ids: {sweep_id!r} is not a sweep id (a positive integer)")
    if not ids:
        raise ValueError("sweep_ids: give at least one sweep id")
    return [int(sweep_id) for sweep_id in ids]


def allowed_fields(kind: str) -> list[str]:
    """The keywords `kind` takes."""
    request = _request_descriptor(kind)
    return [f.name for f in request.fields] + list(_SELECTION_FIELDS)


def build_request(kind: str, sweep_ids: Union[int, Iterable[int]],
                  **fields: Any) -> analysis_pb2.AnalyzeRequest:
    """The AnalyzeRequest for `kind` over `sweep_ids`; ValueError naming a bad kind or field."""
    allowed = allowed_fields(kind)
    if not _kind(kind).reads_results:
        raise ValueError(f"analyze {kind}: not an analysis of stored results (`paradnn {kind}` "
                         "drives it)")
    request = analysis_pb2.AnalyzeRequest()
    inner = getattr(request, kind)
    inner.SetInParent()  # an analysis with every field defaulted is still that analysis
    request.selection.sweep_ids.extend(sweep_id_list(sweep_ids))
    for keyword, value in fields.items():
        name = ALIASES.get(keyword, keyword)
        if name not in allowed:
            raise ValueError(f"analyze {kind}: '{keyword}' is not a field; allowed: "
                             f"{', '.join(allowed)}")
        if name == "where":
            _set_where(request.selection, value)
        elif name == "include_predicted":
            _set_field(request.selection, name, value, kind)
        else:
            _set_field(inner, name, value, kind)
    return request


def _request_descriptor(kind: str):
    if kind not in KINDS:
        raise ValueError(f"analyze: '{kind}' is not an analysis; one of {', '.join(KINDS)}")
    return _ONEOF.fields[KINDS.index(kind)].message_type


def _kind(kind: str) -> _Kind:
    """`kind`'s row of the table; ValueError for a kind the proto has and the table lacks."""
    if kind not in _KINDS:
        raise ValueError(f"analyze {kind}: this paradnn package has no row for the kind "
                         "(paradnn/analysis.py _KINDS)")
    return _KINDS[kind]


def _set_where(selection: analysis_pb2.ResultSelection, where: Any) -> None:
    if not isinstance(where, Mapping):
        raise ValueError("where: a dict of field -> value, e.g. {'precision': 'float32', "
                         "'layer': 4}")
    for field, value in where.items():
        if not isinstance(field, str) or isinstance(value, (list, tuple, dict)):
            raise ValueError(f"where: {field!r}: {value!r} is not a field name and one value")
        selection.where[field] = str(value)


def _set_field(message: Any, name: str, value: Any, kind: str) -> None:
    """Sets message.name with the CLI's conveniences: "a,b" for a list of text."""
    field = message.DESCRIPTOR.fields_by_name[name]
    if field.label == FieldDescriptor.LABEL_REPEATED:
        values = value
        if isinstance(value, str):
            values = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
            raise ValueError(f"analyze {kind}: {name} takes a list of text (or 'a,b'), "
                             f"not {value!r}")
        getattr(message, name).extend(values)
    elif field.cpp_type == FieldDescriptor.CPPTYPE_BOOL:
        if not isinstance(value, bool):
            raise ValueError(f"analyze {kind}: {name} takes True or False, not {value!r}")
        setattr(message, name, value)
    elif field.cpp_type == FieldDescriptor.CPPTYPE_STRING:
        if not isinstance(value, str):
            raise ValueError(f"analyze {kind}: {name} takes text, not {value!r}")
        setattr(message, name, value)
    else:
        raise ValueError(f"analyze {kind}: {name} cannot be set from Python")


# ---- responses as DataFrames -------------------------------------------------------


def frame(response: analysis_pb2.AnalyzeResponse) -> pd.DataFrame:
    """The response's rows as a DataFrame: heat-map cells (with their panel), sensitivity
    weights, roofline points, box-plot groups, speedup points, scaling levels, history
    points (with their series' config and hardware), bisect decisions or scale-out points
    (with their series' config, mode and baseline kind). The response's
    scalar fields (metric, unit, r_squared, geomean_speedup, ...) and the count of results
    are in `.attrs`."""
    kind = response.WhichOneof("analysis")
    if kind is None:
        raise ValueError("the response holds no analysis")
    inner = getattr(response, kind)
    table = _rows_frame(inner, _kind(kind))
    table.attrs = {"analysis": kind, "results": response.results,
                   "predicted_results": response.predicted_results}
    for name, _, value in frames.message_columns(inner.DESCRIPTOR):
        table.attrs[name] = value(inner)
    return table


def _rows_frame(inner: Any, kind: _Kind) -> pd.DataFrame:
    """A row per element of `inner`'s rows field (or of each one's nested field)."""
    outer_field = inner.DESCRIPTOR.fields_by_name[kind.rows]
    outers = getattr(inner, kind.rows)
    if kind.nested is None:
        return _messages_frame(outer_field.message_type, outers)
    nested_field = outer_field.message_type.fields_by_name[kind.nested]
    pairs = [(outer, row) for outer in outers for row in getattr(outer, kind.nested)]
    outer_columns = {name: (column_kind, value) for name, column_kind, value
                     in frames.message_columns(outer_field.message_type)}
    leading = []
    for column, name in kind.leading.items():
        column_kind, value = outer_columns[name]
        leading.append((column, column_kind, [value(outer) for outer, _ in pairs]))
    return _messages_frame(nested_field.message_type, [row for _, row in pairs], leading)


def _messages_frame(descriptor: Any, messages: Sequence[Any],
                    leading: Sequence[tuple[str, str, list]] = ()) -> pd.DataFrame:
    """A row per message, a column per field; `leading` columns (name, kind, values) first."""
    columns = frames.message_columns(descriptor)
    cells = [[values[i] for _, _, values in leading] + [value(m) for _, _, value in columns]
             for i, m in enumerate(messages)]
    kinds = [(name, kind) for name, kind, _ in [*leading, *columns]]
    return frames.typed_frame(kinds, cells)


response_frame = frame
