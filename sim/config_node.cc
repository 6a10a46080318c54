#include "sim/config_node.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace dejavu {

namespace {
SourceLoc loc_of(const YAML::Mark& m, const std::string& file) {
  if (m.line < 0) return SourceLoc{file, 0, 0};
  return SourceLoc{file, m.line + 1, m.column + 1};
}

std::string describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsScalar()) return "\"" + n.Scalar() + "\"";
  if (n.IsSequence()) return "a list";
  return "a mapping";
}
}  // namespace

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) {
    const size_t a = cell.find_first_not_of(" \t\r"), b = cell.find_last_not_of(" \t\r");
    out.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
  }
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

ConfigNode ConfigNode::load_string(const std::string& text, const std::string& name) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull())
      throw ConfigError(SourceLoc{name, 1, 1}, "", "the file is empty; expected a YAML mapping");
    return ConfigNode(root, name, "");
  } catch (const YAML::Exception& e) {
    throw ConfigError(loc_of(e.mark, name), "", "not valid YAML: " + e.msg);
  }
}

ConfigNode ConfigNode::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(SourceLoc{path, 0, 0}, "", "cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_string(ss.str(), path);
}

ConfigNode::ConfigNode(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

std::string ConfigNode::file_stem() const {
  std::string base = file_.substr(file_.find_last_of('/') + 1);
  const size_t dot = base.find('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

SourceLoc ConfigNode::loc() const { return loc_of(node_.Mark(), file_); }

void ConfigNode::fail(const std::string& problem) const {
  throw ConfigError(loc(), path_, problem);
}

void ConfigNode::expect_map(std::initializer_list<const char*> allowed) const {
  if (!node_.IsMap()) fail("expected a mapping of keys to values, got " + describe(node_));
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.Scalar();
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) {
      std::vector<std::string> names(allowed.begin(), allowed.end());
      std::string p = path_.empty() ? key : path_ + "." + key;
      throw ConfigError(loc_of(it->first.Mark(), file_), p,
                        "unknown key; valid keys here are: " + join(names, ", "));
    }
  }
}

std::vector<ConfigNode> ConfigNode::items() const {
  if (!node_.IsSequence()) fail("expected a list, got " + describe(node_));
  std::vector<ConfigNode> out;
  for (size_t i = 0; i < node_.size(); ++i)
    out.emplace_back(node_[i], file_, path_ + "[" + std::to_string(i) + "]");
  return out;
}

bool ConfigNode::has(const std::string& key) const {
  return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

ConfigNode ConfigNode::child(const std::string& key) const {
  std::string p = path_.empty() ? key : path_ + "." + key;
  if (!node_.IsMap()) fail("expected a mapping, got " + describe(node_));
  if (!has(key)) throw ConfigError(loc(), p, "missing; this key is required");
  return ConfigNode(node_[key], file_, p);
}

SourceLoc ConfigNode::key_loc(const std::string& key) const {
  for (auto it = node_.begin(); node_.IsMap() && it != node_.end(); ++it)
    if (it->first.Scalar() == key) return loc_of(it->first.Mark(), file_);
  return loc();
}

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar()) fail("expected a single value, got " + describe(node_));
  return node_.Scalar();
}

long long ConfigNode::as_int() const {
  const std::string s = as_string();
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    fail("expected a whole number, got \"" + s + "\"");
  return v;
}

double ConfigNode::as_double() const {
  const std::string s = as_string();
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    fail("expected a number, got \"" + s + "\"");
  return v;
}

bool ConfigNode::as_bool() const {
  const std::string s = as_string();
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail("expected true or false, got \"" + s + "\"");
}

double ConfigNode::as_quantity(units::Dimension dim) const {
  const std::string s = as_string();
  try {
    return units::parse(s, dim);
  } catch (const units::UnitError& e) {
    fail(e.what());
  }
}

std::string ConfigNode::as_choice(const std::vector<std::string>& choices) const {
  const std::string s = as_string();
  for (const auto& c : choices)
    if (c == s) return s;
  fail("expected one of " + join(choices, ", ") + ", got \"" + s + "\"");
}

long long ConfigNode::get_int(const std::string& key, long long fallback) const {
  return has(key) ? child(key).as_int() : fallback;
}
double ConfigNode::get_double(const std::string& key, double fallback) const {
  return has(key) ? child(key).as_double() : fallback;
}
bool ConfigNode::get_bool(const std::string& key, bool fallback) const {
  return has(key) ? child(key).as_bool() : fallback;
}
std::string ConfigNode::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? child(key).as_string() : fallback;
}
double ConfigNode::get_quantity(const std::string& key, units::Dimension d,
                                double fallback) const {
  return has(key) ? child(key).as_quantity(d) : fallback;
}

}  // namespace dejavu
