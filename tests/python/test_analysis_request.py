"""Analysis requests from keywords, and responses as DataFrames, without a coordinator."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest

import paradnn
from paradnn.v1 import analysis_pb2


def test_heatmap_request_fields() -> None:
    request = paradnn.build_request("heatmap", 4, metric="gflops", x="node", y="batch",
                                    panel="precision", where={"layer": 4, "precision": "float32"},
                                    include_predicted=True)
    heatmap = request.heatmap
    assert request.WhichOneof("analysis") == "heatmap"
    assert (heatmap.metric, heatmap.x, heatmap.y, heatmap.panel) == ("gflops", "node", "batch",
                                                                      "precision")
    assert list(request.selection.sweep_ids) == [4]
    assert dict(request.selection.where) == {"layer": "4", "precision": "float32"}
    assert request.selection.include_predicted


def test_cli_flag_names_and_lists() -> None:
    request = paradnn.build_request("sensitivity", [1, 2], metric="gflops", log2=True,
                                    features="node, batch")
    sensitivity = request.sensitivity
    assert sensitivity.log2_features and list(sensitivity.features) == ["node", "batch"]
    assert list(request.selection.sweep_ids) == [1, 2]
    boxplot = paradnn.build_request("boxplot", 1, metric="mfu", group_by=["family"]).boxplot
    assert list(boxplot.group_by) == ["family"]
    assert paradnn.build_request("roofline", 1, ops=True).roofline.include_ops
    # Every field defaulted is still a request for that analysis.
    assert paradnn.build_request("scaling", 1).WhichOneof("analysis") == "scaling"


def test_every_kind_of_the_proto_is_offered() -> None:
    fields = analysis_pb2.AnalyzeRequest.DESCRIPTOR.oneofs_by_name["analysis"].fields
    assert paradnn.KINDS == tuple(f.name for f in fields)
    assert "speedup" in paradnn.KINDS and "scaling" in paradnn.KINDS


def test_the_table_of_kinds_has_every_kind_of_the_proto() -> None:
    """As analysis_kinds_test for the C++ tables: a kind added to the proto alone fails here,
    naming it (docs/extending.md "Add an analysis kind")."""
    from paradnn import analysis

    responses = analysis_pb2.AnalyzeResponse.DESCRIPTOR.oneofs_by_name["analysis"]
    for kind in paradnn.KINDS:
        assert kind in analysis._KINDS, f"kind {kind}: no row in paradnn/analysis.py _KINDS"
        row = analysis._KINDS[kind]
        response = responses.containing_type.fields_by_name[kind].message_type
        assert row.rows in response.fields_by_name, \
            f"kind {kind}: {response.name} has no {row.rows}"
        if row.nested is not None:
            outer = response.fields_by_name[row.rows].message_type
            assert row.nested in outer.fields_by_name, \
                f"kind {kind}: {outer.name} has no {row.nested}"
            for name in row.leading.values():
                assert name in outer.fields_by_name, f"kind {kind}: {outer.name} has no {name}"
    assert set(analysis._KINDS) == set(paradnn.KINDS), "_KINDS has a kind the proto lacks"


def _object_keys(source: str, name: str) -> list[str]:
    """The keys of `const NAME = { key: ... }` in JavaScript `source` (two-space indented)."""
    start = source.index(f"const {name} = {{")
    body = source[start:source.index("\n};", start)]
    return re.findall(r"^  (\w+): ", body, flags=re.M)


def test_the_dashboard_has_a_panel_or_a_reason_for_every_kind() -> None:
    """dashboard/src/analysis.js: every kind is in kAnalysisPanels or in kNoPanel, none in both."""
    source_dir = Path(os.environ.get("PARADNN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
    script = (source_dir / "dashboard" / "src" / "analysis.js").read_text(encoding="utf-8")
    panels, no_panel = _object_keys(script, "kAnalysisPanels"), _object_keys(script, "kNoPanel")
    for kind in paradnn.KINDS:
        assert (kind in panels) != (kind in no_panel), (
            f"kind {kind}: give it a panel in kAnalysisPanels or a reason in kNoPanel "
            "(dashboard/src/analysis.js), not both")
    assert set(panels) | set(no_panel) == set(paradnn.KINDS), \
        "the dashboard has a kind the proto lacks"


@pytest.mark.parametrize("kind, fields, message", [
    ("heat", {}, "'heat' is not an analysis; one of heatmap, sensitivity, roofline"),
    ("heatmap", {"colour": "x"}, "analyze heatmap: 'colour' is not a field; allowed: metric, x"),
    ("heatmap", {"selection": None}, "'selection' is not a field"),
    ("heatmap", {"x": 3}, "analyze heatmap: x takes text, not 3"),
    ("sensitivity", {"log2": "yes"}, "log2_features takes True or False"),
    ("boxplot", {"group_by": [1]}, "group_by takes a list of text"),
    ("heatmap", {"where": "layer=4"}, "where: a dict of field -> value"),
    ("bisect", {}, "analyze bisect: not an analysis of stored results"),
])
def test_bad_arguments_name_the_field_and_what_is_allowed(kind, fields, message) -> None:
    with pytest.raises(ValueError, match=message):
        paradnn.build_request(kind, 1, **fields)


@pytest.mark.parametrize("sweep_ids", [0, -1, [], ["1"], True, 1.5])
def test_bad_sweep_ids(sweep_ids) -> None:
    with pytest.raises(ValueError, match="sweep_ids"):
        paradnn.build_request("roofline", sweep_ids)


def test_heatmap_frame_has_a_row_per_cell_with_its_panel() -> None:
    response = analysis_pb2.AnalyzeResponse(results=3)
    response.heatmap.metric, response.heatmap.unit = "gflops", "GFLOP/s"
    panel = response.heatmap.panels.add(panel_value="float32")
    panel.cells.add(x="32", y="16", value=1.5, ok_results=1)
    panel.cells.add(x="64", y="16", oom_results=1)  # no value: NaN, not 0
    cells = paradnn.frame(response)
    assert list(cells["panel"]) == ["float32", "float32"]
    assert cells.loc[0, "value"] == 1.5 and math.isnan(cells.loc[1, "value"])
    assert list(cells["oom_results"]) == [0, 1]
    assert cells.attrs["unit"] == "GFLOP/s" and cells.attrs["results"] == 3


def test_other_frames_take_their_rows() -> None:
    response = analysis_pb2.AnalyzeResponse()
    response.boxplot.groups.add(name="fc", count=4, p50=2.0, outliers=[9.0, 10.0])
    groups = paradnn.frame(response)
    assert list(groups["name"]) == ["fc"] and list(groups.loc[0, "outliers"]) == [9.0, 10.0]
    response = analysis_pb2.AnalyzeResponse()
    response.scaling.summary.add(value="2", median_speedup=1.8)
    response.scaling.levels.extend(["1", "2"])
    levels = paradnn.frame(response)
    assert list(levels["value"]) == ["2"] and list(levels.attrs["levels"]) == ["1", "2"]
    with pytest.raises(ValueError, match="no analysis"):
        paradnn.frame(analysis_pb2.AnalyzeResponse())


def test_history_frame_has_a_row_per_point_with_its_series() -> None:
    response = analysis_pb2.AnalyzeResponse()
    response.history.metric = "step_time"
    series = response.history.series.add(config="fc layer=2", hardware="cpu AMD EPYC")
    series.points.add(sweep_id=1, job_id=10, value=0.5)
    series.points.add(sweep_id=2, job_id=20, value=0.6, set_aside=True)
    points = paradnn.frame(response)
    assert list(points["config"]) == ["fc layer=2", "fc layer=2"]
    assert list(points["hardware"]) == ["cpu AMD EPYC", "cpu AMD EPYC"]
    assert list(points["value"]) == [0.5, 0.6] and list(points["set_aside"]) == [False, True]
    assert points.attrs["metric"] == "step_time"


def test_scale_out_request_and_frame_have_a_row_per_point_with_its_series() -> None:
    request = paradnn.build_request("scale_out", 7, field="devices")
    assert request.WhichOneof("analysis") == "scale_out" and request.scale_out.field == "devices"
    response = analysis_pb2.AnalyzeResponse()
    response.scale_out.field = "hosts"
    series = response.scale_out.series.add(config="fc layer=2", mode="weak", batch=64,
                                           baseline_kind="data-parallel 1 rank")
    series.points.add(n=1, examples_per_sec=640.0, efficiency=1.0)
    series.points.add(n=2, examples_per_sec=1000.0, efficiency=0.78, communication_share=0.2)
    neither = response.scale_out.series.add(config="fc layer=4", mode="neither")
    neither.points.add(n=1, examples_per_sec=500.0)  # no efficiency: NaN, not 0
    points = paradnn.frame(response)
    assert list(points["config"]) == ["fc layer=2", "fc layer=2", "fc layer=4"]
    assert list(points["mode"]) == ["weak", "weak", "neither"]
    assert list(points["baseline_kind"])[:2] == ["data-parallel 1 rank"] * 2
    assert list(points["n"]) == [1, 2, 1]
    assert points.loc[1, "efficiency"] == 0.78 and math.isnan(points.loc[2, "efficiency"])
    assert points.attrs["field"] == "hosts"


def test_allreduce_request_and_frame_have_a_row_per_size_with_its_platform_and_roof() -> None:
    request = paradnn.build_request("allreduce", [7, 8])
    assert request.WhichOneof("analysis") == "allreduce"
    assert list(request.selection.sweep_ids) == [7, 8]
    response = analysis_pb2.AnalyzeResponse()
    series = response.allreduce.series.add(platform="AMD EPYC", fingerprint="cpu-a",
                                           backend="gloo", ranks=4)
    series.roof.fitted = True
    series.roof.alpha_s = 40e-6
    series.roof.beta_bytes_per_sec = 2e9
    series.points.add(bytes=1024, time_s=4.1e-5, bus_bytes_per_sec=3.7e7, roof_fraction=0.98)
    series.points.add(bytes=4 << 20, time_s=3.2e-3, bus_bytes_per_sec=1.97e9, roof_fraction=1.0)
    points = paradnn.frame(response)
    assert list(points["platform"]) == ["AMD EPYC"] * 2
    assert list(points["backend"]) == ["gloo"] * 2 and list(points["ranks"]) == [4, 4]
    assert list(points["bytes"]) == [1024, 4 << 20]
    assert points.loc[1, "roof_fraction"] == 1.0
