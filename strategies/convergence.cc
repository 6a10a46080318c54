#include "strategies/convergence.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include "sim/error.h"

namespace dejavu::strategies {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using Rng = std::mt19937_64;

double uniform(Rng& r) { return static_cast<double>(r() >> 11) * 0x1.0p-53; }
double gaussian(Rng& r) {  // Box-Muller from our own uniform draws: the same bytes everywhere
  const double u = uniform(r) + 0x1.0p-54, v = uniform(r);
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}
size_t below(Rng& r, size_t n) { return static_cast<size_t>(r() % n); }

struct Data {
  std::vector<MatrixXd> x;            // per worker: samples x dim
  std::vector<std::vector<int>> y;    // per worker
  MatrixXd vx;                        // validation
  std::vector<int> vy;
};

Data make_data(const ConvergenceData& d, int workers) {
  Rng rng(d.seed);
  MatrixXd means(d.classes, d.dim);
  // Two class means lie about `separation` noise deviations apart.
  const double scale = d.separation / std::sqrt(2.0 * d.dim);
  for (int c = 0; c < d.classes; ++c)
    for (int k = 0; k < d.dim; ++k) means(c, k) = scale * gaussian(rng);
  auto sample = [&](int label, MatrixXd& x, int row) {
    for (int k = 0; k < d.dim; ++k) x(row, k) = means(label, k) + gaussian(rng);
  };
  Data out;
  for (int w = 0; w < workers; ++w) {
    MatrixXd x(d.samples_per_worker, d.dim);
    std::vector<int> y(d.samples_per_worker);
    for (int i = 0; i < d.samples_per_worker; ++i) {
      // Skew: this share of a worker's samples come from its home class.
      y[i] = uniform(rng) < d.skew ? w % d.classes : static_cast<int>(below(rng, d.classes));
      sample(y[i], x, i);
    }
    out.x.push_back(x);
    out.y.push_back(y);
  }
  const int n = 2000;
  out.vx.resize(n, d.dim);
  out.vy.resize(n);
  for (int i = 0; i < n; ++i) {
    out.vy[i] = static_cast<int>(below(rng, d.classes));
    sample(out.vy[i], out.vx, i);
  }
  return out;
}

// A flat parameter vector; matrices are column-major blocks (PowerSGD compresses those).
struct Block {
  int offset, rows, cols;
};

class Model {
 public:
  Model(const std::string& kind, int dim, int classes, int hidden) : kind_(kind), d_(dim), c_(classes), h_(hidden) {
    if (kind == "logistic") {
      blocks_ = {{0, d_, c_}, {d_ * c_, c_, 1}};
    } else {
      blocks_ = {{0, d_, h_}, {d_ * h_, h_, 1}, {d_ * h_ + h_, h_, c_}, {d_ * h_ + h_ + h_ * c_, c_, 1}};
    }
    size_ = blocks_.back().offset + blocks_.back().rows * blocks_.back().cols;
  }
  int size() const { return size_; }
  const std::vector<Block>& blocks() const { return blocks_; }

  VectorXd init(Rng& rng) const {
    VectorXd p = VectorXd::Zero(size_);
    for (const Block& b : blocks_)
      if (b.cols > 1)
        for (int i = 0; i < b.rows * b.cols; ++i) p[b.offset + i] = gaussian(rng) / std::sqrt(b.rows);
    return p;
  }

  // Mean cross-entropy over rows of x, its gradient into *grad (if given), accuracy into *acc.
  double loss(const VectorXd& p, const MatrixXd& x, const std::vector<int>& y, const std::vector<int>& rows,
              VectorXd* grad, double* acc = nullptr) const {
    const int n = static_cast<int>(rows.size());
    MatrixXd xb(n, d_);
    for (int i = 0; i < n; ++i) xb.row(i) = x.row(rows[i]);
    auto mat = [&](const Block& b) { return Eigen::Map<const MatrixXd>(p.data() + b.offset, b.rows, b.cols); };
    auto vec = [&](const Block& b) { return Eigen::Map<const VectorXd>(p.data() + b.offset, b.rows); };
    MatrixXd hidden, logits;
    if (kind_ == "logistic") {
      logits = (xb * mat(blocks_[0])).rowwise() + vec(blocks_[1]).transpose();
    } else {
      hidden = ((xb * mat(blocks_[0])).rowwise() + vec(blocks_[1]).transpose()).cwiseMax(0.0);
      logits = (hidden * mat(blocks_[2])).rowwise() + vec(blocks_[3]).transpose();
    }
    MatrixXd prob = logits;
    double total = 0;
    int correct = 0;
    for (int i = 0; i < n; ++i) {
      const double m = prob.row(i).maxCoeff();
      prob.row(i) = (prob.row(i).array() - m).exp();
      const double z = prob.row(i).sum();
      prob.row(i) /= z;
      total += -std::log(std::max(prob(i, y[rows[i]]), 1e-300));
      Eigen::Index arg;
      prob.row(i).maxCoeff(&arg);
      correct += arg == y[rows[i]];
    }
    if (acc) *acc = static_cast<double>(correct) / n;
    if (grad) {
      grad->setZero(size_);
      MatrixXd delta = prob;
      for (int i = 0; i < n; ++i) delta(i, y[rows[i]]) -= 1;
      delta /= n;
      auto gmat = [&](const Block& b) { return Eigen::Map<MatrixXd>(grad->data() + b.offset, b.rows, b.cols); };
      auto gvec = [&](const Block& b) { return Eigen::Map<VectorXd>(grad->data() + b.offset, b.rows); };
      if (kind_ == "logistic") {
        gmat(blocks_[0]) = xb.transpose() * delta;
        gvec(blocks_[1]) = delta.colwise().sum().transpose();
      } else {
        gmat(blocks_[2]) = hidden.transpose() * delta;
        gvec(blocks_[3]) = delta.colwise().sum().transpose();
        MatrixXd dh = (delta * mat(blocks_[2]).transpose()).array() * (hidden.array() > 0).cast<double>();
        gmat(blocks_[0]) = xb.transpose() * dh;
        gvec(blocks_[1]) = dh.colwise().sum().transpose();
      }
    }
    return total / n;
  }

 private:
  std::string kind_;
  int d_, c_, h_;
  std::vector<Block> blocks_;
  int size_ = 0;
};

// A worker's gradient on the wire: compressed (with its error-feedback memory) and, for a
// Byzantine worker, corrupted.
class Wire {
 public:
  Wire(const ConvergenceConfig& c, const Model& m, int workers)
      : c_(c), m_(m), error_(workers, VectorXd::Zero(m.size())), q_(workers) {}

  VectorXd send(int w, const VectorXd& g, Rng& rng) {
    VectorXd v = g;
    const std::string& z = c_.compression;
    if (z == "topk" || z == "1bit" || z == "powersgd") v += error_[w];
    VectorXd out = v;
    if (z == "topk") {
      const int k = std::max(1, static_cast<int>(std::lround(c_.density * v.size())));
      std::vector<int> idx(v.size());
      std::iota(idx.begin(), idx.end(), 0);
      std::nth_element(idx.begin(), idx.begin() + (k - 1), idx.end(),
                       [&](int a, int b) { return std::fabs(v[a]) > std::fabs(v[b]) || (std::fabs(v[a]) == std::fabs(v[b]) && a < b); });
      out.setZero();
      for (int i = 0; i < k; ++i) out[idx[i]] = v[idx[i]];
    } else if (z == "1bit") {
      const double scale = v.cwiseAbs().mean();
      for (int i = 0; i < v.size(); ++i) out[i] = v[i] >= 0 ? scale : -scale;
    } else if (z == "terngrad") {
      const double s = v.cwiseAbs().maxCoeff();
      for (int i = 0; i < v.size(); ++i)
        out[i] = s > 0 && uniform(rng) < std::fabs(v[i]) / s ? (v[i] >= 0 ? s : -s) : 0.0;
    } else if (z == "powersgd") {
      if (q_[w].empty()) q_[w].resize(m_.blocks().size());
      for (size_t bi = 0; bi < m_.blocks().size(); ++bi) {
        const Block& b = m_.blocks()[bi];
        if (b.cols == 1) continue;  // vectors travel whole
        const int r = std::min({c_.rank, b.rows, b.cols});
        Eigen::Map<MatrixXd> M(v.data() + b.offset, b.rows, b.cols);
        MatrixXd& Q = q_[w][bi];
        if (Q.rows() != b.cols) {
          Q.resize(b.cols, r);
          for (int i = 0; i < Q.size(); ++i) Q.data()[i] = gaussian(rng);
        }
        MatrixXd P = M * Q;
        Eigen::HouseholderQR<MatrixXd> qr(P);
        P = qr.householderQ() * MatrixXd::Identity(b.rows, r);
        Q = M.transpose() * P;  // warm start for the next step
        Eigen::Map<MatrixXd>(out.data() + b.offset, b.rows, b.cols) = P * Q.transpose();
      }
    }
    if (z == "topk" || z == "1bit" || z == "powersgd") error_[w] = v - out;
    for (const ByzantineWorker& b : c_.byzantine)
      if (b.gpu == w) {
        if (b.mode == "random") {
          const double norm = std::max(out.norm(), 1e-12);
          VectorXd noise(out.size());
          for (int i = 0; i < noise.size(); ++i) noise[i] = gaussian(rng);
          out = noise * (10 * norm / noise.norm());
        } else {
          out *= b.mode == "sign_flip" ? -std::fabs(b.factor) : b.factor;  // flipped (x|factor|) or scaled
        }
      }
    return out;
  }

 private:
  const ConvergenceConfig& c_;
  const Model& m_;
  std::vector<VectorXd> error_;
  std::vector<std::vector<MatrixXd>> q_;
};

}  // namespace

ConvergenceData parse_data_spec(const std::string& spec) {
  ConvergenceData d;
  const std::string prefix = "synthetic:";
  if (spec.rfind("synthetic", 0) != 0)
    throw ConfigError(SourceLoc{"--data", 0, 0}, "", "\"" + spec + "\"; valid: synthetic:classes=10,dim=64,...");
  std::stringstream ss(spec.size() > prefix.size() ? spec.substr(prefix.size()) : "");
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    const size_t eq = kv.find('=');
    const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0')
      throw ConfigError(SourceLoc{"--data", 0, 0}, k, "expected key=number, got \"" + kv + "\"");
    if (k == "classes" && x >= 2) d.classes = static_cast<int>(x);
    else if (k == "dim" && x >= 1) d.dim = static_cast<int>(x);
    else if (k == "samples" && x >= 1) d.samples_per_worker = static_cast<int>(x);
    else if (k == "separation" && x > 0) d.separation = x;
    else if (k == "skew" && x >= 0 && x <= 1) d.skew = x;
    else if (k == "seed") d.seed = static_cast<unsigned long long>(x);
    else
      throw ConfigError(SourceLoc{"--data", 0, 0}, k,
                        "\"" + kv + "\"; valid: classes >= 2, dim >= 1, samples >= 1, separation > 0, skew in [0, 1], seed");
  }
  return d;
}

ConvergenceResult train_to_target(const ConvergenceConfig& c, const WorkerTiming& timing, const std::string& name) {
  const int n = c.workers;
  const Data data = make_data(c.data, n);
  const Model model(c.model, c.data.dim, c.data.classes, c.hidden);
  Rng rng(c.seed * 0x9E3779B97F4A7C15ULL + 0x5EED);  // not the data's stream: no accidental alignment
  const VectorXd start = model.init(rng);
  std::vector<Rng> worker_rng;
  for (int w = 0; w < n; ++w) worker_rng.emplace_back(c.seed * 1000003ULL + w + 1);
  Wire wire(c, model, n);
  std::vector<int> all_valid(data.vy.size());
  std::iota(all_valid.begin(), all_valid.end(), 0);
  std::vector<int> zeno_rows(all_valid.begin(), all_valid.begin() + 64);
  auto minibatch = [&](int w) {
    std::vector<int> rows(c.batch);
    for (int& r : rows) r = static_cast<int>(below(worker_rng[w], data.y[w].size()));
    return rows;
  };
  auto gradient = [&](int w, const VectorXd& p) {
    VectorXd g;
    model.loss(p, data.x[w], data.y[w], minibatch(w), &g);
    return g;
  };
  auto aggregate = [&](const std::vector<VectorXd>& gs, const VectorXd& p) -> VectorXd {
    const int m = static_cast<int>(gs.size());
    const int b = std::min(c.trim, (m - 1) / 2);
    if (c.aggregator == "mean" || m == 1) {
      VectorXd s = VectorXd::Zero(gs[0].size());
      for (const auto& g : gs) s += g;
      return s / m;
    }
    if (c.aggregator == "median" || c.aggregator == "trimmed") {
      VectorXd out(gs[0].size());
      std::vector<double> col(m);
      for (int i = 0; i < out.size(); ++i) {
        for (int k = 0; k < m; ++k) col[k] = gs[k][i];
        std::sort(col.begin(), col.end());
        if (c.aggregator == "median") {
          out[i] = m % 2 ? col[m / 2] : (col[m / 2 - 1] + col[m / 2]) / 2;
        } else {
          double s = 0;
          for (int k = b; k < m - b; ++k) s += col[k];
          out[i] = s / (m - 2 * b);
        }
      }
      return out;
    }
    if (c.aggregator == "krum") {
      // The gradient closest (sum of squared distances) to its m - b - 2 nearest others.
      const int near = std::max(1, m - b - 2);
      double best = INFINITY;
      int pick = 0;
      for (int i = 0; i < m; ++i) {
        std::vector<double> d;
        for (int k = 0; k < m; ++k)
          if (k != i) d.push_back((gs[i] - gs[k]).squaredNorm());
        std::sort(d.begin(), d.end());
        const double score = std::accumulate(d.begin(), d.begin() + std::min<int>(near, d.size()), 0.0);
        if (score < best) best = score, pick = i;
      }
      return gs[pick];
    }
    // Zeno: score each gradient by the loss decrease it gives on a small validation batch,
    // drop the b worst, average the rest.
    const double base = model.loss(p, data.vx, data.vy, zeno_rows, nullptr);
    std::vector<std::pair<double, int>> score;
    for (int i = 0; i < m; ++i) {
      const VectorXd q = p - c.learning_rate * gs[i];
      score.push_back({base - model.loss(q, data.vx, data.vy, zeno_rows, nullptr) - 1e-4 * c.learning_rate * gs[i].squaredNorm(), i});
    }
    std::sort(score.begin(), score.end(), std::greater<>());
    VectorXd s = VectorXd::Zero(gs[0].size());
    for (int k = 0; k < m - b; ++k) s += gs[score[k].second];
    return s / (m - b);
  };

  ConvergenceResult r;
  r.name = name;
  auto evaluate = [&](const VectorXd& p, double t, long step) {
    CurvePoint pt;
    pt.time_s = t;
    pt.step = step;
    pt.loss = model.loss(p, data.vx, data.vy, all_valid, nullptr, &pt.accuracy);
    r.curve.push_back(pt);
    if (!r.reached && pt.loss <= c.target_loss) {
      r.reached = true;
      r.time_to_target_s = t;
      r.steps_to_target = step;
    }
    return r.reached;
  };
  const double T = timing.iteration_s;
  double compute_max = 0;
  for (double x : timing.compute_s) compute_max = std::max(compute_max, x);
  double staleness_sum = 0;
  long staleness_count = 0;

  if (c.rule == "sync" || c.rule == "pipedream") {
    VectorXd p = start;
    std::deque<VectorXd> past;  // pipedream: the weights gradients are computed on
    evaluate(p, 0, 0);
    for (long k = 1; k <= c.max_steps; ++k) {
      past.push_back(p);
      if (static_cast<int>(past.size()) > (c.rule == "pipedream" ? c.staleness : 0) + 1) past.pop_front();
      const VectorXd& at = past.front();
      std::vector<VectorXd> gs;
      for (int w = 0; w < n; ++w) gs.push_back(wire.send(w, gradient(w, at), worker_rng[w]));
      p -= c.learning_rate * aggregate(gs, p);
      staleness_sum += static_cast<double>(past.size() - 1);
      ++staleness_count;
      if ((k % c.eval_every == 0 || k == c.max_steps) && evaluate(p, k * T, k)) break;
    }
  } else if (c.rule == "gossip" || c.rule == "delayed") {
    std::vector<VectorXd> local(n, start);
    if (c.independent_init)
      for (int w = 0; w < n; ++w) {
        Rng own(c.seed * 0x9E3779B97F4A7C15ULL + 0x5EED + 7919ULL * (w + 1));
        local[w] = model.init(own);
      }
    auto average = [&] {
      VectorXd s = VectorXd::Zero(start.size());
      for (const auto& l : local) s += l;
      return VectorXd(s / n);
    };
    // Delayed averaging hides the exchange behind `delay` steps: a step takes the longer of
    // the slowest compute and the exchange spread over them.
    const double step_s = c.rule == "delayed" ? std::max(compute_max, timing.communication_s / std::max(1, c.delay)) : T;
    std::deque<std::pair<std::vector<VectorXd>, VectorXd>> in_flight;  // own gradients, their average
    Rng gossip_rng(c.seed + 77);
    evaluate(average(), 0, 0);
    for (long k = 1; k <= c.max_steps; ++k) {
      std::vector<VectorXd> gs;
      for (int w = 0; w < n; ++w) gs.push_back(wire.send(w, gradient(w, local[w]), worker_rng[w]));
      for (int w = 0; w < n; ++w) local[w] -= c.learning_rate * gs[w];
      if (c.rule == "gossip" && c.gossip_topology == "ring") {
        // Each worker averages with both neighbours: W = (I + shift + shift^T) / 3.
        const std::vector<VectorXd> before = local;
        for (int w = 0; w < n; ++w) local[w] = (before[(w + n - 1) % n] + before[w] + before[(w + 1) % n]) / 3;
      } else if (c.rule == "gossip") {
        const std::vector<VectorXd> before = local;
        for (int w = 0; w < n; ++w) {
          VectorXd s = before[w];
          for (int j = 0; j < c.peers; ++j) {
            int peer = static_cast<int>(below(gossip_rng, n - 1));
            if (peer >= w) ++peer;
            s += before[peer];
          }
          local[w] = s / (c.peers + 1);
        }
      } else {
        in_flight.push_back({gs, aggregate(gs, average())});
        if (static_cast<int>(in_flight.size()) > c.delay) {
          // The average of `delay` steps ago arrives: replace each worker's own gradient by it.
          const auto& [own, avg] = in_flight.front();
          for (int w = 0; w < n; ++w) local[w] += c.learning_rate * (own[w] - avg);
          in_flight.pop_front();
          staleness_sum += c.delay;
          ++staleness_count;
        }
      }
      if (k % c.eval_every == 0 || k == c.max_steps) {
        const VectorXd mean = average();
        double spread = 0;
        for (const auto& l : local) spread += (l - mean).squaredNorm();
        const bool done = evaluate(mean, k * step_s, k);
        r.curve.back().consensus = std::sqrt(spread / n);
        if (done) break;
      }
    }
  } else if (c.rule == "ps-async") {
    // Each worker loops: pull, compute on what it pulled, push; the server applies each push
    // at once (a step is n pushes). A worker more than `staleness` iterations ahead of the
    // slowest waits for it.
    VectorXd p = start;
    long version = 0, pushes = 0;
    std::vector<VectorXd> pulled(n, start);
    std::vector<long> pulled_version(n, 0), done(n, 0);
    std::vector<double> ready(n);  // when each worker's current gradient is pushed
    auto cycle = [&](int w) { return timing.compute_s[w] + timing.communication_s; };
    const long bound = std::max(1, c.staleness);  // 0 would let no worker go past the slowest
    for (int w = 0; w < n; ++w) ready[w] = cycle(w);
    evaluate(p, 0, 0);
    std::vector<int> waiting;
    const long max_pushes = static_cast<long>(c.max_steps) * n;
    while (pushes < max_pushes) {
      int w = 0;
      for (int k = 1; k < n; ++k)
        if (ready[k] < ready[w]) w = k;
      const double now = ready[w];
      std::vector<VectorXd> one = {wire.send(w, gradient(w, pulled[w]), worker_rng[w])};
      p -= c.learning_rate / n * one[0];
      staleness_sum += static_cast<double>(version - pulled_version[w]);
      ++staleness_count;
      ++version;
      ++pushes;
      ++done[w];
      pulled[w] = p;
      pulled_version[w] = version;
      const long slowest = *std::min_element(done.begin(), done.end());
      ready[w] = done[w] - slowest >= bound ? INFINITY : now + cycle(w);
      // Whoever waited may go once the slowest has caught up.
      for (int k = 0; k < n; ++k)
        if (!std::isfinite(ready[k]) && done[k] - slowest < bound) {
          pulled[k] = p;
          pulled_version[k] = version;
          ready[k] = now + cycle(k);
        }
      if (pushes % (static_cast<long>(c.eval_every) * n) == 0 || pushes == max_pushes)
        if (evaluate(p, now, pushes / n)) break;
    }
  } else {
    throw ConfigError(SourceLoc{"--rule", 0, 0}, "", "unknown update rule \"" + c.rule +
                                                         "\"; valid: sync, ps-async, gossip, pipedream, delayed");
  }
  r.mean_staleness = staleness_count ? staleness_sum / staleness_count : 0;
  return r;
}

double gradient_check(const std::string& kind, int dim, int classes, int hidden, unsigned long long seed) {
  ConvergenceData d;
  d.dim = dim;
  d.classes = classes;
  d.samples_per_worker = 16;
  d.seed = seed;
  const Data data = make_data(d, 1);
  const Model model(kind, dim, classes, hidden);
  Rng rng(seed);
  const VectorXd p = model.init(rng);
  std::vector<int> rows(16);
  std::iota(rows.begin(), rows.end(), 0);
  VectorXd g;
  model.loss(p, data.x[0], data.y[0], rows, &g);
  double worst = 0;
  for (int i = 0; i < model.size(); ++i) {
    VectorXd a = p, b = p;
    const double h = 1e-5;
    a[i] += h;
    b[i] -= h;
    const double fd = (model.loss(a, data.x[0], data.y[0], rows, nullptr) - model.loss(b, data.x[0], data.y[0], rows, nullptr)) / (2 * h);
    worst = std::max(worst, std::fabs(fd - g[i]) / std::max(1e-4, std::fabs(fd) + std::fabs(g[i])));
  }
  return worst;
}

void write_curves_csv(std::ostream& out, const std::vector<ConvergenceResult>& results) {
  out << "strategy,time_s,step,loss,accuracy,consensus\n";
  char buf[160];
  for (const auto& r : results)
    for (const auto& p : r.curve) {
      std::snprintf(buf, sizeof buf, "%s,%.9g,%ld,%.9g,%.6g,%.6g\n", r.name.c_str(), p.time_s, p.step, p.loss, p.accuracy,
                    p.consensus);
      out << buf;
    }
}

void write_curves_svg(std::ostream& out, const std::vector<ConvergenceResult>& results, double target) {
  double tmax = 0, lmax = 0;
  for (const auto& r : results)
    for (const auto& p : r.curve) tmax = std::max(tmax, p.time_s), lmax = std::max(lmax, p.loss);
  if (tmax <= 0) tmax = 1;
  if (lmax <= 0) lmax = 1;
  const int W = 720, H = 420, L = 60, B = 370, R = 700, T = 40;
  const char* colors[] = {"#1f4e9c", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#2c3e50"};
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\">validation loss "
                "against simulated wall-clock time (s)</text>\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
                W, H, L, B, R, B, L, B, L, T);
  out << buf;
  auto X = [&](double t) { return L + (R - L) * t / tmax; };
  auto Y = [&](double l) { return B - (B - T) * std::min(l, lmax) / lmax; };
  std::snprintf(buf, sizeof buf,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999\" stroke-dasharray=\"4 4\"/>\n"
                "<text x=\"%d\" y=\"%.1f\" fill=\"#666\">target %.3g</text>\n"
                "<text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3g s</text>\n"
                "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3g</text>\n",
                L, Y(target), R, Y(target), R - 80, Y(target) - 4, target, L, B + 16, R, B + 16, tmax, L - 4, T + 4, lmax);
  out << buf;
  for (size_t i = 0; i < results.size(); ++i) {
    std::string pts;
    for (const auto& p : results[i].curve) {
      std::snprintf(buf, sizeof buf, "%.1f,%.1f ", X(p.time_s), Y(p.loss));
      pts += buf;
    }
    std::string label;
    for (char ch : results[i].name) label += ch == '<' ? "&lt;" : ch == '&' ? "&amp;" : std::string(1, ch);
    std::snprintf(buf, sizeof buf,
                  "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n"
                  "<text x=\"%d\" y=\"%zu\" fill=\"%s\">%s</text>\n",
                  colors[i % 6], "", R - 220, T + 16 + 16 * i, colors[i % 6], label.c_str());
    std::string line = buf;
    line.replace(line.find("points=\"\""), 10, "points=\"" + pts + "\"");
    out << line;
  }
  out << "</svg>\n";
}

}  // namespace dejavu::strategies
