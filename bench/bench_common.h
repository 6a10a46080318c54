// What every program in bench/ needs before it runs: the registries, and the source tree.
#pragma once

#include <string>

#include "sim/engine.h"
#include "strategies/builtins.h"
#include "strategies/search/searcher.h"
#include "strategies/training/builtins.h"
#include "workloads/generator.h"

namespace dejavu::bench {

inline void register_all() {
  sim::register_builtins();
  workloads::register_builtins();
  strategies::register_builtins();
  strategies::search::register_searchers();
  strategies::register_training();
}

inline std::string src(const std::string& rel) { return std::string(DEJAVU_SOURCE_DIR) + "/" + rel; }

}  // namespace dejavu::bench
