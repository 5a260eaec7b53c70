// The gradient buckets' harness (worker/runner/gradient_buckets.h) against
// the bare collective it wraps: 2 ranks (threads of this process, Gloo over
// loopback), message sizes 4 KiB .. 64 MiB, interleaved repetitions of
// (a) one c10d allreduce of a flat float32 tensor and (b)
// GradientBuckets::FinishBackward (overlap off, one bucket) on 4 parameters
// of the same total size, whose gradients backward has just produced. Each
// repetition starts at a barrier and is timed on rank 0; per size, the
// median of each. Prints algorithm bandwidth (bytes / time) and bus
// bandwidth (x 2(n-1)/n, nccl-tests) of both and their ratio. Target (issue
// 39): the harness at >= 0.95 of the bare collective.
// Usage: paradnn-bench-allreduce [--threads N] [--max-mib M] [--min-reps R]
#include <ATen/Parallel.h>
#include <torch/torch.h>

// ProcessGroupGloo.hpp declares its class where USE_C10D_GLOO is defined,
// as LibTorch's CMake package does for every unit that links it.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

#include "hostfacts/host_facts.h"
#include "worker/runner/gradient_buckets.h"
#include "worker/runner/platform_torch.h"

namespace {

using paradnn::runner::GradientBuckets;
using Clock = std::chrono::steady_clock;
using GroupPtr = c10::intrusive_ptr<c10d::ProcessGroup>;

constexpr int kRanks = 2;
constexpr int kParameters = 4;

struct Timings {
  std::vector<double> bare_s, harness_s, harness_allreduce_s, copy_s;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Repetitions of `bytes`: about 512 MiB moved per side, within [min_reps, 400].
int Repetitions(int64_t bytes, int min_reps) {
  return static_cast<int>(std::clamp<int64_t>((int64_t{512} << 20) / bytes, min_reps, 400));
}

// One rank's whole run; every rank issues the same collectives in the same
// order. Rank 0's times go to `out`.
void RunRank(int rank, const c10::intrusive_ptr<c10d::Store>& store,
             const std::vector<int64_t>& sizes, int min_reps, std::map<int64_t, Timings>& out) {
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  GroupPtr group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, kRanks, options);
  for (int64_t bytes : sizes) {
    const int64_t elements = bytes / 4;
    std::vector<torch::Tensor> flat = {torch::rand({elements})};
    torch::Tensor scratch = torch::empty({elements});
    std::vector<torch::Tensor> parameters, factors;
    for (int k = 0; k < kParameters; ++k) {
      parameters.push_back(torch::zeros({elements / kParameters}, torch::requires_grad()));
      factors.push_back(torch::rand({elements / kParameters}));
    }
    GradientBuckets buckets(parameters, group, /*overlap=*/false, int64_t{1} << 40,
                            int64_t{1} << 40);
    Timings timings;
    for (int rep = 0; rep < Repetitions(bytes, min_reps); ++rep) {
      group->barrier()->wait();
      Clock::time_point start = Clock::now();
      group->allreduce(flat)->wait();
      timings.bare_s.push_back(SecondsSince(start));

      torch::Tensor loss = torch::zeros({});
      for (int k = 0; k < kParameters; ++k) {
        parameters[k].mutable_grad().reset();
        loss = loss + (parameters[k] * factors[k]).sum();
      }
      loss.backward();
      group->barrier()->wait();
      start = Clock::now();
      const paradnn::runner::StepCommunication step = buckets.FinishBackward();
      timings.harness_s.push_back(SecondsSince(start));
      timings.harness_allreduce_s.push_back(step.allreduce_s);

      // The one pass over the gradients the harness adds (a copy that
      // divides by the ranks), on both ranks at once as in FinishBackward.
      group->barrier()->wait();
      start = Clock::now();
      at::div_out(scratch, flat[0], kRanks);
      timings.copy_s.push_back(SecondsSince(start));
    }
    if (rank == 0) out[bytes] = timings;
  }
}

std::string Size(int64_t bytes) {
  char text[32];
  if (bytes >= (1 << 20)) {
    std::snprintf(text, sizeof(text), "%lld MiB", static_cast<long long>(bytes >> 20));
  } else {
    std::snprintf(text, sizeof(text), "%lld KiB", static_cast<long long>(bytes >> 10));
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, max_mib = 64, min_reps = 8;
  CLI::App app{"Gradient buckets' FinishBackward against a bare c10d Gloo allreduce, 2 ranks"};
  app.add_option("--threads", threads, "Intra-op threads (each rank is a thread of its own)")
      ->capture_default_str();
  app.add_option("--max-mib", max_mib, "Largest message, MiB (from 4 KiB, x4)")
      ->capture_default_str();
  app.add_option("--min-reps", min_reps, "Fewest repetitions of a size")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  at::set_num_threads(threads);

  const paradnn::hostfacts::CpuTopology topology = paradnn::hostfacts::ReadCpuTopology();
  const std::map<std::string, std::string> stack = paradnn::runner::StackInEffect();
  const auto blas = stack.find("blas_core");
  std::printf(
      "host: %s, %d logical CPUs; BLAS core %s; intra-op threads %d; %d ranks (threads, "
      "Gloo, 127.0.0.1)\n",
      topology.model_name.c_str(), topology.logical_cpus,
      blas == stack.end() ? "-" : blas->second.c_str(), at::get_num_threads(), kRanks);

  std::vector<int64_t> sizes;
  for (int64_t bytes = 4 << 10; bytes <= (int64_t{max_mib} << 20); bytes *= 4) {
    sizes.push_back(bytes);
  }
  std::map<int64_t, Timings> results;
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::map<int64_t, Timings> ignored;
  std::thread peer([&] { RunRank(1, store, sizes, min_reps, ignored); });
  RunRank(0, store, sizes, min_reps, results);
  peer.join();

  const double bus = paradnn::runner::AllReduceBusFactor(kRanks);
  std::printf("\n%8s %5s | %10s %10s | %10s %10s %10s | %6s | %9s %6s\n", "size", "reps", "bare us",
              "bare GB/s", "harn. us", "harn. GB/s", "own GB/s", "ratio", "copy us", "bound");
  std::printf("%8s %5s | %10s %10s | %10s %10s %10s | %6s | %9s %6s\n", "", "", "median", "algbw",
              "median", "algbw", "allreduce", "", "median", "");
  for (const auto& [bytes, t] : results) {
    const double bare = Median(t.bare_s), harness = Median(t.harness_s);
    const double own = Median(t.harness_allreduce_s), copy = Median(t.copy_s);
    std::printf("%8s %5zu | %10.1f %10.3f | %10.1f %10.3f %10.3f | %6.3f | %9.1f %6.3f\n",
                Size(bytes).c_str(), t.bare_s.size(), bare * 1e6, bytes / bare / 1e9, harness * 1e6,
                bytes / harness / 1e9, bytes / own / 1e9, bare / harness, copy * 1e6,
                bare / (bare + copy));
  }
  std::printf(
      "\nGB/s = 1e9 bytes/s; algbw = bytes / time; busbw = algbw x 2(n-1)/n = algbw x %.2f "
      "here.\n",
      bus);
  std::printf(
      "harn.: FinishBackward (copy / ranks into the bucket, allreduce, wait; the gradients\n"
      "  become views of the bucket); own: the same step's allreduce_s (launch -> completion).\n"
      "ratio: harness bandwidth / bare bandwidth (target >= 0.95).\n"
      "copy: one dividing copy of the same bytes; bound: the ratio if the harness added only "
      "it.\n");
  return 0;
}
