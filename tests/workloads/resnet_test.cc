#include "workloads/resnet.h"

#include <gtest/gtest.h>

#include "workloads/generator.h"

namespace dejavu::workloads {
namespace {

TEST(ResNet50, FourPointOneBillionMultiplyAddsAndTwentyFiveMillionParameters) {
  const ModelGraph g = load_workload_file(std::string(DEJAVU_SOURCE_DIR) + "/workloads/presets/resnet50.yaml");
  double flops = 0;
  for (size_t v = 0; v < g.size(); ++v)
    if (g.op(static_cast<int>(v)).counts_as_model_flops) flops += g.op(static_cast<int>(v)).fwd_flops;
  // He et al. 2016 / torchvision: about 4.1e9 multiply-adds per 224x224 image, 25,557,032 parameters.
  EXPECT_NEAR(flops / 2 / 4.1e9, 1.0, 0.01);
  EXPECT_NEAR(g.parameter_count() / 25557032.0, 1.0, 0.001);
  EXPECT_EQ(g.layers, 16);
}

TEST(ResNet50, StemConvolutionByHand) {
  // 7x7, 3 -> 64 channels, stride 2 on 224x224: 112x112 outputs of 7·7·3 multiply-adds x 64.
  const ModelGraph g = make_resnet50(224, 1000, sim::DType::BF16);
  EXPECT_EQ(g.op(0).name, "stem");
  EXPECT_DOUBLE_EQ(g.op(0).fwd_flops, 2.0 * 112 * 112 * 7 * 7 * 3 * 64);
}

}  // namespace
}  // namespace dejavu::workloads
