#include <memory>

#include "strategies/training/rules/update_rule.h"

namespace dejavu::strategies::convergence {

// One factory per file in this folder.
std::unique_ptr<UpdateRule> make_synchronous();
std::unique_ptr<UpdateRule> make_pipedream();
std::unique_ptr<UpdateRule> make_gossip();
std::unique_ptr<UpdateRule> make_delayed_averaging();
std::unique_ptr<UpdateRule> make_async_parameter_server();

Registry<UpdateRule>& update_rules() {
  static Registry<UpdateRule> registry("update rule");
  return registry;
}

void register_update_rules() {
  auto& r = update_rules();
  r.add("sync", "one global model, the aggregate of every live worker's gradient each iteration", make_synchronous);
  r.add("pipedream", "sync on weights `staleness` steps old (PipeDream's weight stashing)", make_pipedream);
  r.add("gossip", "a model per worker, averaged with `peers` seeded-random others or ring neighbours", make_gossip);
  r.add("delayed", "a model per worker; the average arrives `delay` steps late (delayed averaging)",
        make_delayed_averaging);
  r.add("ps-async", "asynchronous parameter server, a worker at most `staleness` steps ahead of the slowest",
        make_async_parameter_server);
}

}  // namespace dejavu::strategies::convergence
