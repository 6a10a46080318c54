#include "strategies/intra_op/ilp.h"

#include <glpk.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "sim/error.h"

namespace dejavu::strategies::intra_op {

namespace {

constexpr double kScale = 1e6;  // seconds -> microseconds

// The constraint matrix in GLPK's triplet form (1-based; index 0 unused).
struct Triplets {
  std::vector<int> row{0}, col{0};
  std::vector<double> val{0.0};
  void add(int r, int c, double v) {
    row.push_back(r);
    col.push_back(c);
    val.push_back(v);
  }
};

struct ProbDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

// Column numbers: node v's strategy i is s_col[v] + i; edge k's pair (i, j) e_col[k] + i * |v| + j.
struct Columns {
  std::vector<int> s_col, e_col;
  int total = 0;
};

Columns number_columns(const ShardingGraph& g) {
  Columns c;
  int next = 1;
  for (const Node& n : g.nodes) {
    c.s_col.push_back(next);
    next += static_cast<int>(n.strategies.size());
  }
  for (const Edge& e : g.edges) {
    c.e_col.push_back(next);
    next += static_cast<int>(g.nodes[e.from].strategies.size() * g.nodes[e.to].strategies.size());
  }
  c.total = next - 1;
  return c;
}

void add_columns(glp_prob* p, const ShardingGraph& g, const Columns& c) {
  glp_add_cols(p, c.total);
  for (size_t v = 0; v < g.nodes.size(); ++v)
    for (size_t i = 0; i < g.nodes[v].strategies.size(); ++i) {
      const int col = c.s_col[v] + static_cast<int>(i);
      glp_set_col_kind(p, col, GLP_BV);
      glp_set_obj_coef(p, col, g.nodes[v].strategies[i].cost_s() * kScale);
    }
  for (size_t k = 0; k < g.edges.size(); ++k) {
    const Edge& e = g.edges[k];
    const size_t m = g.nodes[e.to].strategies.size();
    for (size_t i = 0; i < e.cost_s.size(); ++i)
      for (size_t j = 0; j < m; ++j) {
        const int col = c.e_col[k] + static_cast<int>(i * m + j);
        glp_set_col_bnds(p, col, GLP_DB, 0.0, 1.0);
        glp_set_obj_coef(p, col, e.cost_s[i][j] * kScale);
      }
  }
}

// One row per node (a strategy each) and two per edge strategy (the marginals).
int add_rows(glp_prob* p, const ShardingGraph& g, const Columns& c, Triplets& t) {
  int row = 0;
  for (size_t v = 0; v < g.nodes.size(); ++v) {
    glp_add_rows(p, 1);
    glp_set_row_bnds(p, ++row, GLP_FX, 1.0, 1.0);
    for (size_t i = 0; i < g.nodes[v].strategies.size(); ++i) t.add(row, c.s_col[v] + static_cast<int>(i), 1.0);
  }
  for (size_t k = 0; k < g.edges.size(); ++k) {
    const Edge& e = g.edges[k];
    const int n = static_cast<int>(g.nodes[e.from].strategies.size()),
              m = static_cast<int>(g.nodes[e.to].strategies.size());
    for (int i = 0; i < n; ++i) {  // sum_j e_ij - s_ui = 0
      glp_add_rows(p, 1);
      glp_set_row_bnds(p, ++row, GLP_FX, 0.0, 0.0);
      for (int j = 0; j < m; ++j) t.add(row, c.e_col[k] + i * m + j, 1.0);
      t.add(row, c.s_col[e.from] + i, -1.0);
    }
    for (int j = 0; j < m; ++j) {  // sum_i e_ij - s_vj = 0
      glp_add_rows(p, 1);
      glp_set_row_bnds(p, ++row, GLP_FX, 0.0, 0.0);
      for (int i = 0; i < n; ++i) t.add(row, c.e_col[k] + i * m + j, 1.0);
      t.add(row, c.s_col[e.to] + j, -1.0);
    }
  }
  return row;
}

int add_memory_row(glp_prob* p, const ShardingGraph& g, const Columns& c, Triplets& t, int row, double budget) {
  glp_add_rows(p, 1);
  glp_set_row_bnds(p, ++row, GLP_UP, 0.0, budget / 1e9);  // in GB, like the costs near 1
  for (size_t v = 0; v < g.nodes.size(); ++v)
    for (size_t i = 0; i < g.nodes[v].strategies.size(); ++i)
      t.add(row, c.s_col[v] + static_cast<int>(i), g.nodes[v].strategies[i].memory_bytes / 1e9);
  return row;
}

Choice read_choice(glp_prob* p, const ShardingGraph& g, const Columns& c) {
  Choice choice(g.nodes.size(), 0);
  for (size_t v = 0; v < g.nodes.size(); ++v)
    for (size_t i = 0; i < g.nodes[v].strategies.size(); ++i)
      if (glp_mip_col_val(p, c.s_col[v] + static_cast<int>(i)) > 0.5) choice[v] = static_cast<int>(i);
  return choice;
}

}  // namespace

Solution solve_ilp(const ShardingGraph& g, double memory_budget_bytes, IlpStats* stats) {
  glp_term_out(GLP_OFF);  // a library prints nothing
  std::unique_ptr<glp_prob, ProbDeleter> p(glp_create_prob());
  glp_set_obj_dir(p.get(), GLP_MIN);
  const Columns c = number_columns(g);
  add_columns(p.get(), g, c);
  Triplets t;
  int rows = add_rows(p.get(), g, c, t);
  if (std::isfinite(memory_budget_bytes)) rows = add_memory_row(p.get(), g, c, t, rows, memory_budget_bytes);
  glp_load_matrix(p.get(), static_cast<int>(t.val.size()) - 1, t.row.data(), t.col.data(), t.val.data());
  if (stats) *stats = {c.total, rows};
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;
  parm.msg_lev = GLP_MSG_OFF;
  const int ret = glp_intopt(p.get(), &parm);
  const int status = glp_mip_status(p.get());
  Solution s;
  if (ret == GLP_ENOPFS || ret == GLP_ENODFS || status == GLP_NOFEAS) return s;
  if (ret != 0 || status != GLP_OPT)
    throw ModelError("intra-op sharding: GLPK stopped without an optimum (glp_intopt returned " + std::to_string(ret) +
                     ", status " + std::to_string(status) + ")");
  s.feasible = true;
  s.choice = read_choice(p.get(), g, c);
  s.cost_s = cost_s(g, s.choice);
  s.memory_bytes = memory_bytes(g, s.choice);
  return s;
}

}  // namespace dejavu::strategies::intra_op
