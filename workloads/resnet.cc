#include "workloads/resnet.h"

#include "sim/limits.h"
#include "workloads/op_builders.h"
#include "workloads/op_sac.h"

namespace dejavu::workloads {

using sim::OpClass;

namespace {

// A k x k convolution with batch norm: an implicit GEMM of (Hout·Wout) x (k·k·Cin) by
// (k·k·Cin) x Cout, then a normalisation (and ReLU) over its output.
struct Builder {
  Chain& chain;
  double e;
  int conv(const std::string& name, int layer, int k, int stride, int cin, int cout, int& hw) {
    const int out = (hw + stride - 1) / stride;
    const double pixels = static_cast<double>(out) * out;
    Op c = gemm(name, layer, pixels, static_cast<double>(k) * k * cin, cout, e, false);
    c.tp = TpMode::Replicated;
    c.activation_bytes = static_cast<double>(hw) * hw * cin * e;  // its input
    c.activation_split = false;
    chain.add(c);
    Op bn = memory_op(name + ".bn", OpClass::Norm, layer, pixels * cout, e, TpMode::Replicated);
    bn.params = 2.0 * cout;
    hw = out;
    return chain.add(bn);
  }
};

}  // namespace

ModelGraph make_resnet50(int image_size, int classes, sim::DType dtype) {
  ModelGraph g;
  g.name = "resnet50";
  g.heads = 1;  // convolutions are not split by tensor parallelism here
  g.dtype = dtype;
  const double e = sim::dtype_bytes(sim::storage_of(dtype));
  Chain chain(g);
  Builder b{chain, e};
  int hw = image_size;
  b.conv("stem", -1, 7, 2, 3, 64, hw);
  hw = (hw + 1) / 2;  // 3x3 max pool, stride 2
  const int blocks[] = {3, 4, 6, 3}, widths[] = {64, 128, 256, 512};
  int cin = 64, layer = 0;
  for (int st = 0; st < 4; ++st) {
    for (int i = 0; i < blocks[st]; ++i, ++layer) {
      const std::string p = "L" + std::to_string(layer) + ".";
      const int w = widths[st], stride = (i == 0 && st > 0) ? 2 : 1;
      int hw_in = hw;
      const int input = chain.last();
      b.conv(p + "conv1", layer, 1, 1, cin, w, hw);
      b.conv(p + "conv2", layer, 3, stride, w, w, hw);
      const int main_path = b.conv(p + "conv3", layer, 1, 1, w, 4 * w, hw);
      if (i == 0) {  // the shortcut's projection, a branch beside conv1..conv3
        chain.resume(input);
        b.conv(p + "downsample", layer, 1, stride, cin, 4 * w, hw_in);
      } else {
        chain.feed_next(input);  // the identity shortcut
      }
      chain.feed_next(main_path);
      Op add = memory_op(p + "residual_relu", OpClass::Elementwise, layer, static_cast<double>(hw) * hw * 4 * w, e,
                         TpMode::Replicated);
      chain.add(add);
      cin = 4 * w;
    }
  }
  g.layers = layer;
  g.boundary_bytes_per_sample = 56.0 * 56 * 256 * e;  // the largest block output (stage 1)
  Op fc = gemm("fc", layer, 1, 2048, classes, e, true);
  fc.tp = TpMode::Replicated;
  chain.add(fc);
  chain.add(memory_op("loss", OpClass::Elementwise, layer, classes, e, TpMode::Replicated));
  mark_op_sac(g);
  return g;
}

ModelGraph ResNet50Generator::generate(const ConfigNode& n) const {
  n.expect_map({"kind", "name", "image_size", "classes", "dtype", "global_batch_size"});
  ModelGraph g = make_resnet50(positive_key(n, "image_size", 224, false, 1 << 16),
                               positive_key(n, "classes", 1000, false, 1 << 24), dtype_key(n, sim::DType::BF16));
  g.name = n.get_string("name", n.file_stem());
  return g;
}

}  // namespace dejavu::workloads
