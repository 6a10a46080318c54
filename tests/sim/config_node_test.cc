#include "sim/config_node.h"

#include <gtest/gtest.h>

namespace dejavu {

TEST(ConfigNode, UnknownKeyPointsAtTheKeyAndListsValidOnes) {
  const ConfigNode n = ConfigNode::load_string("a: 1\nlinks:\n  - {bandwidth: 1 GB/s, colour: red}\n", "x.yaml");
  const ConfigNode link = n.child("links").items()[0];
  try {
    link.expect_map({"bandwidth", "latency"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "x.yaml:3:25: links[0].colour: unknown key; valid keys here are: bandwidth, latency");
  }
}

TEST(ConfigNode, QuantityErrorCarriesPositionAndPath) {
  const ConfigNode n = ConfigNode::load_string("links:\n  - bandwidth: fast\n", "p.yaml");
  try {
    n.child("links").items()[0].get_quantity("bandwidth", units::Dimension::Rate, 0, 1e16);
    FAIL();
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("p.yaml:2:16: links[0].bandwidth: expected a rate such as \"400 Gbps\"", 0), 0u) << msg;
    EXPECT_NE(msg.find("got \"fast\""), std::string::npos);
  }
}

TEST(ConfigNode, MalformedYamlIsAConfigErrorWithPosition) {
  try {
    ConfigNode::load_string("a: [1, 2\nb: 3\n", "m.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("m.yaml:", 0), 0u) << e.what();
  }
}

TEST(ConfigNode, MissingRequiredKeyIsNamed) {
  const ConfigNode n = ConfigNode::load_string("a: 1\n", "r.yaml");
  try {
    n.get_int("layers", 1, 100);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "r.yaml:1:1: layers: missing; this key is required");
  }
}

}  // namespace dejavu
