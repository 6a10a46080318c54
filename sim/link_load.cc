#include "sim/link_load.h"

#include <algorithm>

namespace dejavu::sim {

std::vector<std::pair<int, double>> LinkLoad::sorted() const {
  std::vector<std::pair<int, double>> out;
  out.reserve(touched_.size());
  for (int d : touched_)
    if (bytes_[static_cast<size_t>(d)] != 0) out.emplace_back(d, bytes_[static_cast<size_t>(d)]);
  std::sort(out.begin(), out.end());
  return out;
}

void LinkLoad::add_to(std::vector<double>& dense, double scale) const {
  for (int d : touched_) dense[static_cast<size_t>(d)] += scale * bytes_[static_cast<size_t>(d)];
}

void LinkLoad::clear() {
  for (int d : touched_) bytes_[static_cast<size_t>(d)] = 0;
  touched_.clear();
}

}  // namespace dejavu::sim
