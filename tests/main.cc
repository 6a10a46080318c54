#include <gtest/gtest.h>

#include "sim/engine.h"
#include "strategies/builtins.h"
#include "strategies/cluster/placement.h"
#include "strategies/search/searcher.h"
#include "strategies/training/builtins.h"
#include "workloads/generator.h"

int main(int argc, char** argv) {
  dejavu::sim::register_builtins();
  dejavu::workloads::register_builtins();
  dejavu::strategies::register_builtins();
  dejavu::strategies::search::register_searchers();
  dejavu::strategies::register_training();
  dejavu::strategies::cluster::register_placement_policies();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
