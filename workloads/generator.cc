#include "workloads/generator.h"

#include "sim/limits.h"
#include "workloads/dlrm.h"
#include "workloads/llama.h"
#include "workloads/resnet.h"
#include "workloads/transformer.h"

namespace dejavu::workloads {

Registry<Generator>& generators() {
  static Registry<Generator> registry("workload kind");
  return registry;
}

void register_builtins() {
  generators().add("llama", "Llama-style decoder: RMSNorm, grouped-query attention, SwiGLU, untied head",
                   [] { return std::make_unique<LlamaGenerator>(); });
  generators().add("resnet50", "ResNet-50 v1.5: convolutions as implicit GEMMs, bottleneck blocks as layers",
                   [] { return std::make_unique<ResNet50Generator>(); });
  generators().add("bert", "BERT-style encoder: token-type embeddings, pooler, masked-LM head",
                   [] { return std::make_unique<BertGenerator>(); });
  generators().add("vit", "Vision Transformer: patch embedding, class token, classifier",
                   [] { return std::make_unique<VitGenerator>(); });
  generators().add("dlrm",
                   "DLRM: embedding tables (sharded table-, row-, column-wise or replicated), MLPs, interaction",
                   [] { return std::make_unique<DlrmGenerator>(); });
  generators().add("transformer", "GPT-style decoder: embedding, decoder layers, LM head (Megatron layout)",
                   [] { return std::make_unique<TransformerGenerator>(); });
}

ModelGraph load_workload(const ConfigNode& root) {
  const ConfigNode kind = root.child("kind");
  if (!generators().has(kind.as_string()))
    kind.fail("unknown workload kind \"" + kind.as_string() + "\"; valid: " + generators().names_joined());
  ModelGraph g = generators().make(kind.as_string())->generate(root);
  g.topological_order();  // rejects cycles here, at the edge
  g.dtype_where = root.has("dtype") ? root.child("dtype").loc() : SourceLoc{root.loc().file, 0, 0};
  if (!g.embedding_sharding.empty()) {  // a plan may shard its tables otherwise: keep the text
    g.source_yaml = YAML::Dump(root.yaml());
    g.source_file = root.file();
  }
  if (root.has("global_batch_size")) {
    const ConfigNode b = root.child("global_batch_size");
    g.global_batch_size = static_cast<int>(b.as_int(1, limits::kMaxBatch));
  }
  return g;
}

ModelGraph load_workload_file(const std::string& path) { return load_workload(ConfigNode::load_file(path)); }

}  // namespace dejavu::workloads
