#include "server/prediction/space_filling_design.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace paradnn::server::prediction {

uint64_t SeededRandom::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double SeededRandom::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

size_t SeededRandom::Below(size_t bound) { return static_cast<size_t>(Next() % bound); }

namespace {

double SquaredDistance(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t d = 0; d < a.size() && d < b.size(); ++d) sum += (a[d] - b[d]) * (a[d] - b[d]);
  return sum;
}

// One Latin hypercube of `count` targets in `dims` dimensions, each target
// mapped to the nearest point not taken yet.
std::vector<size_t> OneHypercube(const std::vector<std::vector<double>>& points, size_t count,
                                 size_t dims, SeededRandom& random, std::vector<bool> taken) {
  std::vector<std::vector<size_t>> strata(dims, std::vector<size_t>(count));
  for (std::vector<size_t>& order : strata) {
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = count; i > 1; --i) std::swap(order[i - 1], order[random.Below(i)]);
  }
  std::vector<size_t> chosen;
  chosen.reserve(count);
  std::vector<double> target(dims);
  for (size_t i = 0; i < count; ++i) {
    for (size_t d = 0; d < dims; ++d) {
      target[d] =
          (static_cast<double>(strata[d][i]) + random.Uniform()) / static_cast<double>(count);
    }
    size_t best = points.size();
    double best_distance = std::numeric_limits<double>::infinity();
    for (size_t p = 0; p < points.size(); ++p) {
      if (taken[p]) continue;
      const double distance = SquaredDistance(points[p], target);
      if (distance < best_distance) {
        best_distance = distance;
        best = p;
      }
    }
    if (best == points.size()) break;
    taken[best] = true;
    chosen.push_back(best);
  }
  return chosen;
}

}  // namespace

double MinPairDistance(const std::vector<std::vector<double>>& points,
                       const std::vector<size_t>& chosen) {
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < chosen.size(); ++i) {
    for (size_t j = i + 1; j < chosen.size(); ++j) {
      best = std::min(best, SquaredDistance(points[chosen[i]], points[chosen[j]]));
    }
  }
  return std::sqrt(best);
}

std::vector<size_t> SpaceFillingDesign(const std::vector<std::vector<double>>& points, size_t count,
                                       uint64_t seed, const std::vector<size_t>& already) {
  std::vector<bool> taken(points.size(), false);
  for (size_t index : already) {
    if (index < points.size()) taken[index] = true;
  }
  const size_t free_points = static_cast<size_t>(std::count(taken.begin(), taken.end(), false));
  count = std::min(count, free_points);
  if (count == 0) return {};
  const size_t dims = points.front().size();
  SeededRandom random(seed);
  std::vector<size_t> best;
  double best_spread = -1;
  // Each hypercube maps its targets to the grid (points x count distances)
  // and is scored by its closest pair (count² more): on a 100,000-point grid
  // 16 of them took half a minute of the planner. Fewer trials keep one
  // design within about kDesignWork distances; always at least one.
  const double work_per_trial =
      static_cast<double>(points.size()) * static_cast<double>(count) +
      static_cast<double>(count + already.size()) * static_cast<double>(count + already.size()) / 2;
  const int trials = static_cast<int>(std::clamp(kDesignWork / std::max(work_per_trial, 1.0), 1.0,
                                                 static_cast<double>(kDesignHypercubes)));
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<size_t> design = OneHypercube(points, count, dims, random, taken);
    std::vector<size_t> with_already = design;
    with_already.insert(with_already.end(), already.begin(), already.end());
    const double spread = MinPairDistance(points, with_already);
    if (spread > best_spread) {
      best_spread = spread;
      best = std::move(design);
    }
  }
  return best;
}

}  // namespace paradnn::server::prediction
