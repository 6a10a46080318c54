// The wire protocol of a NIC: what every packet carries besides its payload, so the share of
// a link's rate that is data (`nic: {protocol, mtu}`). Per packet of `mtu` payload bytes:
//   infiniband: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 bytes (IBTA, InfiniBand Architecture
//               Specification Vol. 1, ch. 5-7; the link's 400 Gb/s is after 64b/66b coding);
//   roce (v2):  preamble and start delimiter 8 + Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 +
//               ICRC 4 + FCS 4 + the 12-byte inter-frame gap = 82 bytes (IEEE 802.3 framing;
//               IBTA Annex A17, RoCEv2).
// RDMA's payload MTU is at most 4096 bytes on both (the default). At 4096: infiniband 99.37%,
// roce 98.04% of the rate. Congestion control (InfiniBand's credits against RoCE's PFC and
// DCQCN) is not modelled: under contention both share links as the engine shares them.
#pragma once

#include <string>
#include <vector>

namespace dejavu::platforms {

const std::vector<std::string>& nic_protocols();  // infiniband, roce
double packet_overhead_bytes(const std::string& protocol);
// payload / (payload + overhead) for packets of `mtu` payload bytes.
double framing_efficiency(const std::string& protocol, double mtu);

}  // namespace dejavu::platforms
