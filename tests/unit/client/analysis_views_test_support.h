// Responses of every kind of analysis with known contents, and helpers to
// read the text printed for them: shared by analysis_views_test.cc (the
// kinds over one sweep's results, JSON, display units) and
// comparison_views_test.cc (speedup, history, scaling).
#ifndef PARADNN_TESTS_UNIT_CLIENT_ANALYSIS_VIEWS_TEST_SUPPORT_H_
#define PARADNN_TESTS_UNIT_CLIENT_ANALYSIS_VIEWS_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::client::view_fixtures {

// The lines of `text`, without the empty string after a final newline.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// The line of `text` that contains `needle` ("" when none does).
inline std::string LineWith(const std::string& text, const std::string& needle) {
  for (const std::string& line : Lines(text)) {
    if (line.find(needle) != std::string::npos) return line;
  }
  ADD_FAILURE() << "no line with " << needle << " in\n" << text;
  return "";
}

// A heat-map cell at (x, y) with nothing counted yet.
inline v1::HeatmapCell CellAt(const std::string& x, const std::string& y) {
  v1::HeatmapCell cell;
  cell.set_x(x);
  cell.set_y(y);
  return cell;
}

// examples/s by layer × batch, two panels by precision; per panel the cells
// (layer 4: OK, OK), (layer 8: OK, OOM) and, in float32 only, one
// predicted-OOM, one failed and one empty cell in a third row.
inline v1::AnalyzeResponse Heatmap() {
  v1::AnalyzeResponse response;
  response.set_results(17);
  v1::HeatmapResponse& h = *response.mutable_heatmap();
  h.set_metric("examples_per_sec");
  h.set_unit("examples/s");
  h.set_x("batch");
  h.set_y("layer");
  h.set_panel("precision");
  for (const char* x : {"64", "512"}) h.add_x_values(x);
  for (const char* y : {"4", "8", "16"}) h.add_y_values(y);
  for (const char* precision : {"float32", "bfloat16"}) {
    v1::HeatmapPanel& panel = *h.add_panels();
    panel.set_panel_value(precision);
    v1::HeatmapCell c = CellAt("64", "4");
    c.set_value(1234.5);
    c.set_ok_results(3);
    *panel.add_cells() = c;
    c = CellAt("512", "4");
    c.set_value(2.5e6);
    c.set_ok_results(1);
    *panel.add_cells() = c;
    c = CellAt("64", "8");
    c.set_value(0.5);
    c.set_ok_results(1);
    *panel.add_cells() = c;
    c = CellAt("512", "8");
    c.set_oom_results(2);
    *panel.add_cells() = c;
    if (std::string(precision) == "float32") {
      c = CellAt("64", "16");
      c.set_predicted_oom_results(1);
      *panel.add_cells() = c;
      c = CellAt("512", "16");
      c.set_failed_results(1);
      *panel.add_cells() = c;
    }
  }
  return response;
}

inline v1::SensitivityResponse Sensitivity() {
  v1::SensitivityResponse s;
  s.set_metric("examples_per_sec");
  for (const auto& [term, weight] : std::vector<std::pair<std::string, double>>{
           {"layer", 0.2}, {"batch", 0.9}, {"node", -0.45}, {"layer×node", 0.05}}) {
    v1::SensitivityWeight& w = *s.add_weights();
    w.set_term(term);
    w.set_weight(weight);
  }
  s.set_intercept(1e-17);
  s.set_r_squared(0.98712);
  s.set_points(120);
  s.set_log2_features(true);
  s.set_log2_target(true);
  return s;
}

inline v1::AnalyzeResponse Roofline() {
  v1::AnalyzeResponse response;
  v1::RooflineResponse& r = *response.mutable_roofline();
  v1::PlatformRoofs& roofs = *r.add_roofs();
  roofs.set_platform_id(3);
  roofs.set_device_name("Xeon 8375C");
  v1::MatmulRoofValue* c = roofs.add_compute();
  c->set_dtype("float32");
  c->set_flops_per_sec(247e9);
  c = roofs.add_compute();
  c->set_dtype("bfloat16");
  c->set_flops_per_sec(958e9);
  v1::BandwidthRoof* b = roofs.add_bandwidth();
  b->set_level("L2 (1 MiB)");
  b->set_bytes_per_sec(347e9);
  b = roofs.add_bandwidth();
  b->set_level("DRAM (256 MiB)");
  b->set_bytes_per_sec(45e9);
  v1::RooflinePoint* p = r.add_points();
  p->set_job_id(7);
  p->set_label("fc layer=4, node=1024");
  p->set_precision("float32");
  p->set_platform_id(3);
  p->set_intensity(12.345);
  p->set_flops_per_sec(123.5e9);
  p = r.add_points();
  p->set_job_id(7);
  p->set_label("aten::addmm");
  p->set_op(true);
  p->set_precision("float32");
  p->set_platform_id(3);
  p->set_intensity(50);
  p->set_flops_per_sec(200e9);
  return response;
}

inline v1::AnalyzeResponse Boxplot() {
  v1::AnalyzeResponse response;
  v1::BoxplotResponse& b = *response.mutable_boxplot();
  b.set_metric("gflops");
  b.set_unit("GFLOP/s");
  b.add_group_by("family");
  b.add_group_by("device_name");
  v1::BoxplotGroup& g = *b.add_groups();
  g.set_name("fc, Xeon");
  g.set_count(40);
  g.set_p2(1.5);
  g.set_p9(3);
  g.set_p50(12.26);
  g.set_p91(80);
  g.set_p98(150);
  g.set_mean(25.5);
  g.add_outliers(0.25);
  g.add_outliers(400);
  g.set_q1(6);
  g.set_q3(40);
  g.set_whisker_low(1);
  g.set_whisker_high(90);
  return response;
}

inline v1::AnalyzeResponse Speedup() {
  v1::AnalyzeResponse response;
  v1::SpeedupResponse& s = *response.mutable_speedup();
  s.set_metric("examples_per_sec");
  s.set_field("device_kind");
  s.set_baseline("cpu");
  s.set_candidate("cuda");
  s.set_color_by("batch");
  for (int i = 0; i < 3; ++i) {
    v1::SpeedupPoint& p = *s.add_points();
    p.set_config(i == 0 ? "layer=4, node=32" : "layer=8 node=64");
    p.set_params(2360000);
    p.set_baseline_value(100);
    p.set_candidate_value(100 * (i + 1));
    p.set_speedup(i + 1);
    p.set_color_value("256");
    p.set_speedup_low(i + 0.9);
    p.set_speedup_high(i + 1.1);
    p.set_p_value(i == 0 ? 0.5 : 0.001);
    p.set_q_value(i == 0 ? 0.5 : 0.0015);
    p.set_verdict(i == 0 ? "no difference detected" : "faster");
    p.set_interval_basis("paired rounds");
    p.set_baseline_runs(4);
    p.set_candidate_runs(4);
  }
  s.set_fdr(0.05);
  s.set_faster(2);
  s.set_no_difference(1);
  s.set_geomean_low(1.2);
  s.set_geomean_high(2.7);
  s.set_geomean_speedup(1.817);
  s.set_min_speedup(1);
  s.set_max_speedup(3);
  s.set_baseline_only(2);
  s.set_candidate_only(1);
  v1::SensitivityResponse& sens = *s.mutable_sensitivity();
  sens.set_metric("speedup");
  v1::SensitivityWeight& w = *sens.add_weights();
  w.set_term("batch");
  w.set_weight(-0.7);
  sens.set_r_squared(0.5);
  sens.set_points(3);
  return response;
}

inline v1::AnalyzeResponse Scaling() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  v1::AnalyzeResponse response;
  v1::ScalingResponse& s = *response.mutable_scaling();
  s.set_metric("examples_per_sec");
  s.set_field("intra_op_threads");
  for (const char* level : {"1", "2", "4"}) s.add_levels(level);
  for (const auto& [value, median] :
       std::vector<std::pair<std::string, double>>{{"1", 1}, {"2", 1.9}, {"4", 3.2}}) {
    v1::ScalingLevel& l = *s.add_summary();
    l.set_value(value);
    l.set_configs(2);
    l.set_median_speedup(median);
    l.set_min_speedup(median * 0.9);
    l.set_max_speedup(median * 1.1);
    l.set_median_efficiency(median / std::stod(value));
  }
  v1::ScalingConfig* c = s.add_configs();
  c->set_config("layer=4, node=32");
  for (double v : {100.0, 190.0, 320.0}) c->add_values(v);
  c = s.add_configs();
  c->set_config("layer=8 node=32");
  for (double v : {50.0, nan, 150.0}) c->add_values(v);
  return response;
}

}  // namespace paradnn::client::view_fixtures

#endif  // PARADNN_TESTS_UNIT_CLIENT_ANALYSIS_VIEWS_TEST_SUPPORT_H_
