#include "strategies/lowering/branches.h"

#include <queue>
#include <utility>

namespace dejavu::strategies::lowering {

namespace {
// Whether a segment's first task waits for a collective: an exchange of its own before
// it, or the end of a segment that ends with one.
bool waits_for_collective(const Segment& seg) {
  if (seg.ep_before_per_sample > 0 || seg.cp_gather_per_sample > 0) return true;
  for (const SegmentDep& d : seg.after)
    if (d.whole) return true;
  return false;
}
}  // namespace

std::vector<size_t> issue_order(const std::vector<Segment>& segs) {
  std::vector<int> waiting(segs.size());
  std::vector<std::vector<size_t>> next(segs.size());
  using Key = std::pair<bool, size_t>;  // (waits for a collective, index): smallest first
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready;
  for (size_t i = 0; i < segs.size(); ++i) {
    waiting[i] = static_cast<int>(segs[i].after.size());
    for (const SegmentDep& d : segs[i].after) next[d.segment].push_back(i);
    if (waiting[i] == 0) ready.emplace(waits_for_collective(segs[i]), i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = ready.top().second;
    ready.pop();
    order.push_back(i);
    for (size_t k : next[i])
      if (--waiting[k] == 0) ready.emplace(waits_for_collective(segs[k]), k);
  }
  return order;
}

void run_pass(SegmentEmitter& emit, const std::vector<Segment>& segs, const std::vector<SegmentTime>& times,
              int microbatch, Chain& chain) {
  if (segs.empty()) return;
  const Chain entry = chain;
  std::vector<sim::TaskId> compute(segs.size(), -1), tail(segs.size(), -1);
  std::vector<char> waited_for(segs.size(), 0);
  const std::vector<size_t> order = issue_order(segs);
  bool one_chain = true;
  for (size_t n = 0; n < order.size(); ++n) {
    const std::vector<SegmentDep>& deps = segs[order[n]].after;
    one_chain = one_chain &&
                (n == 0 ? deps.empty()
                        : deps.size() == 1 && deps[0].whole && static_cast<size_t>(deps[0].segment) == order[n - 1]);
  }
  for (size_t n = 0; n < order.size(); ++n) {
    const size_t i = order[n];
    Chain c;
    if (segs[i].after.empty()) {
      c.last = entry.last;
      c.joins = entry.joins;
    }
    for (const SegmentDep& d : segs[i].after) {
      const sim::TaskId id = d.whole ? tail[d.segment] : compute[d.segment];
      if (c.last < 0)
        c.last = id;
      else
        c.joins.push_back(id);
      if (d.whole) waited_for[d.segment] = 1;
    }
    compute[i] = emit.emit(segs[i], times[i], microbatch, c, one_chain);
    tail[i] = c.last;
    if (chain.first < 0) chain.first = c.first;
  }
  // The block's ends: the last one issued goes on as `last`, the others as joins.
  chain.joins.clear();
  chain.last = -1;
  for (size_t i : order) {
    if (waited_for[i]) continue;
    if (chain.last >= 0) chain.joins.push_back(chain.last);
    chain.last = tail[i];
  }
}

}  // namespace dejavu::strategies::lowering
