// Inception-v3 (Szegedy et al., 2016), laid out as torchvision.models.inception_v3: every
// convolution is a BasicConv2d (conv without bias, batch norm, ReLU); blocks Mixed_5b..Mixed_7c
// are InceptionA..E. The auxiliary classifier is optional (key aux_logits): torchvision's
// 27.2 M parameters include it, the 23.8 M usually quoted do not.
#include "workloads/zoo/zoo_models.h"

namespace orrery::zoo {

namespace {

struct Net {
  LayerBuilder& b;

  // A k x k BasicConv2d.
  Tensor conv(const std::string& p, Tensor x, int64_t out, int64_t k, int64_t stride = 1,
              int64_t pad = 0) {
    return basic(p, x, out, k, k, stride, pad, pad);
  }
  // A kh x kw BasicConv2d with stride 1 (the factorized 1x7, 7x1, 1x3, 3x1 convolutions).
  Tensor rect(const std::string& p, Tensor x, int64_t out, int64_t kh, int64_t kw) {
    return basic(p, x, out, kh, kw, 1, kh / 2, kw / 2);
  }
  Tensor basic(const std::string& p, Tensor x, int64_t out, int64_t kh, int64_t kw, int64_t stride,
               int64_t ph, int64_t pw) {
    x = b.conv2d(p + ".conv", x, out, kh, kw, stride, ph, pw, false);
    return b.relu(p + ".relu", b.batchnorm(p + ".bn", x));
  }
  Tensor pool_branch(const std::string& p, Tensor x, int64_t out) {
    return conv(p + ".branch_pool", b.avgpool(p + ".avg_pool", x, 3, 1, 1), out, 1);
  }

  Tensor inception_a(const std::string& p, Tensor x, int64_t pool_features) {
    Tensor b1 = conv(p + ".branch1x1", x, 64, 1);
    Tensor b5 = conv(p + ".branch5x5_2", conv(p + ".branch5x5_1", x, 48, 1), 64, 5, 1, 2);
    Tensor b3 = conv(p + ".branch3x3dbl_1", x, 64, 1);
    b3 = conv(p + ".branch3x3dbl_2", b3, 96, 3, 1, 1);
    b3 = conv(p + ".branch3x3dbl_3", b3, 96, 3, 1, 1);
    return b.concat(p, {b1, b5, b3, pool_branch(p, x, pool_features)}, 1);
  }

  Tensor inception_b(const std::string& p, Tensor x) {
    Tensor b3 = conv(p + ".branch3x3", x, 384, 3, 2);
    Tensor bd = conv(p + ".branch3x3dbl_1", x, 64, 1);
    bd = conv(p + ".branch3x3dbl_2", bd, 96, 3, 1, 1);
    bd = conv(p + ".branch3x3dbl_3", bd, 96, 3, 2);
    return b.concat(p, {b3, bd, b.maxpool(p + ".max_pool", x, 3, 2, 0)}, 1);
  }

  Tensor inception_c(const std::string& p, Tensor x, int64_t c7) {
    Tensor b1 = conv(p + ".branch1x1", x, 192, 1);
    Tensor b7 = conv(p + ".branch7x7_1", x, c7, 1);
    b7 = rect(p + ".branch7x7_2", b7, c7, 1, 7);
    b7 = rect(p + ".branch7x7_3", b7, 192, 7, 1);
    Tensor bd = conv(p + ".branch7x7dbl_1", x, c7, 1);
    bd = rect(p + ".branch7x7dbl_2", bd, c7, 7, 1);
    bd = rect(p + ".branch7x7dbl_3", bd, c7, 1, 7);
    bd = rect(p + ".branch7x7dbl_4", bd, c7, 7, 1);
    bd = rect(p + ".branch7x7dbl_5", bd, 192, 1, 7);
    return b.concat(p, {b1, b7, bd, pool_branch(p, x, 192)}, 1);
  }

  Tensor inception_d(const std::string& p, Tensor x) {
    Tensor b3 = conv(p + ".branch3x3_2", conv(p + ".branch3x3_1", x, 192, 1), 320, 3, 2);
    Tensor b7 = conv(p + ".branch7x7x3_1", x, 192, 1);
    b7 = rect(p + ".branch7x7x3_2", b7, 192, 1, 7);
    b7 = rect(p + ".branch7x7x3_3", b7, 192, 7, 1);
    b7 = conv(p + ".branch7x7x3_4", b7, 192, 3, 2);
    return b.concat(p, {b3, b7, b.maxpool(p + ".max_pool", x, 3, 2, 0)}, 1);
  }

  Tensor inception_e(const std::string& p, Tensor x) {
    Tensor b1 = conv(p + ".branch1x1", x, 320, 1);
    Tensor b3 = conv(p + ".branch3x3_1", x, 384, 1);
    Tensor b3a = rect(p + ".branch3x3_2a", b3, 384, 1, 3);
    Tensor b3b = rect(p + ".branch3x3_2b", b3, 384, 3, 1);
    Tensor bd = conv(p + ".branch3x3dbl_1", x, 448, 1);
    bd = conv(p + ".branch3x3dbl_2", bd, 384, 3, 1, 1);
    Tensor bda = rect(p + ".branch3x3dbl_3a", bd, 384, 1, 3);
    Tensor bdb = rect(p + ".branch3x3dbl_3b", bd, 384, 3, 1);
    // torchvision concatenates the pairs first, then the branches: one copy of everything.
    return b.concat(p, {b1, b3a, b3b, bda, bdb, pool_branch(p, x, 192)}, 1);
  }
};

}  // namespace

ModelGraph make_inception_v3(ZooKeys& keys) {
  LayerBuilder b = keys.builder("inception_v3", 64, "momentum");
  const int64_t image = keys.integer("image", 299, "input image height and width (pixels)", 75);
  const int64_t classes = keys.integer("classes", 1000, "output classes");
  const bool aux = keys.boolean("aux_logits", false,
                                "add the auxiliary classifier after Mixed_6e (its loss is summed)");
  if (aux && image < 299) keys.fail("aux_logits", "needs image >= 299 (17x17 after Mixed_6e)");
  keys.done();

  Net n{b};
  Tensor x = b.input({b.batch(), 3, image, image});
  x = n.conv("Conv2d_1a_3x3", x, 32, 3, 2);
  x = n.conv("Conv2d_2a_3x3", x, 32, 3);
  x = n.conv("Conv2d_2b_3x3", x, 64, 3, 1, 1);
  x = b.maxpool("maxpool1", x, 3, 2, 0);
  x = n.conv("Conv2d_3b_1x1", x, 80, 1);
  x = n.conv("Conv2d_4a_3x3", x, 192, 3);
  x = b.maxpool("maxpool2", x, 3, 2, 0);
  x = n.inception_a("Mixed_5b", x, 32);
  x = n.inception_a("Mixed_5c", x, 64);
  x = n.inception_a("Mixed_5d", x, 64);
  x = n.inception_b("Mixed_6a", x);
  x = n.inception_c("Mixed_6b", x, 128);
  x = n.inception_c("Mixed_6c", x, 160);
  x = n.inception_c("Mixed_6d", x, 160);
  x = n.inception_c("Mixed_6e", x, 192);
  if (aux) {
    Tensor a = b.avgpool("AuxLogits.avg_pool", x, 5, 3, 0);
    a = n.conv("AuxLogits.conv0", a, 128, 1);
    a = n.conv("AuxLogits.conv1", a, 768, 5);
    a = b.global_avgpool("AuxLogits.adaptive_avg_pool", a);
    a = b.linear("AuxLogits.fc", b.view(a, {b.batch(), 768}), classes, true);
    b.cross_entropy("aux_loss", a);
  }
  x = n.inception_d("Mixed_7a", x);
  x = n.inception_e("Mixed_7b", x);
  x = n.inception_e("Mixed_7c", x);
  x = b.global_avgpool("avgpool", x);
  x = b.dropout("dropout", b.view(x, {b.batch(), 2048}));
  x = b.linear("fc", x, classes, true);
  b.cross_entropy("loss", x);
  return b.finish();
}

}  // namespace orrery::zoo
