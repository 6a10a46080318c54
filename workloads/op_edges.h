// The edges between a ModelGraph's operators as a Boost.Graph (vertex v is op v): kept out of
// model_graph.h so the 140 files that include it do not each compile Boost.Graph's headers.
#pragma once

#include <boost/graph/adjacency_list.hpp>

namespace dejavu::workloads {

struct OpEdges {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  Graph graph;
};

}  // namespace dejavu::workloads
