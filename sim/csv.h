// Every CSV input is read here: a header row naming the columns (in any order), then
// rows; blank lines and lines starting with '#' are skipped; cells are trimmed. Each
// cell is read through a typed accessor that checks it (whole, finite, within range)
// and names the file, the line, the column and what would be valid. No quoting: the
// files dejavu reads hold names and numbers.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/error.h"

namespace dejavu {

struct CsvHeader {
  std::string file;
  std::map<std::string, size_t> columns;  // name -> index
};

class CsvRow {
 public:
  int line() const { return line_; }
  SourceLoc loc(const std::string& column) const;
  bool has(const std::string& column) const;  // the column exists and the cell is not empty
  const std::string& text(const std::string& column) const;
  long long as_int(const std::string& column, long long min, long long max) const;
  double as_double(const std::string& column, double min, double max) const;
  std::string as_choice(const std::string& column, const std::vector<std::string>& choices) const;
  [[noreturn]] void fail(const std::string& column, const std::string& problem) const;

 private:
  friend class CsvTable;
  std::shared_ptr<const CsvHeader> header_;
  std::vector<std::string> cells_;
  int line_ = 0;
};

class CsvTable {
 public:
  // Reads `path` (a regular file, limits::kMaxInputBytes at most); a header is required.
  static CsvTable load_file(const std::string& path);
  static CsvTable parse(const std::string& text, const std::string& name);

  // Throws unless every one of `names` is a column; the error lists them all.
  void expect_columns(const std::vector<std::string>& names) const;
  const std::vector<CsvRow>& rows() const { return rows_; }
  const std::string& file() const { return header_->file; }
  int header_line() const { return header_line_; }

 private:
  std::shared_ptr<CsvHeader> header_;
  std::vector<CsvRow> rows_;
  int header_line_ = 0;
};

}  // namespace dejavu
