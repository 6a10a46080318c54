#include "strategies/segment_deps.h"

#include <algorithm>

namespace dejavu::strategies {

namespace {
constexpr int8_t kCompute = 1, kWhole = 2;
constexpr int kOutside = -2, kOpen = -1;  // segment_of() for ops not in a closed segment
}  // namespace

SegmentDeps::SegmentDeps(const workloads::ModelGraph& model, const std::vector<int>& ops, bool backward)
    : model_(model), backward_(backward) {
  if (ops.empty()) return;
  const auto [lo, hi] = std::minmax_element(ops.begin(), ops.end());
  base_ = *lo;
  segment_of_.assign(*hi - *lo + 1, kOutside);
  for (int v : ops) segment_of_[v - base_] = kOpen;
}

const std::vector<std::pair<int, int8_t>>& SegmentDeps::needs(int v) const {
  needs_.clear();
  auto add = [&](int u) {
    const int k = segment_of(u);
    if (k < 0) return;  // the open segment, or outside the block (its start covers it)
    needs_.emplace_back(k, last_op_[k] == u ? kWhole : kCompute);
  };
  if (backward_)
    model_.for_each_consumer(v, add);
  else
    model_.for_each_input(v, add);
  return needs_;
}

bool SegmentDeps::needs_more(int v) const {
  for (const auto& [k, level] : needs(v))
    if (!covered(k, level)) return true;
  return false;
}

void SegmentDeps::take(int v) {
  for (const auto& [k, level] : needs(v)) {
    if (covered(k, level)) continue;
    // Waiting for k covers what k waits for; drop the deps that k covers.
    const std::vector<int8_t>& under = levels_[k];
    for (size_t i = 0; i < under.size(); ++i) open_levels_[i] = std::max(open_levels_[i], under[i]);
    open_levels_[k] = level;
    std::erase_if(open_deps_, [&](const SegmentDep& d) {  // later segments are never under k
      return d.segment == k ||
             (d.segment < static_cast<int>(under.size()) && under[d.segment] >= (d.whole ? kWhole : kCompute));
    });
    open_deps_.push_back({k, level == kWhole});
  }
}

std::vector<SegmentDep> SegmentDeps::close(const std::vector<int>& ops) {
  const int k = static_cast<int>(levels_.size());
  for (int v : ops) segment_of_[v - base_] = k;
  last_op_.push_back(ops.back());
  open_levels_.push_back(0);
  levels_.push_back(open_levels_);
  std::vector<SegmentDep> deps = std::move(open_deps_);
  std::sort(deps.begin(), deps.end(), [](const SegmentDep& a, const SegmentDep& b) { return a.segment < b.segment; });
  open_deps_.clear();
  std::fill(open_levels_.begin(), open_levels_.end(), 0);
  return deps;
}

}  // namespace dejavu::strategies
