// The first measurements of a budgeted sweep: a space-filling subset of its
// grid. A Latin hypercube over the group's feature coordinates (log-scaled
// axes, FeatureSpace) puts one target in each of n strata of every axis;
// each target takes the nearest grid configuration not yet taken, so the
// design works on any grid (constraints, PREDICTED_OOM cuts). Of several
// seeded hypercubes (kDesignHypercubes, fewer on large grids) the one whose
// closest pair of chosen points is farthest apart (maximin) is kept. Deterministic for a seed on
// every platform (its own generator, no std:: distributions).
#ifndef PARADNN_SERVER_PREDICTION_SPACE_FILLING_DESIGN_H_
#define PARADNN_SERVER_PREDICTION_SPACE_FILLING_DESIGN_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace paradnn::server::prediction {

// SplitMix64: a small generator whose sequence is fixed by its seed.
class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  double Uniform();            // in [0, 1)
  size_t Below(size_t bound);  // in [0, bound), bound > 0

 private:
  uint64_t state_;
};

inline constexpr int kDesignHypercubes = 16;
// Distance evaluations one design may spend (about a second); a large grid
// tries fewer hypercubes (SpaceFillingDesign).
inline constexpr double kDesignWork = 2e8;

// Indices into `points` (each a coordinate vector of equal size) of `count`
// new points (fewer when fewer are left), none of them in `already` (points
// measured before, e.g. reused results: they count as taken and as
// neighbours in the maximin criterion). Points are unique; order is the
// order they were chosen in.
std::vector<size_t> SpaceFillingDesign(const std::vector<std::vector<double>>& points, size_t count,
                                       uint64_t seed, const std::vector<size_t>& already = {});

// The smallest Euclidean distance between two of `chosen` (and `already`).
double MinPairDistance(const std::vector<std::vector<double>>& points,
                       const std::vector<size_t>& chosen);

}  // namespace paradnn::server::prediction

#endif  // PARADNN_SERVER_PREDICTION_SPACE_FILLING_DESIGN_H_
