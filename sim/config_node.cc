#include "sim/config_node.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/limits.h"

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

std::string read_input_file(const std::string& path) {
  auto fail = [&](const std::string& problem) -> std::string { throw ConfigError(SourceLoc{path, 0, 0}, "", problem); };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    fail(errno == ENOENT ? "cannot open the file: no such file"
                         : std::string("cannot open the file: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail("is a directory; expected a file");
  if (!S_ISREG(st.st_mode)) fail("is not a regular file (a device, FIFO or socket); expected a file");
  if (static_cast<double>(st.st_size) > limits::kMaxInputBytes)
    fail("is " + units::format_bytes(static_cast<double>(st.st_size)) + "; inputs are at most " +
         units::format_bytes(limits::kMaxInputBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(std::string("cannot open the file: ") + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // a UTF-8 byte-order mark
  return text;
}

ConfigNode ConfigNode::load_string(const std::string& text, const std::string& name) {
  // yaml-cpp recurses per nesting level: a deep enough document exhausts the stack.
  int depth = 0, deepest = 0;
  for (char c : text) {
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if (c == ']' || c == '}') --depth;
  }
  if (deepest > limits::kMaxYamlNesting)
    throw ConfigError(SourceLoc{name, 0, 0}, "",
                      "brackets nest " + std::to_string(deepest) + " deep; configs nest at most " +
                          std::to_string(limits::kMaxYamlNesting) + " levels");
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull())
      throw ConfigError(SourceLoc{name, 1, 1}, "", "the file is empty; expected a YAML mapping");
    return ConfigNode(root, name, "");
  } catch (const YAML::Exception& e) {
    throw ConfigError(loc_of(e.mark, name), "", "not valid YAML: " + e.msg);
  }
}

ConfigNode ConfigNode::load_file(const std::string& path) { return load_string(read_input_file(path), path); }

ConfigNode::ConfigNode(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

std::string ConfigNode::file_stem() const {
  std::string base = file_.substr(file_.find_last_of('/') + 1);
  const size_t dot = base.find('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

SourceLoc ConfigNode::loc() const { return loc_of(node_.Mark(), file_); }

void ConfigNode::fail(const std::string& problem) const { throw ConfigError(loc(), path_, problem); }

void ConfigNode::expect_map(std::initializer_list<const char*> allowed) const {
  expect_map(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void ConfigNode::expect_map(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) fail("expected a mapping of keys to values, got " + describe(node_));
  std::vector<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw ConfigError(loc_of(it->first.Mark(), file_), path_.empty() ? key : path_ + "." + key,
                        "given twice; each key once");
    seen.push_back(key);
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || key == a;
    if (!ok) {
      std::string p = path_.empty() ? key : path_ + "." + key;
      throw ConfigError(loc_of(it->first.Mark(), file_), p, "unknown key; valid keys here are: " + join(allowed, ", "));
    }
  }
}

std::vector<ConfigNode> ConfigNode::items() const {
  if (!node_.IsSequence()) fail("expected a list, got " + describe(node_));
  std::vector<ConfigNode> out;
  for (size_t i = 0; i < node_.size(); ++i) out.emplace_back(node_[i], file_, path_ + "[" + std::to_string(i) + "]");
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

namespace {
// Whether `s` is UTF-8 without control characters (which would break a one-line message
// or a JSON output): the only text a config may hold.
bool clean_text(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    const int more = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (more < 0) return false;
    for (int k = 1; k <= more; ++k)
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += 1 + more;
  }
  return true;
}
}  // namespace

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar()) fail("expected a single value, got " + describe(node_));
  if (!clean_text(node_.Scalar())) fail("expected text in UTF-8 without control characters");
  return node_.Scalar();
}

namespace {
std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}
std::string quantity_text(double x, units::Dimension dim) {
  switch (dim) {
    case units::Dimension::Time:
      return units::format_time(x);
    case units::Dimension::Bytes:
      return units::format_bytes(x);
    case units::Dimension::Rate:
      return units::format_rate(x);
    case units::Dimension::FlopRate:
      return number_text(x) + " FLOP/s";
  }
  return number_text(x);
}
}  // namespace

long long ConfigNode::as_int(long long min, long long max) const {
  const std::string s = as_string();
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const std::string range = "from " + std::to_string(min) + " to " + std::to_string(max);
  if (ec == std::errc::result_out_of_range) fail("expected a whole number " + range + ", got " + s.substr(0, 40));
  if (ec != std::errc() || end != s.data() + s.size())
    fail("expected a whole number " + range + ", got \"" + s.substr(0, 40) + "\"");
  if (v < min || v > max) fail("expected a whole number " + range + ", got " + s);
  return v;
}

double ConfigNode::as_double(double min, double max) const {
  const std::string s = as_string();
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const std::string range = "from " + number_text(min) + " to " + number_text(max);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    fail("expected a number " + range + ", got \"" + s.substr(0, 40) + "\"");
  if (v < min || v > max) fail("expected a number " + range + ", got " + s.substr(0, 40));
  return v;
}

bool ConfigNode::as_bool() const {
  const std::string s = as_string();
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail("expected true or false, got \"" + s + "\"");
}

double ConfigNode::as_quantity(units::Dimension dim, double min, double max) const {
  const std::string s = as_string();
  double v = 0;
  try {
    v = units::parse(s, dim);
  } catch (const units::UnitError& e) {
    fail(e.what());
  }
  if (v < min || v > max)
    fail("expected " + quantity_text(min, dim) + " to " + quantity_text(max, dim) + ", got \"" + s + "\"");
  return v;
}

std::string ConfigNode::as_choice(const std::vector<std::string>& choices) const {
  const std::string s = as_string();
  for (const auto& c : choices)
    if (c == s) return s;
  fail("expected one of " + join(choices, ", ") + ", got \"" + s + "\"");
}

long long ConfigNode::get_int(const std::string& key, long long fallback, long long min, long long max) const {
  return has(key) ? child(key).as_int(min, max) : fallback;
}
double ConfigNode::get_double(const std::string& key, double fallback, double min, double max) const {
  return has(key) ? child(key).as_double(min, max) : fallback;
}
bool ConfigNode::get_bool(const std::string& key, bool fallback) const {
  return has(key) ? child(key).as_bool() : fallback;
}
std::string ConfigNode::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? child(key).as_string() : fallback;
}
double ConfigNode::get_quantity(const std::string& key, units::Dimension d, double fallback, double min,
                                double max) const {
  return has(key) ? child(key).as_quantity(d, min, max) : fallback;
}

std::string yaml_scalar(const std::string& text) {
  YAML::Emitter out;
  out << text;
  return out.c_str();
}

}  // namespace dejavu
