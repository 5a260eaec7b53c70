#include "worker/runner/op_profiler.h"

#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <chrono>
#include <string>

#include "model/op_profile.h"

namespace paradnn::runner {

std::vector<v1::OpProfile> ProfileSteps(const std::function<void()>& step, int steps,
                                        double* step_seconds) {
  namespace profiler = torch::autograd::profiler;
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::CPU,
                                                     /*report_input_shapes=*/true,
                                                     /*profile_memory=*/false,
                                                     /*with_stack=*/false,
                                                     /*with_flops=*/true);
  profiler::enableProfilerLegacy(config);
  const auto start = std::chrono::steady_clock::now();
  try {
    for (int i = 0; i < steps; ++i) step();
  } catch (...) {
    profiler::disableProfilerLegacy();
    throw;
  }
  *step_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                  std::max(1, steps);
  profiler::thread_event_lists lists = profiler::disableProfilerLegacy();

  std::vector<std::vector<model::ProfileEvent>> threads;
  threads.reserve(lists.size());
  for (std::vector<profiler::LegacyEvent>& list : lists) {
    std::vector<model::ProfileEvent>& events = threads.emplace_back();
    events.reserve(list.size());
    for (profiler::LegacyEvent& e : list) {
      if (e.kind() != profiler::EventKind::PushRange && e.kind() != profiler::EventKind::PopRange) {
        continue;
      }
      model::ProfileEvent event;
      event.push = e.kind() == profiler::EventKind::PushRange;
      event.handle = e.handle();
      event.time_ns = static_cast<int64_t>(e.cpuUs() * 1000.0);
      if (event.push) {
        event.name = e.name();
        event.input_shapes = model::FormatShapes(e.shapes());
        event.flops = static_cast<double>(e.flops());
      }
      events.push_back(std::move(event));
    }
  }
  return model::AggregateProfile(threads, steps, *step_seconds, kMaxProfiledOps);
}

}  // namespace paradnn::runner
