// ResNet-50, -101 and -152 (He et al., 2016, Table 1), laid out as torchvision.models.resnet50 /
// resnet101 / resnet152 ("v1.5": the stride-2 convolution of a down-sampling bottleneck is its 3x3).
// Convolutions have no bias; each is followed by batch norm.
#include "workloads/zoo/zoo_models.h"

namespace orrery::zoo {

namespace {

Tensor conv_bn(LayerBuilder& b, const std::string& conv, const std::string& bn, Tensor x,
               int64_t out, int64_t k, int64_t stride) {
  return b.batchnorm(bn, b.conv2d(conv, x, out, k, k, stride, k / 2, k / 2, false));
}

Tensor bottleneck(LayerBuilder& b, const std::string& p, Tensor x, int64_t planes, int64_t stride,
                  bool downsample) {
  Tensor y = b.relu(p + ".relu", conv_bn(b, p + ".conv1", p + ".bn1", x, planes, 1, 1));
  y = b.relu(p + ".relu", conv_bn(b, p + ".conv2", p + ".bn2", y, planes, 3, stride));
  y = conv_bn(b, p + ".conv3", p + ".bn3", y, planes * 4, 1, 1);
  Tensor shortcut = x;
  if (downsample) {
    shortcut = conv_bn(b, p + ".downsample.0", p + ".downsample.1", x, planes * 4, 1, stride);
  }
  return b.relu(p + ".relu", b.add(p + ".residual", y, shortcut));
}

}  // namespace

ModelGraph make_resnet(ZooKeys& keys, int depth) {
  LayerBuilder b = keys.builder("resnet" + std::to_string(depth), 64, "momentum");
  const int64_t image = keys.integer("image", 224, "input image height and width (pixels)", 32);
  const int64_t classes = keys.integer("classes", 1000, "output classes");
  keys.done();

  // Bottleneck blocks per stage (He et al. 2016, Table 1).
  const std::vector<int> blocks = depth == 50    ? std::vector<int>{3, 4, 6, 3}
                                  : depth == 101 ? std::vector<int>{3, 4, 23, 3}
                                                 : std::vector<int>{3, 8, 36, 3};
  Tensor x = b.input({b.batch(), 3, image, image});
  x = b.relu("relu", b.batchnorm("bn1", b.conv2d("conv1", x, 64, 7, 7, 2, 3, 3, false)));
  x = b.maxpool("maxpool", x, 3, 2, 1);
  int64_t in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t planes = int64_t{64} << stage;
    for (int i = 0; i < blocks[stage]; ++i) {
      const int64_t stride = i == 0 && stage > 0 ? 2 : 1;
      const bool down = i == 0 && (stride != 1 || in != planes * 4);
      x = bottleneck(b, "layer" + std::to_string(stage + 1) + "." + std::to_string(i), x, planes,
                     stride, down);
      in = planes * 4;
    }
  }
  x = b.global_avgpool("avgpool", x);
  x = b.view(x, {b.batch(), in});
  x = b.linear("fc", x, classes, true);
  b.cross_entropy("loss", x);
  return b.finish();
}

}  // namespace orrery::zoo
