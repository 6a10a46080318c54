#include "platforms/nic_protocol.h"

#include <stdexcept>

namespace dejavu::platforms {

namespace {
struct Protocol {
  std::string name;
  double overhead_bytes;
};
const std::vector<Protocol>& table() {
  static const std::vector<Protocol> t = {{"infiniband", 8 + 12 + 4 + 2}, {"roce", 8 + 14 + 20 + 8 + 12 + 4 + 4 + 12}};
  return t;
}
}  // namespace

const std::vector<std::string>& nic_protocols() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Protocol& p : table()) out.push_back(p.name);
    return out;
  }();
  return names;
}

double packet_overhead_bytes(const std::string& protocol) {
  for (const Protocol& p : table())
    if (p.name == protocol) return p.overhead_bytes;
  throw std::invalid_argument("unknown NIC protocol " + protocol);
}

double framing_efficiency(const std::string& protocol, double mtu) {
  return mtu / (mtu + packet_overhead_bytes(protocol));
}

}  // namespace dejavu::platforms
