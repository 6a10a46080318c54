// `dejavu validate --row N --export DIR`: one public row as simulate's input files.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <sstream>

#include "sim/config_node.h"
#include "sim/error.h"
#include "strategies/search/space.h"
#include "tools/public_row.h"
#include "tools/public_training.h"
#include "workloads/workload_yaml.h"

namespace dejavu::tools {

namespace {

// The row's server preset with its first server type (the only one a row's cluster changes)
// holding the row's GPU type, GPUs a server and servers.
std::string platform_yaml(const public_rows::ResolvedRow& row, const std::string& label) {
  const platforms::ServerGroup& g = row.cluster.groups.at(0);
  YAML::Node root = YAML::LoadFile(row.preset);
  root["name"] = root["name"].as<std::string>() + "-" + std::to_string(g.count * g.gpus_per_server) + "x" + g.gpu;
  YAML::Node servers = root["servers"][0];
  servers["count"] = g.count;
  servers["gpu"] = g.gpu;
  servers["gpus_per_server"] = g.gpus_per_server;
  std::ostringstream out;
  out << "# " << label << ": " << std::filesystem::path(row.preset).lexically_normal().string() << " with " << g.count
      << " servers of " << g.gpus_per_server << " " << g.gpu << "\n"
      << YAML::Dump(root) << "\n";
  return out.str();
}

std::string workload_yaml(const public_rows::ModelConfig& config, const std::string& label) {
  std::ostringstream out;
  std::visit([&](const auto& c) { workloads::write_workload_yaml(out, c, label); }, config);
  return out.str();
}

}  // namespace

RowExport export_public_row(const std::string& csv, const std::string& source, const std::string& platforms,
                            const PublicOptions& options) {
  const CsvTable table = public_rows::load_training_table(csv);
  const CsvRow* row = nullptr;
  for (const CsvRow& r : table.rows())
    if (public_rows::in_suite(r, source, options.precision) && r.text("row_id") == options.row) row = &r;
  if (!row) throw public_rows::no_such_row(options.row, source, table, options.precision);
  if (const auto why = public_rows::unsupported(*row))
    throw ConfigError(SourceLoc{"--row", 0, 0}, "", "row " + options.row + " is not simulated: " + *why);
  const public_rows::Calibrations calibrations = public_rows::load_calibrations(options.calibrations);
  const public_rows::ResolvedRow resolved = public_rows::resolve_row(*row, platforms, calibrations, options);
  const std::string label = "row " + options.row + " of " + source + " (" +
                            std::filesystem::path(table.file()).lexically_normal().string() + ")";
  RowExport out;
  out.run = public_rows::run_of(*row, resolved);
  out.files.emplace_back("platform.yaml", platform_yaml(resolved, label));
  out.files.emplace_back("workload.yaml", workload_yaml(resolved.config, label));
  std::ostringstream plan;
  strategies::search::write_plan_yaml(plan, resolved.plan, label + ", as validate runs it");
  out.files.emplace_back("plan.yaml", plan.str());
  for (const public_rows::CalibrationFile& f : calibrations)
    if (f.applies_to(row->text("gpu"))) out.files.emplace_back("calibration.yaml", read_input_file(f.file.loc().file));
  return out;
}

}  // namespace dejavu::tools
