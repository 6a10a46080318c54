// `dejavu export-platform`: a cluster YAML as a SimGrid platform XML.
#include <iostream>

#include "platforms/cluster.h"
#include "platforms/simgrid_xml.h"
#include "tools/commands/command.h"
#include "tools/output_file.h"

namespace dejavu::tools {

namespace {

class ExportPlatformCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("platform", input_, "cluster YAML")->required();
    cmd.add_option("-o,--output", output_, "XML file to write")->required();
  }

  int run() override {
    OutputSet out;
    out.add("--output", output_);
    const platforms::Cluster cluster = platforms::load_cluster_file(input_);
    platforms::ExportSummary s;
    out.write(output_, [&](std::ostream& o) { s = platforms::write_simgrid_platform(o, cluster); });
    out.commit();
    std::cout << "wrote " << output_ << ": " << s.hosts << " hosts, " << s.links << " links, " << s.routes
              << " routes in " << s.zones << (s.zones == 1 ? " zone\n" : " zones\n");
    return 0;
  }

 private:
  std::string input_, output_;
};

}  // namespace

std::unique_ptr<Command> make_export_platform_command() { return std::make_unique<ExportPlatformCommand>(); }

}  // namespace dejavu::tools
