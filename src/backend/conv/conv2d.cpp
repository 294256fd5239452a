#include "backend/conv/conv2d.h"

#include "backend/device/dispatch.h"

namespace tf {

void check_conv2d(const char* op, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                  const Tensor& y, const Tensor* residual, const GroupStats* y_stats) {
  expect_dtype(op, "x", x, DType::F32);
  expect_dtypes(op, DType::BF16, {{"w", w}, {"bias", bias}});
  expect_dtype(op, "y", y, DType::F32);
  require(x.rank() == 3, std::string(op) + ": x is " + x.describe() + ", expected [Ci, H, W]");
  require(w.rank() == 4, std::string(op) + ": w is " + w.describe() + ", expected [Co, Ci, kh, kw]");
  require(g.stride >= 1 && g.pad_top >= 0 && g.pad_left >= 0 && g.pad_bottom >= 0 && g.pad_right >= 0,
          std::string(op) + ": stride must be >= 1 and padding >= 0");
  const int64_t co = w.dim(0), ci = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  require(x.dim(0) == ci, std::string(op) + ": x is " + x.describe() + " but w is " + w.describe() +
                              " (input channels differ)");
  require(x.dim(1) + g.pad_top + g.pad_bottom >= kh && x.dim(2) + g.pad_left + g.pad_right >= kw,
          std::string(op) + ": padded input " + x.describe() + " is smaller than the kernel " + w.describe());
  expect_shape(op, "bias", bias, {co});
  const int64_t ho = conv2d_out_extent(x.dim(1), static_cast<int>(kh), g.stride, g.pad_top, g.pad_bottom);
  const int64_t wo = conv2d_out_extent(x.dim(2), static_cast<int>(kw), g.stride, g.pad_left, g.pad_right);
  expect_shape(op, "y", y, {co, ho, wo});
  if (residual) {
    expect_dtype(op, "residual", *residual, DType::F32);
    expect_shape(op, "residual", *residual, {co, ho, wo});
    require(residual->data != y.data || y.numel() == 0, std::string(op) + ": residual may not alias y");
  }
  require(x.data != y.data || y.numel() == 0, std::string(op) + ": x may not alias y");
  require(!g.prepared || g.prepared->of == w.data,
          std::string(op) + ": the prepared weights were made from other weights than w " + w.describe());
  if (y_stats) check_group_stats(op, "y_stats", *y_stats, co, y.device);
}

Device conv2d_device(const char* op, std::initializer_list<const Tensor*> ts, const Tensor* residual) {
  const Device d = common_device(op, ts);
  if (residual) common_device(op, {*ts.begin(), residual});
  return d;
}

PreparedConvWeights prepare_conv2d_weights(const Tensor& w, [[maybe_unused]] const Conv2dGeometry& g,
                                           [[maybe_unused]] bool upsample, [[maybe_unused]] bool norm) {
  expect_dtype("prepare_conv2d_weights", "w", w, DType::BF16);
  require(w.rank() == 4, "prepare_conv2d_weights: w is " + w.describe() + ", expected [Co, Ci, kh, kw]");
  if (w.device != Device::CUDA) return {Tensor{}, 0, w.data};  // the CPU reads w as it is
#ifdef TF_HAVE_CUDA
  return cuda::prepare_conv2d_weights(w, g, upsample, norm);
#else
  return {Tensor{}, 0, w.data};
#endif
}

void conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
            const Tensor* residual, GroupStats* y_stats) {
  const char* op = "conv2d";
  check_conv2d(op, x, w, bias, g, y, residual, y_stats);
  const Device d = conv2d_device(op, {&x, &w, &bias, &y}, residual);
  run_kernel(op, d, cpu::conv2d, TF_CUDA_KERNEL(cuda::conv2d), x, w, bias, g, y, residual, y_stats);
}

}  // namespace tf
