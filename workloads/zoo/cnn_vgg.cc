// VGG-16 and VGG-19 (Simonyan & Zisserman, 2015, configurations D and E), laid out as
// torchvision.models.vgg16 / vgg19 (no batch norm): 3x3 convolutions with bias, 2x2 max pools,
// adaptive average pool to 7x7, three fully connected layers with dropout.
#include "workloads/zoo/zoo_models.h"

namespace orrery::zoo {

namespace {

// Adaptive average pooling to out x out as one fixed window: stride floor(s/out) and window
// s - (out-1)*stride give exactly `out` outputs (PyTorch's windows when s is a multiple).
Tensor adaptive_avgpool(LayerBuilder& b, const std::string& layer, Tensor x, int64_t out) {
  const int64_t s = b.shape(x)[2];
  if (s == out) return x;
  const int64_t stride = s / out;
  return b.avgpool(layer, x, s - (out - 1) * stride, stride, 0);
}

}  // namespace

ModelGraph make_vgg(ZooKeys& keys, int depth) {
  LayerBuilder b = keys.builder("vgg" + std::to_string(depth), 64, "momentum");
  const int64_t image = keys.integer("image", 224, "input image height and width (pixels)", 224);
  const int64_t classes = keys.integer("classes", 1000, "output classes");
  keys.done();

  // Channels per conv; 0 is a 2x2 max pool (torchvision cfgs "D" and "E").
  const std::vector<int> d = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                              0,  512, 512, 512, 0,   512, 512, 512, 0};
  const std::vector<int> e = {64,  64,  0,   128, 128, 0,   256, 256, 256, 256, 0,
                              512, 512, 512, 512, 0,   512, 512, 512, 512, 0};
  const std::vector<int>& cfg = depth == 16 ? d : e;

  Tensor x = b.input({b.batch(), 3, image, image});
  int index = 0;  // torchvision's index into `features`
  for (int c : cfg) {
    const std::string layer = "features." + std::to_string(index);
    if (c == 0) {
      x = b.maxpool(layer, x, 2, 2, 0);
      index += 1;
    } else {
      x = b.conv2d(layer, x, c, 3, 3, 1, 1, 1, true);
      x = b.relu("features." + std::to_string(index + 1), x);
      index += 2;
    }
  }
  x = adaptive_avgpool(b, "avgpool", x, 7);
  x = b.view(x, {b.batch(), 512 * 7 * 7});
  x = b.relu("classifier.1", b.linear("classifier.0", x, 4096, true));
  x = b.dropout("classifier.2", x);
  x = b.relu("classifier.4", b.linear("classifier.3", x, 4096, true));
  x = b.dropout("classifier.5", x);
  x = b.linear("classifier.6", x, classes, true);
  b.cross_entropy("loss", x);
  return b.finish();
}

}  // namespace orrery::zoo
