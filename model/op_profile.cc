#include "model/op_profile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paradnn::model {
namespace {

struct OpenRange {
  const ProfileEvent* push;
  int64_t child_ns = 0;
};

struct Totals {
  int64_t calls = 0;
  int64_t self_ns = 0;
  int64_t total_ns = 0;
  double flops = 0;
};

void SortHeaviestFirst(std::vector<v1::OpProfile>* ops) {
  std::sort(ops->begin(), ops->end(), [](const v1::OpProfile& a, const v1::OpProfile& b) {
    if (a.self_seconds() != b.self_seconds()) return a.self_seconds() > b.self_seconds();
    if (a.name() != b.name()) return a.name() < b.name();
    return a.input_shapes() < b.input_shapes();
  });
}

}  // namespace

std::vector<v1::OpProfile> AggregateProfile(const std::vector<std::vector<ProfileEvent>>& threads,
                                            int steps, double step_seconds, size_t max_ops) {
  std::map<std::pair<std::string, std::string>, Totals> by_op;
  for (const std::vector<ProfileEvent>& events : threads) {
    std::vector<OpenRange> open;
    for (const ProfileEvent& event : events) {
      if (event.push) {
        open.push_back({&event});
        continue;
      }
      // The innermost open range of this handle; ranges opened inside it and
      // never closed (rare: an exception) are discarded with it.
      auto it = std::find_if(open.rbegin(), open.rend(),
                             [&](const OpenRange& r) { return r.push->handle == event.handle; });
      if (it == open.rend()) continue;
      const size_t index = static_cast<size_t>(open.rend() - it) - 1;
      const OpenRange range = open[index];
      open.resize(index);
      const int64_t total_ns = std::max<int64_t>(0, event.time_ns - range.push->time_ns);
      Totals& totals = by_op[{range.push->name, range.push->input_shapes}];
      totals.calls += 1;
      totals.total_ns += total_ns;
      totals.self_ns += std::max<int64_t>(0, total_ns - range.child_ns);
      totals.flops += range.push->flops;
      if (!open.empty()) open.back().child_ns += total_ns;
    }
  }
  const double per_step = 1.0 / std::max(1, steps);
  std::vector<v1::OpProfile> ops;
  ops.reserve(by_op.size());
  for (const auto& [key, totals] : by_op) {
    v1::OpProfile op;
    op.set_name(key.first);
    op.set_input_shapes(key.second);
    op.set_calls(std::llround(static_cast<double>(totals.calls) * per_step));
    op.set_self_seconds(static_cast<double>(totals.self_ns) * 1e-9 * per_step);
    op.set_total_seconds(static_cast<double>(totals.total_ns) * 1e-9 * per_step);
    op.set_self_share(step_seconds > 0 ? op.self_seconds() / step_seconds : 0);
    op.set_flops(totals.flops * per_step);
    ops.push_back(std::move(op));
  }
  SortHeaviestFirst(&ops);
  if (max_ops > 0 && ops.size() > max_ops) ops.resize(max_ops);
  return ops;
}

std::string FormatShapes(const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<std::string> parts;
  parts.reserve(shapes.size());
  for (const std::vector<int64_t>& shape : shapes) {
    parts.push_back(absl::StrCat("[", absl::StrJoin(shape, ", "), "]"));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::vector<v1::OpProfile> SumByName(const std::vector<v1::OpProfile>& profile) {
  std::map<std::string, v1::OpProfile> by_name;
  for (const v1::OpProfile& op : profile) {
    v1::OpProfile& sum = by_name[op.name()];
    sum.set_name(op.name());
    // `profile` is heaviest first: the first shapes seen are the heaviest.
    if (sum.input_shapes().empty()) sum.set_input_shapes(op.input_shapes());
    sum.set_calls(sum.calls() + op.calls());
    sum.set_self_seconds(sum.self_seconds() + op.self_seconds());
    sum.set_total_seconds(sum.total_seconds() + op.total_seconds());
    sum.set_self_share(sum.self_share() + op.self_share());
    sum.set_flops(sum.flops() + op.flops());
  }
  std::vector<v1::OpProfile> ops;
  ops.reserve(by_name.size());
  for (auto& [name, op] : by_name) ops.push_back(std::move(op));
  SortHeaviestFirst(&ops);
  return ops;
}

}  // namespace paradnn::model
