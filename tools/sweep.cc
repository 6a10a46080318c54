#include "tools/sweep.h"

#include "strategies/plan_cluster.h"
#include "strategies/plan_model.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/engine.h"
#include "sim/json_text.h"
#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "sim/error.h"
#include "sim/limits.h"
#include "sim/process_pool.h"
#include "sim/units.h"
#include "strategies/search/rerank.h"
#include "strategies/search/searcher.h"
#include "strategies/search/space.h"
#include "strategies/simulate.h"
#include "tools/output_file.h"
#include "tools/report/svg.h"
#include "workloads/generator.h"

namespace dejavu::tools {

namespace fs = std::filesystem;

namespace {

constexpr double kMaxAxisValues = 10000, kMaxPoints = 1e6;

struct Step {
  std::string key;
  int index = -1;  // >= 0: key[index]
};

// "servers[0].nic.bandwidth" -> servers[0], nic, bandwidth. False if malformed.
bool parse_path(const std::string& path, std::vector<Step>& out) {
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '.')) {
    Step s;
    const size_t open = part.find('[');
    if (open != std::string::npos) {
      if (part.back() != ']') return false;
      try {
        s.index = std::stoi(part.substr(open + 1, part.size() - open - 2));
      } catch (...) {
        return false;
      }
      part = part.substr(0, open);
    }
    if (part.empty()) return false;
    s.key = part;
    out.push_back(s);
  }
  return !out.empty();
}

// The node a path leads to in `root` (creating the last key if `create`); false when an
// intermediate key or index is missing.
bool walk(YAML::Node root, const std::vector<Step>& steps, bool create, YAML::Node& out) {
  YAML::Node cur;
  cur.reset(root);
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const bool last = i + 1 == steps.size();
    if (!cur.IsMap() || (!cur[s.key] && !(last && create && s.index < 0))) return false;
    YAML::Node next;
    next.reset(cur[s.key]);
    if (s.index >= 0) {
      if (!next.IsSequence() || s.index >= static_cast<int>(next.size())) return false;
      YAML::Node item;
      item.reset(next[s.index]);
      next.reset(item);
    }
    cur.reset(next);
  }
  out.reset(cur);
  return true;
}

std::string hash_hex(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}

fs::path point_file(const SweepSpec& spec, const std::string& out_dir, const SweepPoint& p) {
  std::string id;
  for (size_t a = 0; a < spec.axes.size(); ++a) id += spec.axes[a].path + "=" + p.values[a] + ";";
  return fs::path(out_dir) / "points" / (spec.name + "-" + hash_hex(id) + ".json");
}

}  // namespace

size_t SweepSpec::points() const {
  size_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  return n;
}

std::string SweepPoint::key() const {
  std::string k;
  for (size_t i = 0; i < values.size(); ++i) k += (i ? "|" : "") + values[i];
  return k;
}

namespace {
// An axis's values: a list, or a range {from, to, step | factor}.
std::vector<std::string> axis_values(const ConfigNode& n) {
  std::vector<std::string> values;
  if (n.is_sequence()) {
    for (const ConfigNode& v : n.items()) values.push_back(v.as_string());
    return values;
  }
  if (!n.is_map()) n.fail("expected a list of values or a range {from, to, step | factor}");
  n.expect_map({"from", "to", "step", "factor"});
  const double from = n.child("from").as_double(-1e15, 1e15), to = n.child("to").as_double(-1e15, 1e15);
  const double step = n.get_double("step", 0, 0, 1e15), factor = n.get_double("factor", 0, 0, 1e6);
  if ((step > 0) == (factor > 1)) n.fail("a range takes from, to and either step > 0 or factor > 1");
  if (to < from) n.child("to").fail("below from");
  if (factor > 1 && !(from > 0)) n.child("from").fail("a range by factor starts above 0");
  // How many values, before making any: each must differ from the last.
  const double count = 1 + std::floor(step > 0 ? (to - from) / step : std::log(to / from) / std::log(factor));
  if (count > kMaxAxisValues)
    n.fail("a range of " + number(count) + " values; an axis takes at most " + number(kMaxAxisValues));
  for (double x = from; x <= to * (1 + 1e-12) + 1e-12 && values.size() < count; x = step > 0 ? x + step : x * factor) {
    if (!values.empty() && number(x) == values.back())
      n.fail("the step is too fine: " + number(x) + " repeats; valid: a step that changes the value");
    values.push_back(number(x));
  }
  return values;
}
}  // namespace

SweepSpec load_sweep(const std::string& path) {
  const ConfigNode root = ConfigNode::load_file(path);
  root.expect_map({"name", "platform", "workload", "plan", "search", "global_batch", "engine", "timeout", "axes"});
  SweepSpec s;
  s.file = path;
  s.name = root.get_string("name", root.file_stem());
  // The name prefixes every point file: it must stay inside -o.
  if (s.name.empty() || s.name[0] == '.' ||
      s.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
          std::string::npos) {
    if (root.has("name"))
      root.child("name").fail("\"" + s.name + "\"; valid: letters, digits, '.', '_' and '-', not starting with '.'");
    root.fail("the file's name \"" + s.name +
              "\" cannot name a sweep; give name: with letters, digits, '.', '_' and '-'");
  }
  const fs::path dir = fs::path(path).parent_path();
  auto file = [&](const char* key) {
    const ConfigNode n = root.child(key);
    const fs::path p = dir / n.as_string();
    if (!fs::exists(p)) n.fail("no such file: " + p.string());
    return p.string();
  };
  s.platform = file("platform");
  s.workload = file("workload");
  if (root.has("search")) {
    const ConfigNode n = root.child("search");
    strategies::search::register_searchers();
    if (!strategies::search::searchers().has(n.as_string()))
      n.fail("unknown searcher \"" + n.as_string() + "\"; valid: " + strategies::search::searchers().names_joined());
    s.search = n.as_string();
  }
  if (root.has("plan")) s.plan = file("plan");
  if (s.plan.empty() && s.search.empty()) root.fail("needs a plan, or search: grid (or another searcher)");
  s.global_batch = static_cast<int>(root.get_int("global_batch", 0, 1, limits::kMaxBatch));
  if (root.has("engine")) s.engine = root.child("engine").as_choice(sim::engines().names());
  s.timeout_s = root.get_quantity("timeout", units::Dimension::Time, 0, 1e-3, limits::kMaxTime);
  const ConfigNode axes = root.child("axes");
  if (!axes.is_map() || axes.yaml().size() == 0) axes.fail("expected a mapping of field paths to values");
  // The base files are read as any input is (a malformed one is a line naming it).
  std::map<std::string, YAML::Node> bases = {{"platform", ConfigNode::load_file(s.platform).yaml()},
                                             {"workload", ConfigNode::load_file(s.workload).yaml()}};
  if (!s.plan.empty()) bases["plan"] = ConfigNode::load_file(s.plan).yaml();
  double points = 1;
  for (const auto& kv : axes.yaml()) {
    const std::string key = kv.first.as<std::string>();
    const ConfigNode n = axes.child(key);
    SweepAxis axis;
    axis.path = key;
    const size_t dot = key.find('.');
    std::vector<Step> steps;
    const std::string prefix = key.substr(0, dot);
    if (dot == std::string::npos || !bases.count(prefix) || !parse_path(key.substr(dot + 1), steps))
      throw ConfigError(axes.key_loc(key), key,
                        "not a field path; valid: platform.<path>, workload.<path>" +
                            std::string(s.plan.empty() ? "" : ", plan.<path>") + ", e.g. platform.servers[0].gpu");
    YAML::Node target;
    if (!walk(YAML::Clone(bases[prefix]), steps, true, target))
      throw ConfigError(axes.key_loc(key), key, "no such place in the base " + prefix + " YAML");
    axis.values = axis_values(n);
    if (axis.values.empty()) n.fail("an axis needs at least one value");
    points *= static_cast<double>(axis.values.size());
    if (points > kMaxPoints)
      n.fail("the sweep would have " + number(points) + " points; at most " + number(kMaxPoints) +
             " (fewer values or axes)");
    s.axes.push_back(axis);
  }
  return s;
}

SweepPoint point_at(const SweepSpec& spec, size_t index) {
  SweepPoint p;
  p.index = index;
  p.values.resize(spec.axes.size());
  size_t rest = index;
  for (size_t a = spec.axes.size(); a-- > 0;) {  // the last axis varies fastest
    const size_t n = spec.axes[a].values.size();
    p.values[a] = spec.axes[a].values[rest % n];
    rest /= n;
  }
  return p;
}

std::pair<int, int> parse_shard(const std::string& text) {
  int i = -1, n = -1;
  char slash = 0;
  std::stringstream ss(text);
  if (!(ss >> i >> slash >> n) || slash != '/' || n < 1 || i < 0 || i >= n || !ss.eof())
    throw ConfigError(SourceLoc{"--shard", 0, 0}, "", "\"" + text + "\"; valid: i/n with 0 <= i < n, e.g. 3/64");
  return {i, n};
}

namespace {
// What every point's record starts with: which sweep, which point, its axis values.
nlohmann::ordered_json point_record(const SweepSpec& spec, const SweepPoint& p) {
  nlohmann::ordered_json j;
  j["sweep"] = spec.name;
  j["index"] = p.index;
  j["key"] = p.key();
  j["axes"] = nlohmann::ordered_json::array();
  for (size_t a = 0; a < spec.axes.size(); ++a) j["axes"].push_back({spec.axes[a].path, p.values[a]});
  return j;
}
}  // namespace

std::string run_point(const SweepSpec& spec, const SweepPoint& point) {
  nlohmann::ordered_json j = point_record(spec, point);
  const auto start = std::chrono::steady_clock::now();
  try {
    std::map<std::string, std::pair<std::string, YAML::Node>> docs = {
        {"platform", {spec.platform, YAML::LoadFile(spec.platform)}},
        {"workload", {spec.workload, YAML::LoadFile(spec.workload)}}};
    if (!spec.plan.empty()) docs["plan"] = {spec.plan, YAML::LoadFile(spec.plan)};
    for (size_t a = 0; a < spec.axes.size(); ++a) {
      const std::string& path = spec.axes[a].path;
      const size_t dot = path.find('.');
      std::vector<Step> steps;
      parse_path(path.substr(dot + 1), steps);
      YAML::Node parent;
      std::vector<Step> up(steps.begin(), steps.end() - 1);
      YAML::Node& root = docs[path.substr(0, dot)].second;
      if (!up.empty() ? !walk(root, up, false, parent) : (parent.reset(root), false))
        throw Error("axis " + path + ": no such place");
      const Step& last = steps.back();
      if (last.index >= 0)
        parent[last.key][last.index] = YAML::Load(point.values[a]);
      else
        parent[last.key] = YAML::Load(point.values[a]);
    }
    const platforms::Cluster cluster = platforms::load_cluster(ConfigNode(docs["platform"].second, spec.platform, ""));
    const workloads::ModelGraph model =
        workloads::load_workload(ConfigNode(docs["workload"].second, spec.workload, ""));
    // The point's plan, simulated on the sweep's engine, into the record.
    auto record = [&](const strategies::Plan& plan) {
      const strategies::Simulation s = strategies::simulate(
          strategies::model_for_plan(model, plan), strategies::cluster_for_plan(cluster, plan), plan, spec.engine);
      j["status"] = "ok";
      j["iteration_time_s"] = s.report.iteration_time_s;
      j["tflops_per_gpu"] = s.report.tflops_per_gpu;
      j["mfu"] = s.report.mfu;
      j["peak_memory_bytes"] = s.report.peak_memory_bytes;
      // Out of memory: the GPU's, or the servers' CPU memory or NVMe for what the plan offloads.
      j["oom"] = s.report.oom || (s.report.offload.any() && !s.report.offload.fits());
      j["plan"] = strategies::search::describe(plan);
    };
    if (!spec.search.empty()) {
      const int batch = spec.global_batch > 0 ? spec.global_batch : model.global_batch_size;
      if (batch <= 0) throw Error("search needs global_batch in the sweep or global_batch_size in the workload");
      const strategies::search::Problem problem{&model, &cluster, batch};
      strategies::search::SimulationEvaluator evaluator(problem);
      const auto r = strategies::search::search_ranked(*strategies::search::searchers().make(spec.search), problem,
                                                       evaluator, {}, strategies::search::kDefaultRerank,
                                                       strategies::search::rank_engine_price(problem));
      if (!r.best()) throw Error("no plan of the search space fits in memory");
      record(r.best()->plan);
    } else {
      strategies::Plan plan = strategies::load_plan(ConfigNode(docs["plan"].second, spec.plan, ""));
      // Refit dp to the cluster when the axes changed the GPU count or the other degrees.
      const int others = static_cast<int>(plan.tp_sum()) * plan.cp;
      if (plan.gpus() != cluster.gpu_count() && cluster.gpu_count() % others == 0)
        plan.dp = cluster.gpu_count() / others;
      record(plan);
    }
  } catch (const std::exception& e) {
    j["status"] = "failed";
    j["error"] = e.what();
  }
  j["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return json_text(j) + "\n";
}

namespace {
// A point is finished when its file exists and does not record a transient failure.
bool finished(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return false;
  std::string line;
  std::getline(in, line);
  return line.find("\"transient\":true") == std::string::npos;
}
}  // namespace

namespace {
// A sweep worker: exit 0: the point simulated; 4: it failed and says why in its file;
// 3: no file; 5: another sweep on the same folder has it (its lock is held) or has done it.
int run_worker(const SweepSpec& spec, const std::string& out_dir, const SweepPoint& p) {
  const fs::path file = point_file(spec, out_dir, p);
  const int lock = ::open((file.string() + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) != 0 || finished(file)) return 5;
  const std::string line = run_point(spec, p);
  write_file_atomically(file.string(), [&](std::ostream& out) { out << line; });
  return line.find("\"status\":\"failed\"") != std::string::npos ? 4 : 0;
}

void show_progress(const SweepSpec& spec, const SweepSummary& sum, size_t pending, size_t running,
                   std::chrono::steady_clock::time_point t0) {
  const size_t finished = sum.done + sum.failed;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double eta = finished > 0 ? elapsed / finished * (pending - finished) : 0;
  char buf[160];
  std::snprintf(buf, sizeof buf, "\r%s: %zu/%zu done, %zu running, %zu failed, %zu skipped, ETA %s   ",
                spec.name.c_str(), finished, pending, running, sum.failed, sum.skipped,
                finished > 0 ? units::format_time(eta).c_str() : "?");
  std::cerr << buf << std::flush;
}
}  // namespace

SweepSummary run_sweep_points(const SweepSpec& spec, const SweepRunOptions& o) {
  fs::create_directories(fs::path(o.out_dir) / "points");
  SweepSummary sum;
  std::vector<SweepPoint> pending;
  for (size_t i = o.shard; i < spec.points(); i += o.shards) {
    ++sum.total;
    SweepPoint p = point_at(spec, i);
    if (finished(point_file(spec, o.out_dir, p)))
      ++sum.skipped;  // finished by an earlier run
    else
      pending.push_back(p);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const bool bar = o.progress && isatty(STDERR_FILENO);
  // A worker that crashed, was killed or timed out failed for a reason outside the point:
  // its record says so, and a rerun tries it again.
  auto record_failure = [&](const SweepPoint& p, const std::string& why) {
    nlohmann::ordered_json j = point_record(spec, p);
    j["status"] = "failed";
    j["error"] = why;
    j["transient"] = true;
    write_file_atomically(point_file(spec, o.out_dir, p).string(),
                          [&](std::ostream& out) { out << json_text(j) << "\n"; });
  };
  auto done = [&](size_t i, const sim::ChildOutcome& c) {
    const SweepPoint& p = pending[i];
    const bool elsewhere = c.exit_code == 5;
    if (c.timed_out)
      record_failure(p, "timed out after " + units::format_time(spec.timeout_s));
    else if (!elsewhere && !finished(point_file(spec, o.out_dir, p)))
      record_failure(p, c.signal != 0 ? "worker crashed (signal " + std::to_string(c.signal) + ")"
                                      : "worker exited without a result");
    if (elsewhere)
      ++sum.skipped;
    else if (c.exit_code == 0)
      ++sum.done;
    else
      ++sum.failed;
  };
  sim::PoolOptions pool{std::max(1, o.jobs), spec.timeout_s, {}};
  if (bar) pool.tick = [&](size_t running) { show_progress(spec, sum, pending.size(), running, t0); };
  sim::run_children(
      pending.size(), pool, [&](size_t i, int) { return run_worker(spec, o.out_dir, pending[i]); }, done);
  if (bar) std::cerr << "\n";
  return sum;
}

namespace {
// A point file as run_sweep_points writes it; anything else is named, not trusted.
void check_record(const nlohmann::json& j, const std::string& file) {
  auto bad = [&](const std::string& key, const std::string& problem) {
    throw ConfigError(SourceLoc{file, 1, 1}, key, problem + "; not a point file of dejavu sweep");
  };
  if (!j.is_object()) bad("", "expected a JSON object");
  if (!j.contains("sweep") || !j["sweep"].is_string()) bad("sweep", "missing or not text");
  if (!j.contains("index") || !j["index"].is_number_unsigned()) bad("index", "missing or not a whole number");
  if (!j.contains("status") || !j["status"].is_string()) bad("status", "missing or not text");
  if (!j.contains("axes") || !j["axes"].is_array()) bad("axes", "missing or not a list");
  for (const auto& a : j["axes"])
    if (!a.is_array() || a.size() != 2 || !a[0].is_string() || !a[1].is_string())
      bad("axes", "expected [path, value] pairs");
  for (const char* k : {"plan", "error"})
    if (j.contains(k) && !j[k].is_string()) bad(k, "not text");
  if (j["status"] != "ok") return;
  for (const char* k : {"iteration_time_s", "tflops_per_gpu", "mfu", "peak_memory_bytes"})
    if (!j.contains(k) || !j[k].is_number() || !std::isfinite(j[k].get<double>()))
      bad(k, "missing or not a finite number");
  if (!j.contains("oom") || !j["oom"].is_boolean()) bad("oom", "missing or not true/false");
}
}  // namespace

MergedTable merge_results(const std::string& out_dir) {
  const fs::path dir = fs::path(out_dir) / "points";
  if (!fs::is_directory(dir))
    throw ConfigError(SourceLoc{out_dir, 0, 0}, "", "no sweep results here (no points/ folder)");
  std::vector<nlohmann::json> records;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string name;
  for (const fs::path& f : files) {
    const std::string text = read_input_file(f.string());
    const std::string line = text.substr(0, text.find('\n'));
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception&) {
      throw ConfigError(SourceLoc{f.string(), 1, 1}, "", "not a sweep result (one JSON line)");
    }
    check_record(j, f.string());
    const std::string n = j["sweep"].get<std::string>();
    if (!name.empty() && n != name)
      throw ConfigError(SourceLoc{f.string(), 1, 1}, "sweep",
                        "results of two sweeps (" + name + ", " + n + ") in one folder; merge each on its own");
    name = n;
    records.push_back(j);
  }
  if (records.empty()) throw ConfigError(SourceLoc{out_dir, 0, 0}, "", "no point results to merge");
  std::sort(records.begin(), records.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["index"].get<size_t>() < b["index"].get<size_t>();
  });
  MergedTable t;
  for (const auto& a : records.front()["axes"]) t.axes.push_back(a[0].get<std::string>());
  for (const auto& r : records) {
    if (r["axes"].size() != t.axes.size())
      throw ConfigError(SourceLoc{out_dir, 0, 0}, "axes",
                        "points with different axes in one folder; merge each sweep on its own");
    std::vector<std::string> row;
    for (const auto& a : r["axes"]) row.push_back(a[1].get<std::string>());
    const bool ok = r["status"] == "ok";
    row.push_back(r["status"].get<std::string>());
    auto num = [&](const char* k) { return ok && r.contains(k) ? number(r[k].get<double>()) : std::string(); };
    row.push_back(num("iteration_time_s"));
    row.push_back(num("tflops_per_gpu"));
    row.push_back(num("mfu"));
    row.push_back(num("peak_memory_bytes"));
    row.push_back(ok ? (r["oom"].get<bool>() ? "true" : "false") : "");
    row.push_back(r.value("plan", ""));
    row.push_back(r.value("error", ""));
    t.rows.push_back(row);
  }
  return t;
}

void write_merged_csv(std::ostream& out, const MergedTable& t) {
  auto cell = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
    return q + "\"";
  };
  for (const auto& a : t.axes) out << cell(a) << ",";
  out << "status,iteration_time_s,tflops_per_gpu,mfu,peak_memory_bytes,oom,plan,error\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << cell(row[i]);
    out << "\n";
  }
}

namespace {
std::string heat_colour(double f) {  // light (fast) to dark blue (slow)
  char c[16];
  std::snprintf(c, sizeof c, "#%02x%02x%02x", static_cast<int>(230 - 200 * f), static_cast<int>(240 - 170 * f),
                static_cast<int>(255 - 100 * f));
  return c;
}

// Two axes: a heatmap of iteration times (light fast, dark slow, grey failed).
void draw_heatmap(report::Svg& svg, const MergedTable& t, const std::vector<std::string>& xs,
                  const std::vector<std::string>& ys, double lo, double hi) {
  const size_t time_col = t.axes.size() + 1;
  const double cw = 110, ch = 40, left = 170, top = 60;
  for (size_t i = 0; i < xs.size(); ++i) svg.text(left + i * cw + cw / 2, top - 8, xs[i], "text-anchor=\"middle\"");
  for (size_t j = 0; j < ys.size(); ++j) svg.text(left - 8, top + j * ch + ch / 2 + 4, ys[j], "text-anchor=\"end\"");
  for (const auto& r : t.rows) {
    const size_t i = std::find(xs.begin(), xs.end(), r[1]) - xs.begin(),
                 j = std::find(ys.begin(), ys.end(), r[0]) - ys.begin();
    const bool ok = !r[time_col].empty();
    const double f = ok && hi > lo ? (std::stod(r[time_col]) - lo) / (hi - lo) : 0;
    svg.rect(left + i * cw, top + j * ch, cw, ch, ok ? heat_colour(f) : "#dddddd", "", "stroke=\"white\"");
    svg.text(left + i * cw + cw / 2, top + j * ch + ch / 2 + 4,
             ok ? units::format_time(std::stod(r[time_col])) : "failed",
             std::string("text-anchor=\"middle\" fill=\"") + (f > 0.5 ? "white" : "black") + "\"");
  }
}

// One axis: iteration time over its values, a point and a label each.
void draw_line(report::Svg& svg, const MergedTable& t, double hi, double width) {
  const size_t time_col = t.axes.size() + 1;
  const double cw = 110, left = 170, plot_h = 240, base = 60 + plot_h;
  std::vector<std::pair<double, double>> points;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    const double x = left + static_cast<double>(i) * cw + cw / 2;
    svg.text(x, base + 20, r[0], "text-anchor=\"middle\"");
    if (r[time_col].empty()) continue;
    const double v = std::stod(r[time_col]), y = base - plot_h * (hi > 0 ? v / hi : 0);
    points.push_back({x, y});
    svg.circle(x, y, 4, "#1f4e9c").text(x, y - 8, units::format_time(v), "text-anchor=\"middle\"");
  }
  svg.polyline(points, "#1f4e9c").line(left - 10, base, width - 20, base, "black");
}
}  // namespace

void write_merged_svg(std::ostream& out, const MergedTable& t) {
  if (t.axes.empty() || t.axes.size() > 2)
    throw ConfigError(SourceLoc{"--plot", 0, 0}, "",
                      "a plot takes one axis (a line) or two (a heatmap); this sweep has " +
                          std::to_string(t.axes.size()) + " (the CSV has them all)");
  const size_t A = t.axes.size(), time_col = A + 1;
  std::vector<std::string> xs, ys;
  auto add = [](std::vector<std::string>& v, const std::string& s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  };
  double lo = INFINITY, hi = 0;
  for (const auto& r : t.rows) {
    add(xs, r[A == 2 ? 1 : 0]);
    if (A == 2) add(ys, r[0]);
    if (!r[time_col].empty()) lo = std::min(lo, std::stod(r[time_col])), hi = std::max(hi, std::stod(r[time_col]));
  }
  const double width = 170 + 110.0 * xs.size() + 40, height = A == 2 ? 60 + 40.0 * ys.size() + 70 : 360;
  report::Svg svg(width, height, 12, "", true);
  svg.text(10, 20, "iteration time (s) over " + t.axes[0] + (A == 2 ? " and " + t.axes[1] : ""), "font-size=\"14\"");
  if (A == 2)
    draw_heatmap(svg, t, xs, ys, lo, hi);
  else
    draw_line(svg, t, hi, width);
  out << svg.str();
}

}  // namespace dejavu::tools
