#include "strategies/lowering/offload.h"

namespace dejavu::strategies {

OffloadCost offload_cost(const std::string& tier, const platforms::ServerGroup& server, double params,
                         double element_bytes, double gradient_bytes) {
  const platforms::HostSpec& h = server.host;
  const double gpus = server.gpus_per_server;
  const bool nvme = tier == "nvme";
  OffloadCost c;
  c.pcie_bytes = (gradient_bytes + element_bytes) * params;
  c.host_traffic_bytes = 28 * params;
  c.nvme_traffic_bytes = nvme ? 24 * params : 0;
  c.host_held_bytes = gpus * params * (nvme ? 4 : 16);
  c.nvme_held_bytes = nvme ? gpus * params * 12 : 0;
  c.host_seconds = gpus * c.host_traffic_bytes / h.memory_Bps + (nvme ? gpus * c.nvme_traffic_bytes / h.nvme_Bps : 0);
  c.seconds = c.pcie_bytes / h.pcie_Bps + c.host_seconds;
  return c;
}

bool fits_host(const OffloadCost& cost, const platforms::ServerGroup& server) {
  return cost.host_held_bytes <= server.host.memory_bytes && cost.nvme_held_bytes <= server.host.nvme_bytes;
}

}  // namespace dejavu::strategies
