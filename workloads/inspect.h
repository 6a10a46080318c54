// What a workload is made of: parameters, FLOPs per token and per iteration, activation
// memory, ops per class; and the operator graph as Graphviz DOT.
#pragma once

#include <ostream>

#include "workloads/model_graph.h"

namespace dejavu::workloads {

void write_inspection(std::ostream& out, const ModelGraph& model, double global_batch);
void write_dot(std::ostream& out, const ModelGraph& model);

}  // namespace dejavu::workloads
