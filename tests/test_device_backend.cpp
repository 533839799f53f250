// The core's device interface (core/include/attnreg/attention/device_backend.hpp,
// core/README.md "Devices"): forward(..., Device::cuda) reaches the registered backend and
// nothing else, build_info() reads the backend's status, the CPU device never consults it, and
// without a backend the call is require_cuda()'s named error. A stand-in backend is registered
// for the test and the previous registration (the CUDA backend in a CUDA build, else none) is
// restored afterwards. These run in every build.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attnreg/attention/attention.hpp"
#include "attnreg/attention/attention_device.hpp"
#include "attnreg/attention/device_backend.hpp"
#include "attnreg/base/build_info.hpp"
#include "attnreg/base/error.hpp"

namespace {

namespace at = attnreg::attention;

/// Writes `fill` into every output element and counts its calls, per precision.
class StandInBackend final : public at::DeviceBackend {
 public:
  mutable int calls_float = 0, calls_double = 0;
  at::DeviceStatus status() const override {
    at::DeviceStatus s;
    s.archs = "test";
    s.count = 2;
    s.name = "stand-in device";
    return s;
  }
  at::Diagnostics forward(const at::View<const float>&, const at::View<const float>&,
                          const at::View<const float>&, const at::View<float>& out,
                          const at::Options&) const override {
    ++calls_float;
    return fill(out);
  }
  at::Diagnostics forward(const at::View<const double>&, const at::View<const double>&,
                          const at::View<const double>&, const at::View<double>& out,
                          const at::Options&) const override {
    ++calls_double;
    return fill(out);
  }

 private:
  template <class T>
  static at::Diagnostics fill(const at::View<T>& out) {
    for (std::int64_t i = 0; i < out.seq(); ++i)
      for (std::int64_t j = 0; j < out.dim(); ++j) out.at(0, 0, i, j) = T(7);
    at::Diagnostics d;
    d.method = "stand-in";
    return d;
  }
};

/// Registers a backend for Device::cuda for the scope's lifetime, then restores the previous.
class ScopedBackend {
 public:
  explicit ScopedBackend(const at::DeviceBackend* b)
      : prev_(at::registered_backend(at::Device::cuda)) {
    at::register_backend(at::Device::cuda, b);
  }
  ~ScopedBackend() { at::register_backend(at::Device::cuda, prev_); }

 private:
  const at::DeviceBackend* prev_;
};

TEST(DeviceBackend, CudaDeviceReachesTheRegisteredBackend) {
  StandInBackend backend;
  ScopedBackend scope(&backend);
  std::vector<double> x(16 * 4, 0.25), out(16 * 4, 0.0);
  const auto v = at::make_view<const double>(x.data(), 1, 1, 16, 4);
  at::Options o;
  o.method = at::Method::softmax;
  const at::Diagnostics d =
      at::forward<double>(v, v, v, at::make_view<double>(out.data(), 1, 1, 16, 4), o,
                          at::Device::cuda);
  EXPECT_EQ(d.method, "stand-in");
  EXPECT_EQ(backend.calls_double, 1);
  EXPECT_EQ(backend.calls_float, 0);
  for (double e : out) EXPECT_EQ(e, 7.0);

  std::vector<float> xf(16 * 4, 0.25f), outf(16 * 4, 0.0f);
  const auto vf = at::make_view<const float>(xf.data(), 1, 1, 16, 4);
  at::forward<float>(vf, vf, vf, at::make_view<float>(outf.data(), 1, 1, 16, 4), o,
                     at::Device::cuda);
  EXPECT_EQ(backend.calls_float, 1);

  // build_info() reports the registered backend's status.
  const attnreg::BuildInfo b = attnreg::build_info();
  EXPECT_TRUE(b.cuda_compiled);
  EXPECT_EQ(b.cuda_archs, "test");
  EXPECT_EQ(b.gpu_count, 2);
  EXPECT_EQ(b.gpu_name, "stand-in device");
  EXPECT_EQ(b.cuda, "compiled (architectures test); GPU visible: stand-in device and 1 more");
  EXPECT_NO_THROW(attnreg::require_cuda("device"));
}

TEST(DeviceBackend, CpuDeviceNeverConsultsTheBackend) {
  StandInBackend backend;
  ScopedBackend scope(&backend);
  std::vector<double> x(16 * 4, 0.25), out(16 * 4, 0.0), ref(16 * 4, 0.0);
  const auto v = at::make_view<const double>(x.data(), 1, 1, 16, 4);
  at::Options o;
  o.method = at::Method::softmax;
  at::forward<double>(v, v, v, at::make_view<double>(out.data(), 1, 1, 16, 4), o,
                      at::Device::cpu);
  at::forward<double>(v, v, v, at::make_view<double>(ref.data(), 1, 1, 16, 4), o);
  EXPECT_EQ(backend.calls_double, 0);
  EXPECT_EQ(out, ref);  // the CPU engine itself, bit for bit
}

TEST(DeviceBackend, WithoutABackendCudaIsANamedError) {
  ScopedBackend scope(nullptr);
  EXPECT_EQ(at::registered_backend(at::Device::cuda), nullptr);
  std::vector<float> x(16 * 4, 0.25f), out(16 * 4);
  const auto v = at::make_view<const float>(x.data(), 1, 1, 16, 4);
  at::Options o;
  o.method = at::Method::lla;
  o.ridge = 0.1;
  try {
    at::forward<float>(v, v, v, at::make_view<float>(out.data(), 1, 1, 16, 4), o,
                       at::Device::cuda);
    ADD_FAILURE() << "device = cuda ran without a backend";
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()),
              "device: 'cuda' requested but attnreg was built without CUDA support (rebuild "
              "with nvcc available and ATTNREG_CUDA=ON, or use 'cpu')");
  }
  EXPECT_FALSE(attnreg::build_info().cuda_compiled);
}

TEST(DeviceBackend, TheCpuEngineCannotBeReplaced) {
  StandInBackend backend;
  EXPECT_THROW(at::register_backend(at::Device::cpu, &backend), attnreg::InvalidArgument);
  EXPECT_EQ(at::registered_backend(at::Device::cpu), nullptr);
}

}  // namespace
