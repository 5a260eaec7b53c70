// The mitigation of the Gloo stalls of docs/measurement.md "Stalls":
// PARADNN_GLOO_DEVICE_NICE=N (0..19; a sweep sets it as the stack setting
// env.PARADNN_GLOO_DEVICE_NICE, recorded with the result) lowers the
// priority of the threads a Gloo device starts (its event loop) to nice N,
// so that a worker thread holding a pair's lock is not kept off the CPU by
// the device thread spinning on that lock. Unset: Gloo as installed, what a
// user's job gets. Read by the runner's process groups and by the bare loop
// of bench/allreduce_family_bench.cc, so both can be compared under it.
// Torch-free.
#ifndef PARADNN_WORKER_RUNNER_GLOO_DEVICE_NICE_H_
#define PARADNN_WORKER_RUNNER_GLOO_DEVICE_NICE_H_

#include <optional>
#include <string>
#include <vector>

namespace paradnn::runner {

inline constexpr char kGlooDeviceNiceEnv[] = "PARADNN_GLOO_DEVICE_NICE";

// PARADNN_GLOO_DEVICE_NICE as a nice value 0..19; nullopt when unset,
// empty or anything else (ignored: the knob is experimental).
std::optional<int> GlooDeviceNice();

// Sets the nice value of every thread of this process that is not in
// `before` (common::ThreadIds() taken before the Gloo device was created) to
// GlooDeviceNice(), when set. Returns what was done for the log ("" when
// the knob is unset).
std::string ReniceNewThreads(const std::vector<int>& before);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_GLOO_DEVICE_NICE_H_
