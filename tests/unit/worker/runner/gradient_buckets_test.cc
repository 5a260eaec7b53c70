// Gradient buckets (worker/runner/gradient_buckets.h) on 1-4 ranks, each a
// thread of this process with its own Gloo process group over one
// in-process store: the averages against an explicit mean of each rank's
// own gradients, bucket layouts, unused parameters and a rank that stops.
#include "worker/runner/gradient_buckets.h"

// ProcessGroupGloo.hpp declares its class where USE_C10D_GLOO is defined,
// as LibTorch's CMake package does for every unit that links it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

#include "tests/support/wait_for.h"

namespace paradnn::runner {
namespace {

using std::chrono::milliseconds;
using GroupPtr = c10::intrusive_ptr<c10d::ProcessGroup>;

GroupPtr JoinLoopbackGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world,
                           milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->timeout = timeout;
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, options);
}

// Runs `body(rank, group)` on `world` threads joined in one group; a
// failure on a thread is reported here, with its rank.
void OnRanks(int world, milliseconds timeout, const std::function<void(int, GroupPtr)>& body) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::exception_ptr> failures(world);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < world; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        body(rank, JoinLoopbackGroup(store, rank, world, timeout));
      } catch (...) {
        failures[rank] = std::current_exception();
      }
    });
  }
  for (std::thread& t : ranks) t.join();
  for (int rank = 0; rank < world; ++rank) {
    if (!failures[rank]) continue;
    try {
      std::rethrow_exception(failures[rank]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << rank << ": " << e.what();
    }
  }
}

// A small network whose parameters backward reaches one after another:
// W1 [8x6], b1 [8], W2 [5x8], b2 [5], scale [1] (W1 last). `scale` takes
// part only where `use_scale`.
struct TinyNet {
  std::vector<torch::Tensor> parameters;

  TinyNet(torch::ScalarType dtype, uint64_t seed) {
    torch::manual_seed(seed);
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{8, 6}, {8}, {5, 8}, {5}, {1}}) {
      parameters.push_back(torch::randn(shape).to(dtype).requires_grad_());
    }
  }
  // The same weights as leaves of their own, for the reference gradients.
  TinyNet(const TinyNet& other) {
    for (const torch::Tensor& p : other.parameters) {
      parameters.push_back(p.detach().clone().requires_grad_());
    }
  }
  TinyNet& operator=(const TinyNet&) = delete;

  torch::Tensor Loss(const torch::Tensor& x, bool use_scale = true) const {
    const std::vector<torch::Tensor>& p = parameters;
    torch::Tensor h = torch::tanh(torch::nn::functional::linear(x, p[0], p[1]));
    torch::Tensor y = torch::nn::functional::linear(h, p[2], p[3]);
    if (use_scale) y = y * p[4];
    return (y * y).sum();
  }
};

torch::Tensor RankInput(int rank, torch::ScalarType dtype) {
  torch::manual_seed(100 + rank);
  return torch::randn({4, 6}).to(dtype);
}

struct Case {
  const char* name;
  int world;
  bool overlap;
  int64_t first_cap;
  int64_t cap;
  torch::ScalarType dtype;
};

class GradientBucketsMeanTest : public ::testing::TestWithParam<Case> {};

// Each rank's own gradients (before averaging) and the averaged ones, two
// steps each, compared after every rank is done.
TEST_P(GradientBucketsMeanTest, GradientsAreTheMeanOverRanks) {
  const Case c = GetParam();
  constexpr int kSteps = 2;
  // [step][rank][parameter]
  std::vector<std::vector<std::vector<torch::Tensor>>> own(
      kSteps, std::vector<std::vector<torch::Tensor>>(c.world));
  auto averaged = own;
  std::vector<int> bucket_counts(c.world);
  OnRanks(c.world, milliseconds(30'000), [&](int rank, GroupPtr group) {
    TinyNet net(c.dtype, 7);
    GradientBuckets buckets(net.parameters, group, c.overlap, c.cap, c.first_cap);
    bucket_counts[rank] = buckets.buckets();
    for (int step = 0; step < kSteps; ++step) {
      const torch::Tensor x = RankInput(rank + c.world * step, c.dtype);
      TinyNet reference(net);
      reference.Loss(x).backward();
      for (const torch::Tensor& p : reference.parameters) own[step][rank].push_back(p.grad());

      for (const torch::Tensor& p : net.parameters) p.mutable_grad().reset();
      net.Loss(x).backward();
      // Overlap: backward launched every bucket; otherwise none.
      EXPECT_EQ(buckets.LaunchedBuckets(), c.overlap ? buckets.buckets() : 0);
      const StepCommunication communication = buckets.FinishBackward();
      // 48 + 8 + 40 + 5 + 1 elements, float32 (Gloo adds bfloat16 in float32).
      EXPECT_EQ(communication.allreduce_bytes, 102 * 4);
      EXPECT_GT(communication.allreduce_s, 0);
      EXPECT_GE(communication.exposed_s, 0);
      EXPECT_EQ(communication.unused_parameters, 0);
      // Cloned: the gradients are views of the buckets, which the next step refills.
      for (const torch::Tensor& p : net.parameters)
        averaged[step][rank].push_back(p.grad().clone());
    }
  });
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(bucket_counts[0], bucket_counts[c.world - 1]);
  const double tolerance = c.dtype == torch::kFloat32 ? 1e-6 : 1e-2;
  for (int step = 0; step < kSteps; ++step) {
    for (size_t k = 0; k < 5; ++k) {
      torch::Tensor sum = torch::zeros_like(own[step][0][k], torch::kFloat32);
      torch::Tensor magnitude = sum.clone();
      for (int rank = 0; rank < c.world; ++rank) {
        sum += own[step][rank][k].to(torch::kFloat32);
        magnitude += own[step][rank][k].to(torch::kFloat32).abs();
      }
      const torch::Tensor mean = sum / c.world;
      for (int rank = 0; rank < c.world; ++rank) {
        const torch::Tensor got = averaged[step][rank][k];
        ASSERT_TRUE(got.defined()) << "step " << step << " rank " << rank << " parameter " << k;
        EXPECT_EQ(got.scalar_type(), c.dtype);
        const torch::Tensor error = (got.to(torch::kFloat32) - mean).abs();
        EXPECT_TRUE((error <= magnitude * tolerance + 1e-7).all().item<bool>())
            << "step " << step << " rank " << rank << " parameter " << k << ": got " << got
            << " want " << mean;
        // Every rank applies the very same averaged gradient.
        EXPECT_TRUE(torch::equal(got, averaged[step][0][k]));
      }
    }
  }
}

constexpr int64_t kOneBucket = int64_t{1} << 30;

INSTANTIATE_TEST_SUITE_P(
    Layouts, GradientBucketsMeanTest,
    ::testing::Values(
        Case{"OneBucketOverlapped", 2, true, kOneBucket, kOneBucket, torch::kFloat32},
        Case{"OneBucketAfterBackward", 2, false, kOneBucket, kOneBucket, torch::kFloat32},
        Case{"BucketPerParameterOverlapped", 2, true, 1, 1, torch::kFloat32},
        Case{"BucketPerParameterAfterBackward", 3, false, 1, 1, torch::kFloat32},
        Case{"MixedOverlapped", 3, true, 30, 100, torch::kFloat32},
        Case{"MixedAfterBackward", 4, false, 30, 100, torch::kFloat32},
        Case{"Bf16OneBucketOverlapped", 2, true, kOneBucket, kOneBucket, torch::kBFloat16},
        Case{"Bf16BucketPerParameterAfterBackward", 2, false, 1, 1, torch::kBFloat16},
        Case{"Bf16MixedOverlapped", 4, true, 20, 50, torch::kBFloat16},
        Case{"Bf16MixedAfterBackward", 3, false, 20, 50, torch::kBFloat16}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

std::vector<torch::Tensor> FloatParameters(const std::vector<int64_t>& elements) {
  std::vector<torch::Tensor> out;
  for (int64_t n : elements) out.push_back(torch::zeros({n}, torch::requires_grad()));
  return out;
}

TEST(GradientBucketsTest, BucketsFollowBackwardsOrderWithASmallFirstOne) {
  OnRanks(1, milliseconds(10'000), [](int, GroupPtr group) {
    // 16, 32, 64 and 128 bytes; backward produces them last to first.
    const std::vector<torch::Tensor> p = FloatParameters({4, 8, 16, 32});
    // The first bucket closes at 100 bytes, the others at 90.
    GradientBuckets mixed(p, group, true, /*bucket_cap_bytes=*/90, /*first_bucket_cap_bytes=*/100);
    EXPECT_EQ(mixed.BucketParameters(), (std::vector<std::vector<size_t>>{{3}, {2, 1}, {0}}));
    EXPECT_EQ(mixed.bucket_cap_bytes(), 90);
    EXPECT_EQ(mixed.first_bucket_cap_bytes(), 100);
    GradientBuckets one(p, group, true, kOneBucket, kOneBucket);
    EXPECT_EQ(one.BucketParameters(), (std::vector<std::vector<size_t>>{{3, 2, 1, 0}}));
    GradientBuckets each(p, group, false, 1, 1);
    EXPECT_EQ(each.buckets(), 4);
  });
}

TEST(GradientBucketsTest, EachBucketHoldsOneDtype) {
  OnRanks(1, milliseconds(10'000), [](int, GroupPtr group) {
    std::vector<torch::Tensor> p = FloatParameters({4, 4, 4});
    p[1] = torch::zeros({4}, torch::dtype(torch::kBFloat16).requires_grad(true));
    GradientBuckets buckets(p, group, true, kOneBucket, kOneBucket);
    EXPECT_EQ(buckets.BucketParameters(), (std::vector<std::vector<size_t>>{{2, 0}, {1}}));
  });
}

TEST(GradientBucketsTest, AnUnusedParameterTakesPartWithZeros) {
  for (const bool overlap : {true, false}) {
    std::vector<torch::Tensor> scale_grads(2);
    std::vector<int> unused(2, -1);
    std::vector<torch::Tensor> own_scale_grad(2);
    OnRanks(2, milliseconds(30'000), [&](int rank, GroupPtr group) {
      TinyNet net(torch::kFloat32, 3);
      GradientBuckets buckets(net.parameters, group, overlap, 1, 1);
      const torch::Tensor x = RankInput(rank, torch::kFloat32);
      TinyNet reference(net);
      reference.Loss(x).backward();
      own_scale_grad[rank] = reference.parameters[4].grad();
      // Rank 1 leaves `scale` out of its graph: its bucket (the first) is
      // never ready during backward, and no later one may pass it.
      net.Loss(x, /*use_scale=*/rank == 0).backward();
      if (overlap && rank == 1) {
        EXPECT_EQ(buckets.LaunchedBuckets(), 0);
      }
      unused[rank] = buckets.FinishBackward().unused_parameters;
      scale_grads[rank] = net.parameters[4].grad();
    });
    EXPECT_EQ(unused, (std::vector<int>{0, 1})) << "overlap " << overlap;
    for (const torch::Tensor& g : scale_grads) {
      ASSERT_TRUE(g.defined());
      EXPECT_TRUE(torch::allclose(g, own_scale_grad[0] / 2)) << g << " overlap " << overlap;
    }
  }
}

TEST(GradientBucketsTest, GradientsKeptIntoTheNextStepAccumulate) {
  for (const bool overlap : {true, false}) {
    std::vector<torch::Tensor> first(2), second(2), own_second(2);
    OnRanks(2, milliseconds(30'000), [&](int rank, GroupPtr group) {
      TinyNet net(torch::kFloat32, 5);
      GradientBuckets buckets(net.parameters, group, overlap, 100, 30);
      net.Loss(RankInput(rank, torch::kFloat32)).backward();
      (void)buckets.FinishBackward();
      first[rank] = net.parameters[0].grad().clone();
      // No reset: backward adds into the averaged gradient, in its bucket.
      const torch::Tensor x = RankInput(rank + 2, torch::kFloat32);
      TinyNet reference(net);
      reference.Loss(x).backward();
      own_second[rank] = reference.parameters[0].grad();
      net.Loss(x).backward();
      (void)buckets.FinishBackward();
      second[rank] = net.parameters[0].grad();
    });
    ASSERT_FALSE(HasFailure());
    const torch::Tensor want = first[0] + (own_second[0] + own_second[1]) / 2;
    for (const torch::Tensor& got : second) {
      EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-6)) << "overlap " << overlap;
    }
  }
}

TEST(GradientBucketsTest, GradientsAreLaidOutLikeTheirParameters) {
  OnRanks(2, milliseconds(30'000), [](int rank, GroupPtr group) {
    torch::Tensor weight =
        torch::ones({2, 3, 4, 5}).contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_();
    torch::Tensor bias = torch::ones({7}, torch::requires_grad());
    GradientBuckets buckets({weight, bias}, group, true);
    ((weight * (rank + 1)).sum() + (bias * (rank + 1)).sum()).backward();
    (void)buckets.FinishBackward();
    EXPECT_EQ(weight.grad().strides(), weight.strides());
    EXPECT_TRUE(torch::equal(weight.grad(), torch::full_like(weight, 1.5)));
    EXPECT_TRUE(torch::equal(bias.grad(), torch::full_like(bias, 1.5)));
  });
}

TEST(GradientBucketsTest, ARankThatStopsMakesTheOthersStepThrow) {
  for (const bool peer_leaves : {false, true}) {
    std::atomic<bool> done{false};
    std::string error;
    OnRanks(2, milliseconds(1'000), [&](int rank, GroupPtr group) {
      if (rank == 1) {
        // Joined, then no step: silent (the group's timeout) or gone.
        if (!peer_leaves) {
          EXPECT_TRUE(
              paradnn::testing::WaitFor([&] { return done.load(); }, milliseconds(120'000)));
        }
        return;
      }
      TinyNet net(torch::kFloat32, 1);
      GradientBuckets buckets(net.parameters, group, /*overlap=*/true, 1, 1);
      net.Loss(RankInput(0, torch::kFloat32)).backward();
      try {
        (void)buckets.FinishBackward();
      } catch (const std::runtime_error& e) {
        error = e.what();
      }
      done = true;
    });
    EXPECT_NE(error.find("gradient all-reduce failed: "), std::string::npos)
        << "peer leaves " << peer_leaves << ": " << error;
  }
}

TEST(GradientBucketsTest, HooksGoWithTheBuckets) {
  OnRanks(1, milliseconds(10'000), [](int, GroupPtr group) {
    const std::vector<torch::Tensor> p = FloatParameters({4});
    const std::shared_ptr<torch::autograd::Node> accumulator =
        torch::autograd::impl::grad_accumulator(p[0]);
    const size_t before = accumulator->post_hooks().size();
    {
      GradientBuckets buckets(p, group, true);
      EXPECT_EQ(accumulator->post_hooks().size(), before + 1);
    }
    EXPECT_EQ(accumulator->post_hooks().size(), before);
    // Backward without the buckets leaves the plain gradient.
    (p[0] * 3).sum().backward();
    EXPECT_TRUE(torch::equal(p[0].grad(), torch::full({4}, 3.0F)));
  });
}

TEST(GradientBucketsTest, ASecondBackwardBeforeFinishingIsRefused) {
  OnRanks(1, milliseconds(10'000), [](int, GroupPtr group) {
    const std::vector<torch::Tensor> p = FloatParameters({4});
    GradientBuckets buckets(p, group, false);
    (p[0] * 2).sum().backward();
    EXPECT_ANY_THROW((p[0] * 2).sum().backward());
    // The step still finishes (one rank: the average is the sum so far).
    EXPECT_EQ(buckets.FinishBackward().allreduce_bytes, 16);
    EXPECT_TRUE(torch::equal(p[0].grad(), torch::full({4}, 4.0F)));
  });
}

TEST(GradientBucketsTest, BadArgumentsAreNamed) {
  OnRanks(1, milliseconds(10'000), [](int, GroupPtr group) {
    const std::vector<torch::Tensor> p = FloatParameters({4});
    auto message = [&](const std::function<void()>& make) -> std::string {
      try {
        make();
      } catch (const std::invalid_argument& e) {
        return e.what();
      }
      return "";
    };
    EXPECT_NE(message([&] { GradientBuckets(p, group, true, 0); }).find("bucket_cap_bytes"),
              std::string::npos);
    EXPECT_NE(message([&] { GradientBuckets(p, group, true, 1, -1); }).find("first_bucket_cap"),
              std::string::npos);
    EXPECT_NE(message([&] { GradientBuckets(p, GroupPtr(), true); }).find("group"),
              std::string::npos);
    EXPECT_NE(
        message([&] { GradientBuckets({torch::zeros({2})}, group, true); }).find("parameters[0]"),
        std::string::npos);
    EXPECT_NE(message([&] {
                GradientBuckets({p[0], p[0]}, group, true);
              }).find("parameters[1]"),
              std::string::npos);
  });
}

TEST(GradientBucketsTest, BusFactorIsNcclTests) {
  EXPECT_DOUBLE_EQ(AllReduceBusFactor(1), 0.0);
  EXPECT_DOUBLE_EQ(AllReduceBusFactor(2), 1.0);
  EXPECT_DOUBLE_EQ(AllReduceBusFactor(4), 1.5);
  EXPECT_DOUBLE_EQ(AllReduceBusFactor(8), 1.75);
  EXPECT_THROW(AllReduceBusFactor(0), std::invalid_argument);
}

}  // namespace
}  // namespace paradnn::runner
