// Bytes per link direction (2·link + 1 when crossed from b to a), accumulated sparsely: a
// dense array sized to the network plus the list of directions touched, so that reading and
// clearing cost what a transfer or collective touched, not what the machine has. A task over
// a few GPUs of a 100,000-GPU cluster touches a few dozen of its links.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace dejavu::sim {

class LinkLoad {
 public:
  explicit LinkLoad(int directions = 0) : bytes_(static_cast<size_t>(directions), 0.0) {}

  void add(int direction, double bytes) {
    double& b = bytes_[static_cast<size_t>(direction)];
    if (b == 0 && bytes != 0) touched_.push_back(direction);
    b += bytes;
  }
  double operator[](int direction) const { return bytes_[static_cast<size_t>(direction)]; }
  int directions() const { return static_cast<int>(bytes_.size()); }
  // The directions touched since the last clear, in the order first touched.
  const std::vector<int>& touched() const { return touched_; }

  // (direction, bytes) of every touched direction, ascending by direction.
  std::vector<std::pair<int, double>> sorted() const;
  // Every direction's bytes, scaled, added into `dense` (2·link_count entries).
  void add_to(std::vector<double>& dense, double scale = 1) const;
  void clear();

 private:
  std::vector<double> bytes_;
  std::vector<int> touched_;
};

}  // namespace dejavu::sim
