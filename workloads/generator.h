// Workload generators: a YAML mapping with `kind: <generator>` in, a ModelGraph out.
#pragma once

#include <memory>
#include <string>

#include "sim/config_node.h"
#include "sim/registry.h"
#include "workloads/model_graph.h"

namespace dejavu::workloads {

class Generator {
 public:
  virtual ~Generator() = default;
  // Reads and validates its own keys of `config` (unknown keys are errors).
  virtual ModelGraph generate(const ConfigNode& config) const = 0;
};

Registry<Generator>& generators();
void register_builtins();

// Loads a workload YAML file (`kind` picks the generator).
ModelGraph load_workload(const ConfigNode& root);
ModelGraph load_workload_file(const std::string& path);

}  // namespace dejavu::workloads
