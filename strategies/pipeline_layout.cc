#include "strategies/pipeline_layout.h"

#include <cctype>

namespace dejavu::strategies {

namespace {

const char* const kValid =
    "valid: E (embedding), t (decoder layer), L (loss), | between stages, (group)*n and x*n "
    "repetitions, commas; e.g. \"Et*2|(t*2|)*34,t*3|(t*2|)*3,tL\"";

struct Unroller {
  long long limit;  // characters the unrolled text may reach
  std::string error;

  // The count after a `*` at text[i] (i just past the star): advances i.
  long long count(const std::string& text, size_t& i) {
    size_t j = i;
    long long n = 0;
    for (; j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])); ++j)
      if (n <= limit) n = n * 10 + (text[j] - '0');  // past the limit, repeat() refuses it
    if (j == i) error = "a * without a count after it";
    if (j > i && n < 1) error = "a repetition count of 0";
    i = j;
    return n;
  }
  // Appends `part` n times, within the limit.
  void repeat(std::string& out, const std::string& part, long long n) {
    if (static_cast<double>(part.size()) * static_cast<double>(n) + static_cast<double>(out.size()) >
        static_cast<double>(limit)) {
      error = "unrolls to more than " + std::to_string(limit) + " characters";
      return;
    }
    for (long long k = 0; k < n; ++k) out += part;
  }
  // Megatron-Core's two passes: (group)*n, then x*n. Groups do not nest.
  std::string groups(const std::string& text) {
    std::string out;
    for (size_t i = 0; i < text.size() && error.empty();) {
      if (text[i] == ')') {
        error = "a ) without its (";
        break;
      }
      if (text[i] != '(') {
        out += text[i++];
        continue;
      }
      const size_t close = text.find(')', i);
      const size_t nested = text.find('(', i + 1);
      if (close == std::string::npos)
        error = "a ( without its )";
      else if (nested < close)
        error = "a group inside a group (groups do not nest)";
      else if (close == i + 1)
        error = "an empty group ()";
      else if (close + 1 >= text.size() || text[close + 1] != '*')
        error = "a group without *n after it";
      if (!error.empty()) break;
      size_t at = close + 2;
      const long long n = count(text, at);
      if (error.empty()) repeat(out, text.substr(i + 1, close - i - 1), n);
      i = at;
    }
    return out;
  }
  std::string characters(const std::string& text) {
    std::string out;
    for (size_t i = 0; i < text.size() && error.empty();) {
      if (i + 1 < text.size() && text[i + 1] == '*') {
        size_t at = i + 2;
        const long long n = count(text, at);
        if (error.empty()) repeat(out, std::string(1, text[i]), n);
        i = at;
      } else if (text[i] == '*') {
        error = "a * with nothing before it";
      } else {
        out += text[i++];
      }
    }
    return out;
  }
};

// The stages of an unrolled layout: E first in the first stage, L last in the last, every
// other stage at least one layer.
PipelineLayout stages_of(const std::string& flat) {
  PipelineLayout out;
  std::vector<std::string> stages(1);
  for (char c : flat) {
    if (c == '|') {
      stages.emplace_back();
      continue;
    }
    if (c == 'm') return {{}, "m (a multi-token-prediction layer): dejavu's models have none; " + std::string(kValid)};
    if (c != 'E' && c != 't' && c != 'L') return {{}, "unknown character '" + std::string(1, c) + "'; " + kValid};
    stages.back() += c;
  }
  if (stages.front().empty() || stages.front()[0] != 'E')
    return {{}, "no E opening the first stage; " + std::string(kValid)};
  if (stages.back().empty() || stages.back().back() != 'L')
    return {{}, "no L closing the last stage; " + std::string(kValid)};
  const size_t S = stages.size();
  for (size_t s = 0; s < S; ++s) {
    const std::string& st = stages[s];
    int layers = 0;
    for (size_t k = 0; k < st.size(); ++k) {
      layers += st[k] == 't';
      if (st[k] == 'E' && (s != 0 || k != 0))
        return {{}, "E where the embedding cannot be; valid: once, first in the first stage"};
      if (st[k] == 'L' && (s != S - 1 || k != st.size() - 1))
        return {{}, "L where the loss cannot be; valid: once, last in the last stage"};
    }
    if (layers == 0 && s != 0 && s != S - 1)
      return {{},
              "stage " + std::to_string(s) +
                  " holds nothing; valid: every stage holds a layer (the first may hold "
                  "only E, the last only L)"};
    out.layers.push_back(layers);
  }
  return out;
}

}  // namespace

PipelineLayout parse_pipeline_layout(const std::string& text) {
  std::string plain;
  for (char c : text)
    if (c != ',') plain += c;
  if (plain.empty()) return {{}, "an empty layout; " + std::string(kValid)};
  // Unrolled: at most kMaxLayers layers, a separator after each stage, E and L.
  Unroller u{2 * limits::kMaxLayers + 2, {}};
  const std::string grouped = u.groups(plain);
  const std::string flat = u.error.empty() ? u.characters(grouped) : "";
  if (!u.error.empty()) return {{}, u.error + "; " + kValid};
  return stages_of(flat);
}

}  // namespace dejavu::strategies
