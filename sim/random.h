// Seeded draws that give the same bytes on every platform: our own transforms over
// std::mt19937_64 (the standard library's distributions differ between implementations).
#pragma once

#include <cmath>
#include <cstddef>
#include <random>

namespace dejavu::sim {

using Rng = std::mt19937_64;

// Uniform on [0, 1), from the generator's top 53 bits.
inline double uniform(Rng& r) { return static_cast<double>(r() >> 11) * 0x1.0p-53; }
// Standard normal, by Box-Muller from two uniform draws.
inline double gaussian(Rng& r) {
  const double u = uniform(r) + 0x1.0p-54, v = uniform(r);
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}
// An integer in [0, n).
inline size_t below(Rng& r, size_t n) { return static_cast<size_t>(r() % n); }

}  // namespace dejavu::sim
