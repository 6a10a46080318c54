// Python bindings (pybind11) over the C++ library, not a subprocess: simulate, search,
// collectives and inspect, with configs as YAML paths or Python dicts, and every dejavu
// error raised as dejavu.Error carrying the same message as the command line's.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <sstream>

#include "strategies/plan_cluster.h"
#include "strategies/plan_model.h"
#include "strategies/recompute_modes.h"
#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "sim/engine.h"
#include "strategies/builtins.h"
#include "strategies/cluster/placement.h"
#include "strategies/search/rerank.h"
#include "strategies/search/searcher.h"
#include "strategies/training/builtins.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"
#include "strategies/simulate.h"
#include "tools/collective_sweep.h"
#include "tools/plan_search.h"
#include "tools/platform_input.h"
#include "workloads/generator.h"
#include "workloads/inspect.h"
#include "tools/report/iteration.h"

namespace py = pybind11;
using namespace dejavu;

namespace {

YAML::Node to_yaml(py::handle h) {
  if (py::isinstance<py::dict>(h)) {
    YAML::Node n(YAML::NodeType::Map);
    for (auto kv : py::reinterpret_borrow<py::dict>(h)) n[py::str(kv.first).cast<std::string>()] = to_yaml(kv.second);
    return n;
  }
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    YAML::Node n(YAML::NodeType::Sequence);
    for (auto item : h) n.push_back(to_yaml(item));
    return n;
  }
  if (py::isinstance<py::bool_>(h)) return YAML::Node(h.cast<bool>() ? "true" : "false");
  return YAML::Node(py::str(h).cast<std::string>());
}

// A config argument: a path to a YAML file, or a dict with the same keys.
ConfigNode config(py::handle h, const char* what) {
  if (py::isinstance<py::str>(h)) return ConfigNode::load_file(h.cast<std::string>());
  if (py::isinstance<py::dict>(h)) return ConfigNode(to_yaml(h), std::string("<") + what + " dict>", "");
  throw Error(std::string(what) + ": expected a YAML path or a dict");
}

struct Result {
  strategies::Simulation sim;
  double iteration_time_s() const { return sim.report.iteration_time_s; }
  py::list timeline() const {
    const sim::TaskGraph& g = sim.job.graph;
    py::list events;
    for (size_t i = 0; i < g.size(); ++i) {
      const sim::Task& t = g.task(static_cast<sim::TaskId>(i));
      const int dev = t.kind == sim::TaskKind::Collective ? g.participants(t.participants).at(0) : t.device;
      py::dict e;
      e["device"] = g.devices()[dev].name;
      e["stream"] = g.stream_names()[t.stream];
      e["label"] = g.labels()[t.label];
      e["microbatch"] = t.tag;  // the lowering tags each task with its microbatch
      e["start_s"] = sim.result.start_s[i];
      e["end_s"] = sim.result.end_s[i];
      events.append(e);
    }
    try {  // a DataFrame when pandas is there
      return py::module_::import("pandas").attr("DataFrame")(events);
    } catch (const py::error_already_set&) {
      return events;
    }
  }
};

void ensure_registered() {
  static bool done = false;
  if (done) return;
  sim::register_builtins();
  workloads::register_builtins();
  strategies::register_builtins();
  strategies::search::register_searchers();
  strategies::register_training();
  strategies::cluster::register_placement_policies();
  done = true;
}

}  // namespace

PYBIND11_MODULE(dejavu, m) {
  m.doc() = "dejavu: a discrete-event simulator of distributed deep-learning training";
  ensure_registered();
  static py::exception<Error> error(m, "Error");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      error(e.what());
    }
  });

  py::class_<strategies::DeviceReport>(m, "Device")
      .def_readonly("gpu", &strategies::DeviceReport::gpu)
      .def_readonly("name", &strategies::DeviceReport::name)
      .def_readonly("gpu_type", &strategies::DeviceReport::gpu_type)
      .def_readonly("stage", &strategies::DeviceReport::stage)
      .def_readonly("dp_rank", &strategies::DeviceReport::dp_rank)
      .def_readonly("tp_rank", &strategies::DeviceReport::tp_rank)
      .def_readonly("busy_s", &strategies::DeviceReport::busy_s)
      .def_readonly("communication_s", &strategies::DeviceReport::communication_s)
      .def_readonly("idle_s", &strategies::DeviceReport::idle_s)
      .def_readonly("peak_memory_bytes", &strategies::DeviceReport::peak_memory_bytes)
      .def_readonly("memory_capacity_bytes", &strategies::DeviceReport::memory_capacity_bytes);

  py::class_<Result>(m, "Result")
      .def_property_readonly("iteration_time_s", &Result::iteration_time_s)
      .def_property_readonly("tflops_per_gpu", [](const Result& r) { return r.sim.report.tflops_per_gpu; })
      .def_property_readonly("mfu", [](const Result& r) { return r.sim.report.mfu; })
      .def_property_readonly("oom", [](const Result& r) { return r.sim.report.oom; })
      .def_property_readonly("peak_memory_bytes", [](const Result& r) { return r.sim.report.peak_memory_bytes; })
      .def_property_readonly("devices", [](const Result& r) { return r.sim.report.devices; })
      .def("json",
           [](const Result& r) {
             std::ostringstream o;
             report::write_json(o, r.sim.report);
             return o.str();
           })
      .def("summary",
           [](const Result& r) {
             std::ostringstream o;
             report::write_summary(o, r.sim.report);
             return o.str();
           })
      .def("timeline", &Result::timeline, "every task: device, stream, label, microbatch, start_s, end_s");

  m.def(
      "simulate",
      [](py::object platform, py::object workload, py::object plan, const std::string& engine,
         const std::vector<std::string>& calibration) {
        const strategies::Plan p = strategies::load_plan(config(plan, "plan"));
        platforms::Cluster loaded = platforms::load_cluster(config(platform, "platform"));
        tools::apply_calibrations(loaded, calibration);  // YAML paths, or a framework's shipped files
        const platforms::Cluster cluster = strategies::cluster_for_plan(loaded, p);
        const workloads::ModelGraph model =
            strategies::model_for_plan(workloads::load_workload(config(workload, "workload")), p);
        return Result{strategies::simulate(model, cluster, p, engine)};
      },
      py::arg("platform"), py::arg("workload"), py::arg("plan"), py::arg("engine") = "analytic",
      py::arg("calibration") = std::vector<std::string>{},
      "Simulate one training iteration; each config a YAML path or a dict; calibration: YAML paths or "
      "frameworks' names (nemo, megatron-bridge, ...), as simulate --calibration takes them.");

  m.def(
      "search",
      [](py::object platform, py::object workload, const std::string& algo, int global_batch, int top,
         unsigned long long seed, double budget_s, long rerank, const std::string& grad_dtype,
         const std::vector<std::string>& recompute) {
        const platforms::Cluster cluster = platforms::load_cluster(config(platform, "platform"));
        const workloads::ModelGraph model = workloads::load_workload(config(workload, "workload"));
        const int batch = global_batch > 0 ? global_batch : model.global_batch_size;
        if (batch <= 0) throw Error("search: give global_batch or global_batch_size in the workload");
        if (rerank < 0 || rerank > 100000) throw Error("search: rerank must be 0 to 100000");
        if (!grad_dtype.empty() && grad_dtype != "fp32" && grad_dtype != "bf16" && grad_dtype != "fp16")
          throw Error("search: grad_dtype \"" + grad_dtype + "\"; valid: fp32, bf16, fp16, or empty (the model's)");
        const std::vector<std::string>& modes = strategies::recompute_mode_names();
        for (const std::string& m : recompute)
          if (std::find(modes.begin(), modes.end(), m) == modes.end())
            throw Error("search: recompute \"" + m + "\"; valid: " + strategies::recompute_mode_list());
        const strategies::search::Problem problem{&model, &cluster, batch, grad_dtype, recompute};
        strategies::search::SimulationEvaluator evaluator(problem);
        strategies::search::SearchOptions o;
        o.top = top;
        o.seed = seed;
        o.budget_s = budget_s;
        const auto r =
            strategies::search::search_ranked(*strategies::search::searchers().make(algo), problem, evaluator, o,
                                              rerank, strategies::search::rank_engine_price(problem));
        // Every key load_plan reads, so that simulate(plan=...) runs the plan the search scored.
        const py::object loads = py::module_::import("json").attr("loads");
        auto plan_dict = [&](const strategies::Plan& p) { return loads(tools::plan_json_text(p)); };
        py::list tops;
        for (const auto& c : r.top) {
          py::dict e;
          e["plan"] = plan_dict(c.plan);
          e["description"] = strategies::search::describe(c.plan);
          e["iteration_time_s"] = c.score.iteration_time_s;
          if (c.alone_s > 0) e["alone_iteration_time_s"] = c.alone_s;
          e["peak_memory_bytes"] = c.score.peak_memory_bytes;
          tops.append(e);
        }
        py::dict out;
        out["algorithm"] = algo;
        out["best"] = tops.empty() ? py::object(py::none()) : py::object(tops[0]);
        out["top"] = tops;
        out["evaluations"] = r.evaluations;
        out["wall_s"] = r.wall_s;
        out["ranking"] = r.ranking;
        return out;
      },
      py::arg("platform"), py::arg("workload"), py::arg("algo") = "grid", py::arg("global_batch") = 0,
      py::arg("top") = 5, py::arg("seed") = 1, py::arg("budget_s") = 0.0,
      py::arg("rerank") = strategies::search::kDefaultRerank, py::arg("grad_dtype") = "",
      py::arg("recompute") = std::vector<std::string>{},
      "Search the best plan: grid, dp, mcmc or diff; the best plans ranked with links shared "
      "(re-pricing at most `rerank` of them; 0: the searcher's own ranking); grad_dtype as the "
      "plan key, in every plan; recompute the modes plans try (default none, selective, full).");

  m.def(
      "collectives",
      [](py::object platform, const std::string& op, int gpus, const std::string& min, const std::string& max,
         const std::string& algo) {
        const platforms::Cluster cluster = platforms::load_cluster(config(platform, "platform"));
        tools::SweepOptions o;
        if (!sim::parse_collective_op(op, &o.op))
          throw Error("unknown operation " + op + "; valid: " + sim::collective_op_names());
        o.gpus = gpus > 0 ? gpus : cluster.gpu_count();
        o.min_bytes = tools::parse_message_size("min", min);
        o.max_bytes = tools::parse_message_size("max", max);
        o.algorithm = algo;
        py::list rows;
        for (const auto& r : tools::run_sweep(cluster, o)) {
          py::dict d;
          d["bytes"] = r.bytes;
          d["time_s"] = r.time_s;
          d["algbw_Bps"] = r.algbw_Bps;
          d["busbw_Bps"] = r.busbw_Bps;
          d["algorithm"] = r.algorithm;
          rows.append(d);
        }
        return rows;
      },
      py::arg("platform"), py::arg("op") = "all_reduce", py::arg("gpus") = 0, py::arg("min") = "1M",
      py::arg("max") = "1G", py::arg("algo") = "ring", "An nccl-tests-style sweep of one collective.");

  m.def(
      "inspect",
      [](py::object workload, double batch) {
        std::ostringstream o;
        workloads::write_inspection(o, workloads::load_workload(config(workload, "workload")), batch);
        return o.str();
      },
      py::arg("workload"), py::arg("batch") = 1.0, "Parameters, FLOPs and memory of a workload.");
}
