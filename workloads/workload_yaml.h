// A generated model as the workload YAML that generates it again (`dejavu simulate
// --workload`): `dejavu validate --row N --export DIR` writes a public run's model so.
#pragma once

#include <ostream>
#include <string>

#include "workloads/llama.h"
#include "workloads/transformer.h"

namespace dejavu::workloads {

// A GPT-style decoder (kind: transformer). `comment` heads the file, one line.
void write_workload_yaml(std::ostream& out, const TransformerConfig& c, const std::string& comment);
// A Llama-style decoder (kind: llama), its experts too.
void write_workload_yaml(std::ostream& out, const LlamaConfig& c, const std::string& comment);

}  // namespace dejavu::workloads
