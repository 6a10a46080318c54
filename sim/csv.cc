#include "sim/csv.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/config_node.h"

namespace dejavu {

namespace {
std::string shown(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}
}  // namespace

SourceLoc CsvRow::loc(const std::string& column) const {
  auto it = header_->columns.find(column);
  return SourceLoc{header_->file, line_, it == header_->columns.end() ? 1 : static_cast<int>(it->second) + 1};
}

void CsvRow::fail(const std::string& column, const std::string& problem) const {
  throw ConfigError(loc(column), column, problem);
}

bool CsvRow::has(const std::string& column) const {
  auto it = header_->columns.find(column);
  return it != header_->columns.end() && it->second < cells_.size() && !cells_[it->second].empty();
}

const std::string& CsvRow::text(const std::string& column) const {
  auto it = header_->columns.find(column);
  if (it == header_->columns.end()) fail(column, "no such column");
  if (it->second >= cells_.size()) fail(column, "missing: the row has " + std::to_string(cells_.size()) + " cells");
  return cells_[it->second];
}

long long CsvRow::as_int(const std::string& column, long long min, long long max) const {
  const std::string& t = text(column);
  long long v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  const std::string range = "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  if (ec != std::errc() || end != t.data() + t.size() || t.empty())
    fail(column, range + ", got \"" + t.substr(0, 40) + "\"");
  if (v < min || v > max) fail(column, range + ", got " + t);
  return v;
}

double CsvRow::as_double(const std::string& column, double min, double max) const {
  const std::string& t = text(column);
  double v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  const std::string range = "expected a number from " + shown(min) + " to " + shown(max);
  if (ec != std::errc() || end != t.data() + t.size() || t.empty() || !std::isfinite(v))
    fail(column, range + ", got \"" + t.substr(0, 40) + "\"");
  if (v < min || v > max) fail(column, range + ", got " + t.substr(0, 40));
  return v;
}

std::string CsvRow::as_choice(const std::string& column, const std::vector<std::string>& choices) const {
  const std::string& t = text(column);
  for (const std::string& c : choices)
    if (c == t) return t;
  fail(column, "\"" + t.substr(0, 40) + "\"; valid: " + join(choices, ", "));
}

CsvTable CsvTable::load_file(const std::string& path) { return parse(read_input_file(path), path); }

CsvTable CsvTable::parse(const std::string& text, const std::string& name) {
  CsvTable t;
  t.header_ = std::make_shared<CsvHeader>();
  t.header_->file = name;
  std::stringstream in(text);
  std::string line;
  int no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '#') continue;
    std::vector<std::string> cells = split_csv_line(line);
    if (t.header_line_ == 0) {
      t.header_line_ = no;
      for (size_t i = 0; i < cells.size(); ++i)
        if (!t.header_->columns.emplace(cells[i], i).second)
          throw ConfigError(SourceLoc{name, no, static_cast<int>(i) + 1}, cells[i], "a column named twice");
      continue;
    }
    CsvRow row;
    row.header_ = t.header_;
    row.cells_ = std::move(cells);
    row.line_ = no;
    t.rows_.push_back(std::move(row));
  }
  if (t.header_line_ == 0) throw ConfigError(SourceLoc{name, 1, 1}, "", "the file is empty; expected a header row");
  return t;
}

void CsvTable::expect_columns(const std::vector<std::string>& names) const {
  for (const std::string& n : names)
    if (!header_->columns.count(n))
      throw ConfigError(SourceLoc{header_->file, header_line_, 1}, n,
                        "missing column; the header needs " + join(names, ", ") + " (in any order)");
}

}  // namespace dejavu
