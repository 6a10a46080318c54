// ResNet-50 (He et al. 2016, torchvision's v1.5: the stride on the 3x3 convolution) for
// image classification: a 7x7 stem, 16 bottleneck blocks in four stages of 3, 4, 6 and 3,
// and a 1000-way classifier. Convolutions are priced as implicit GEMMs with their exact
// FLOPs (2·k·k·Cin·Cout·Hout·Wout); the bottleneck blocks are the layers pipelines split.
//
//   kind: resnet50
//   image_size: 224
//   classes: 1000
//   dtype: bf16
#pragma once

#include "workloads/generator.h"

namespace dejavu::workloads {

ModelGraph make_resnet50(int image_size, int classes, sim::DType dtype);

class ResNet50Generator : public Generator {
 public:
  ModelGraph generate(const ConfigNode& config) const override;
};

}  // namespace dejavu::workloads
