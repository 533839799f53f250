// attnreg CUDA backend: host side of the blockwise attention kernels (attention_cuda.hpp):
// validation, device buffers, the static switch to a kernel configuration, the launch, the
// per-row diagnostics and the C interface.
#if defined(ATTNREG_CUDA_EMULATION)
#include "cuda_runtime_emulation.hpp"
#else
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "attnreg/cuda/attention_cuda.hpp"
#include "attnreg/cuda/error.hpp"
#include "attnreg/attention/lla_tile.hpp"
#include "lla_launch.cuh"
#include "static_switch.hpp"

namespace attnreg {
namespace cuda {

namespace {


std::size_t elem_size(DType t) { return t == DType::float32 ? 4 : 2; }

/// Device memory owned by the launcher; freed on every exit path.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);  // status ignored: nothing sensible to do in a destructor
  }
  void* alloc(std::size_t bytes, const char* what) {
    if (bytes == 0) bytes = 1;
    const std::string call = std::string("cudaMalloc(") + what + ", " +
                             std::to_string(bytes) + " bytes)";
    check_cuda(cudaMalloc(&ptr_, bytes), call.c_str());
    return ptr_;
  }

 private:
  void* ptr_ = nullptr;
};

std::string where(std::int64_t row, const Shape& s) {
  const std::int64_t i = row % s.n_q;
  const std::int64_t h = (row / s.n_q) % s.heads;
  const std::int64_t b = row / (s.n_q * s.heads);
  std::ostringstream o;
  o << "(batch " << b + 1 << ", head " << h + 1 << ", query " << i + 1 << ")";
  return o.str();
}

void require(bool ok, const std::string& arg, const std::string& msg) {
  if (!ok) throw_invalid_argument(arg + ": " + msg);
}

/// Reads the configuration of the static switch.
struct InfoOf {
  ConfigInfo* out;
  DType dtype;
  template <class C>
  void operator()() {
    out->block_q = C::Br;
    out->block_k = C::Bc;
    out->head_dim_bucket = C::D;
    out->shared_bytes = kern::Layout<C>::bytes;
    std::ostringstream o;
    o << to_string(C::kind) << "<" << to_string(dtype) << ", D=" << C::D << ", "
      << (C::TC ? "tensor cores" : "float32 SIMT") << ", Br=" << C::Br << ", Bc=" << C::Bc
      << ">";
    out->kernel = o.str();
  }
};

/// Launches the selected configuration.
struct LaunchOf {
  const FwdParams* p;
  cudaStream_t stream;
  template <class C>
  void operator()() {
    launch_config<C>(*p, stream);
  }
};

void validate_tensor_pointer(const void* ptr, Memory memory, const char* name) {
  require(ptr != nullptr, name, "data pointer is null (pass an allocated tensor)");
  if (memory != Memory::device) return;
  cudaPointerAttributes attr{};
  const cudaError_t st = cudaPointerGetAttributes(&attr, ptr);
  if (st != cudaSuccess) {
    cudaGetLastError();
    throw_invalid_argument(std::string(name) + ": cannot query the pointer (" +
                           cudaGetErrorString(st) + "); pass device memory or use Memory::host");
  }
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) {
    throw_invalid_argument(std::string(name) +
                           ": Memory::device was requested but the pointer is host memory "
                           "(copy it to the GPU first, or call with Memory::host)");
  }
}

/// Host mode: copy a strided host tensor into a fresh contiguous device buffer.
const void* upload(const TensorRef& t, const Shape& s, std::int64_t seq, int dim, DType dtype,
                   DeviceBuffer& buf, const char* name, cudaStream_t stream) {
  const std::size_t es = elem_size(dtype);
  const std::size_t bytes = es * static_cast<std::size_t>(s.batch) * s.heads * seq * dim;
  void* dev = buf.alloc(bytes, name);
  const std::int64_t rows = static_cast<std::int64_t>(s.batch) * s.heads * seq;
  const bool contiguous = t.rstride == dim && t.hstride == seq * dim &&
                          (s.batch == 1 || t.bstride == s.heads * seq * dim);
  std::vector<unsigned char> staging;
  const void* src = t.data;
  if (!contiguous) {
    staging.resize(bytes);
    const unsigned char* base = static_cast<const unsigned char*>(t.data);
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = r % seq, h = (r / seq) % s.heads, b = r / (seq * s.heads);
      const std::int64_t off = b * t.bstride + h * t.hstride + i * t.rstride;
      std::memcpy(staging.data() + static_cast<std::size_t>(r) * dim * es,
                  base + static_cast<std::size_t>(off) * es, static_cast<std::size_t>(dim) * es);
    }
    src = staging.data();
  }
  const std::string call = std::string("cudaMemcpyAsync(") + name + ", host to device)";
  check_cuda(cudaMemcpyAsync(dev, src, bytes, cudaMemcpyHostToDevice, stream), call.c_str());
  // The staging buffer dies with this frame: wait for the copy.
  check_cuda(cudaStreamSynchronize(stream), call.c_str());
  return dev;
}

}  // namespace

std::string to_string(DType t) {
  switch (t) {
    case DType::float32: return "float32";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
  }
  return "?";
}

std::string to_string(Kind k) {
  switch (k) {
    case Kind::softmax: return "softmax";
    case Kind::lla_blockwise: return "lla_blockwise";
    case Kind::lla_direct: return "lla_direct";
  }
  return "?";
}

TensorRef contiguous(const void* data, const Shape& s, bool keys, bool values) {
  const std::int64_t seq = keys ? s.n_k : s.n_q;
  const std::int64_t dim = values ? s.dv : s.d;
  TensorRef t;
  t.data = data;
  t.rstride = dim;
  t.hstride = seq * dim;
  t.bstride = s.heads * seq * dim;
  return t;
}

MutTensorRef contiguous_out(void* data, const Shape& s) {
  MutTensorRef t;
  t.data = data;
  t.rstride = s.dv;
  t.hstride = s.n_q * s.dv;
  t.bstride = s.heads * s.n_q * s.dv;
  return t;
}

ConfigInfo config_info(DType dtype, Kind kind, int d, int dv) {
  require(d >= 1 && dv >= 1, "dim", "d and dv must be >= 1");
  require(head_dim_bucket(d, dv) != 0, "dim",
          "the CUDA kernels take d and dv up to 128, got d = " + std::to_string(d) +
              ", dv = " + std::to_string(dv) + " (use device='cpu')");
  require(kind != Kind::lla_direct || (d <= kern::kDirectMaxD && dv <= kern::kDirectMaxD),
          "algorithm",
          "'direct' on CUDA takes d and dv up to 32 (explicit d x d Sigma per query), got d = " +
              std::to_string(d) + ", dv = " + std::to_string(dv) + "; use 'blockwise'");
  ConfigInfo info;
  dispatch_config(dtype, kind, d, dv, InfoOf{&info, dtype});
  return info;
}

// The buffers one forward call may allocate on the device (freed when it returns).
struct ForwardBuffers {
  DeviceBuffer q, k, v, o, ridge, rho, delta, row_max, omega, rel, status, sweeps;
};

void cuda_download(void* dst, const void* src, std::size_t bytes, const char* what,
                   cudaStream_t stream) {
  const std::string call = std::string("cudaMemcpy(") + what + ", device to host)";
  check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream), call.c_str());
}

// The shape, options and tensors of a forward call (forward's contract, attention_cuda.hpp).
void check_forward_args(const Shape& s, const TensorRef& q, const TensorRef& k,
                        const TensorRef& v, const MutTensorRef& o, const ForwardOptions& opt,
                        Memory memory) {
  const bool lla = opt.kind != Kind::softmax;
  const std::int64_t n_rows = static_cast<std::int64_t>(s.batch) * s.heads * s.n_q;
  require(std::isfinite(opt.scale) && opt.scale > 0, "scale",
          "must be > 0 and finite (the logit scale a)");
  require(opt.window >= 0, "window", "must be >= 0 (0 = no window)");
  require(!opt.causal || s.n_q <= s.n_k, "causal",
          "needs n_q <= n_k (queries are aligned to the last n_q keys); use causal = false for "
          "cross-attention with more queries than keys");
  for (std::int64_t i = 0; i < s.n_q; ++i) {
    long long lo, hi;
    tile::key_range(i, s.n_q, s.n_k, opt.causal, opt.window, lo, hi);
    if (hi < lo) {
      throw_invalid_argument("window: query " + std::to_string(i + 1) + " sees no key (window " +
                             std::to_string(opt.window) + ", n_q " + std::to_string(s.n_q) +
                             ", n_k " + std::to_string(s.n_k) + "); widen the window");
    }
  }
  require(std::isfinite(opt.ridge) && opt.ridge >= 0, "ridge", "must be >= 0 and finite");
  if (!opt.ridge_per_query.empty()) {
    const auto n = static_cast<std::int64_t>(opt.ridge_per_query.size());
    require(n == s.n_q || n == n_rows, "ridge",
            "has length " + std::to_string(n) + "; pass one value per query position (" +
                std::to_string(s.n_q) + ") or per (batch, head, query) (" +
                std::to_string(n_rows) + ")");
    for (float r : opt.ridge_per_query)
      require(std::isfinite(r) && r >= 0, "ridge", "every ridge must be >= 0 and finite");
  }
  require(lla || (opt.ridge == 0 && opt.ridge_per_query.empty()), "ridge",
          "is not used by softmax (only lla takes a ridge)");
  require(std::isfinite(opt.cg_tol) && opt.cg_tol >= 0, "cg_tol", "must be >= 0 and finite");
  require(opt.cg_max_iter >= 0, "cg_max_iter", "must be >= 0 (0 = 2 d + 10)");
  validate_tensor_pointer(q.data, memory, "Q");
  validate_tensor_pointer(k.data, memory, "K");
  validate_tensor_pointer(v.data, memory, "V");
  validate_tensor_pointer(o.data, memory, "out");
  require(q.rstride >= 0 && q.hstride >= 0 && q.bstride >= 0 && k.rstride >= 0 &&
              k.hstride >= 0 && k.bstride >= 0 && v.rstride >= 0 && v.hstride >= 0 &&
              v.bstride >= 0 && o.rstride >= 0 && o.hstride >= 0 && o.bstride >= 0,
          "strides", "must be >= 0");
}

// GPU 0 must be sm_80 or newer and give the kernel its shared memory.
void check_device(const ConfigInfo& info) {
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  if (prop.major < 8) {
    throw_invalid_argument("device: the attnreg CUDA kernels need compute capability 8.0 or "
                           "newer (they are built for sm_80 and sm_90); GPU 0 '" +
                           std::string(prop.name) + "' is " + std::to_string(prop.major) + "." +
                           std::to_string(prop.minor) + "; use device='cpu'");
  }
  if (info.shared_bytes > prop.sharedMemPerBlockOptin) {
    throw_invalid_argument("device: kernel " + info.kernel + " needs " +
                           std::to_string(info.shared_bytes) +
                           " bytes of shared memory per block, GPU '" + prop.name +
                           "' allows " + std::to_string(prop.sharedMemPerBlockOptin) +
                           "; use device='cpu'");
  }
}

// The kernel's tensor pointers and strides: uploaded contiguous copies (host memory, output
// to a NaN-filled device buffer) or the caller's device tensors as they are.
FwdParams tensor_params(DType dtype, const Shape& s, const TensorRef& q, const TensorRef& k,
                        const TensorRef& v, const MutTensorRef& o, Memory memory,
                        ForwardBuffers& buf, cudaStream_t stream) {
  const std::int64_t n_rows = static_cast<std::int64_t>(s.batch) * s.heads * s.n_q;
  FwdParams p;
  p.batch = s.batch;
  p.heads = s.heads;
  p.n_q = s.n_q;
  p.n_k = s.n_k;
  p.d = s.d;
  p.dv = s.dv;
  const std::size_t es = elem_size(dtype);
  const std::size_t out_bytes = es * static_cast<std::size_t>(n_rows) * s.dv;
  if (memory == Memory::host) {
    p.q = upload(q, s, s.n_q, s.d, dtype, buf.q, "Q", stream);
    p.k = upload(k, s, s.n_k, s.d, dtype, buf.k, "K", stream);
    p.v = upload(v, s, s.n_k, s.dv, dtype, buf.v, "V", stream);
    p.o = buf.o.alloc(out_bytes, "out");
    // 0xFF bytes are NaN in every supported type: an element the kernel fails to write comes
    // back as NaN instead of plausible garbage.
    check_cuda(cudaMemsetAsync(p.o, 0xFF, out_bytes, stream), "cudaMemsetAsync(out)");
    const TensorRef cq = contiguous(nullptr, s, false, false);
    const TensorRef ck = contiguous(nullptr, s, true, false);
    const TensorRef cv = contiguous(nullptr, s, true, true);
    const MutTensorRef co = contiguous_out(nullptr, s);
    p.q_bstride = cq.bstride, p.q_hstride = cq.hstride, p.q_rstride = cq.rstride;
    p.k_bstride = ck.bstride, p.k_hstride = ck.hstride, p.k_rstride = ck.rstride;
    p.v_bstride = cv.bstride, p.v_hstride = cv.hstride, p.v_rstride = cv.rstride;
    p.o_bstride = co.bstride, p.o_hstride = co.hstride, p.o_rstride = co.rstride;
  } else {
    p.q = q.data, p.k = k.data, p.v = v.data, p.o = o.data;
    p.q_bstride = q.bstride, p.q_hstride = q.hstride, p.q_rstride = q.rstride;
    p.k_bstride = k.bstride, p.k_hstride = k.hstride, p.k_rstride = k.rstride;
    p.v_bstride = v.bstride, p.v_hstride = v.hstride, p.v_rstride = v.rstride;
    p.o_bstride = o.bstride, p.o_hstride = o.hstride, p.o_rstride = o.rstride;
  }
  return p;
}

// The options and the per-row outputs (omega, row max, delta, rho, CG status) of the kernel:
// the caller's device buffers where given (device memory), fresh ones otherwise.
void option_params(const ForwardOptions& opt, const Shape& s, Memory memory,
                   const AuxOutputs* aux, std::int64_t n_blocks, ForwardBuffers& buf,
                   FwdParams& p, cudaStream_t stream) {
  const bool lla = opt.kind != Kind::softmax;
  const std::int64_t n_rows = static_cast<std::int64_t>(s.batch) * s.heads * s.n_q;
  p.a = static_cast<float>(opt.scale);
  p.rbf = opt.rbf;
  p.causal = opt.causal;
  p.window = opt.window;
  p.ridge = static_cast<float>(opt.ridge);
  if (!opt.ridge_per_query.empty()) {
    const std::size_t bytes = sizeof(float) * opt.ridge_per_query.size();
    float* r = static_cast<float*>(buf.ridge.alloc(bytes, "ridge"));
    check_cuda(cudaMemcpyAsync(r, opt.ridge_per_query.data(), bytes, cudaMemcpyHostToDevice,
                               stream),
               "cudaMemcpyAsync(ridge)");
    p.ridge_vec = r;
    p.ridge_len = static_cast<std::int64_t>(opt.ridge_per_query.size());
  }
  p.cg_tol = static_cast<float>(opt.cg_tol);
  p.cg_max_iter = opt.cg_max_iter > 0 ? opt.cg_max_iter : 2 * s.d + 10;
  p.n_blocks = static_cast<int>(n_blocks);
  p.reverse_blocks = opt.causal && opt.reverse_blocks;

  const std::size_t row_bytes = sizeof(float) * static_cast<std::size_t>(n_rows);
  const bool dev_aux = memory == Memory::device && aux != nullptr;
  p.omega = dev_aux && aux->omega ? aux->omega
                                  : static_cast<float*>(buf.omega.alloc(row_bytes, "omega"));
  p.row_max =
      dev_aux && aux->row_max
          ? aux->row_max
          : (aux && aux->row_max ? static_cast<float*>(buf.row_max.alloc(row_bytes, "row_max"))
                                 : nullptr);
  if (lla) {
    p.delta = dev_aux && aux->delta ? aux->delta
                                    : static_cast<float*>(buf.delta.alloc(row_bytes, "delta"));
    p.rel_res = static_cast<float*>(buf.rel.alloc(row_bytes, "rel_res"));
    p.status = static_cast<int*>(buf.status.alloc(sizeof(int) * n_rows, "status"));
    p.block_sweeps = static_cast<int*>(
        buf.sweeps.alloc(sizeof(int) * static_cast<std::size_t>(s.batch) * s.heads * n_blocks,
                         "block_sweeps"));
    if (aux && aux->rho) {
      p.rho = dev_aux ? aux->rho
                      : static_cast<float*>(buf.rho.alloc(row_bytes * s.d, "rho"));
    }
  }
}

// Launches the kernel on `stream` and waits for it; returns its time in milliseconds.
float launch_timed(DType dtype, Kind kind, const Shape& s, const ConfigInfo& info,
                   const FwdParams& p, cudaStream_t stream) {
  cudaEvent_t ev0 = nullptr, ev1 = nullptr;
  check_cuda(cudaEventCreate(&ev0), "cudaEventCreate");
  struct EventGuard {
    cudaEvent_t* a;
    cudaEvent_t* b;
    ~EventGuard() {
      if (*a) cudaEventDestroy(*a);
      if (*b) cudaEventDestroy(*b);
    }
  } guard{&ev0, &ev1};
  check_cuda(cudaEventCreate(&ev1), "cudaEventCreate");
  check_cuda(cudaEventRecord(ev0, stream), "cudaEventRecord");
  dispatch_config(dtype, kind, s.d, s.dv, LaunchOf{&p, stream});
  check_cuda(cudaEventRecord(ev1, stream), "cudaEventRecord");
  check_cuda(cudaEventSynchronize(ev1), ("kernel " + info.kernel).c_str());
  check_cuda(cudaGetLastError(), ("kernel " + info.kernel).c_str());
  float ms = 0.0f;
  check_cuda(cudaEventElapsedTime(&ms, ev0, ev1), "cudaEventElapsedTime");
  return ms;
}

// Host memory: the output (through a staging buffer when the caller's strides are not
// contiguous) and the requested per-row outputs, back to the caller's arrays.
void download_outputs(DType dtype, const Shape& s, const MutTensorRef& o, const FwdParams& p,
                      bool lla, const AuxOutputs* aux, cudaStream_t stream) {
  const std::int64_t n_rows = static_cast<std::int64_t>(s.batch) * s.heads * s.n_q;
  const std::size_t es = elem_size(dtype);
  const std::size_t out_bytes = es * static_cast<std::size_t>(n_rows) * s.dv;
  const std::size_t row_bytes = sizeof(float) * static_cast<std::size_t>(n_rows);
  auto download = [&](void* dst, const void* src, std::size_t bytes, const char* what) {
    cuda_download(dst, src, bytes, what, stream);
  };
  if (o.rstride == s.dv && o.hstride == s.n_q * s.dv &&
      (s.batch == 1 || o.bstride == s.heads * s.n_q * s.dv)) {
    download(o.data, p.o, out_bytes, "out");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(out)");
  } else {
    std::vector<unsigned char> staging(out_bytes);
    download(staging.data(), p.o, out_bytes, "out");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(out)");
    unsigned char* base = static_cast<unsigned char*>(o.data);
    for (std::int64_t r = 0; r < n_rows; ++r) {
      const std::int64_t i = r % s.n_q, h = (r / s.n_q) % s.heads, b = r / (s.n_q * s.heads);
      const std::int64_t off = b * o.bstride + h * o.hstride + i * o.rstride;
      std::memcpy(base + static_cast<std::size_t>(off) * es,
                  staging.data() + static_cast<std::size_t>(r) * s.dv * es,
                  static_cast<std::size_t>(s.dv) * es);
    }
  }
  if (aux) {
    if (aux->omega) download(aux->omega, p.omega, row_bytes, "omega");
    if (aux->row_max && p.row_max) download(aux->row_max, p.row_max, row_bytes, "row_max");
    if (lla && aux->delta) download(aux->delta, p.delta, row_bytes, "delta");
    if (lla && aux->rho) download(aux->rho, p.rho, row_bytes * s.d, "rho");
  }
}

// LLA: the rows' denominators and CG status, checked (CudaError, numerical, on a breakdown or a
// non-positive denominator) and summarised in rep.
void lla_row_diagnostics(const ForwardOptions& opt, const Shape& s, const FwdParams& p,
                         ForwardReport& rep, cudaStream_t stream) {
  const std::int64_t n_rows = static_cast<std::int64_t>(s.batch) * s.heads * s.n_q;
  const std::size_t row_bytes = sizeof(float) * static_cast<std::size_t>(n_rows);
  auto download = [&](void* dst, const void* src, std::size_t bytes, const char* what) {
    cuda_download(dst, src, bytes, what, stream);
  };
  std::vector<float> omega(n_rows), delta(n_rows), rel(n_rows);
  std::vector<int> status(n_rows);
  download(omega.data(), p.omega, row_bytes, "omega");
  download(delta.data(), p.delta, row_bytes, "delta");
  download(rel.data(), p.rel_res, row_bytes, "rel_res");
  download(status.data(), p.status, sizeof(int) * n_rows, "status");
  if (opt.kind == Kind::lla_blockwise) {
    rep.cg_iterations.resize(static_cast<std::size_t>(rep.n_query_blocks));
    download(rep.cg_iterations.data(), p.block_sweeps, sizeof(int) * rep.cg_iterations.size(),
             "block_sweeps");
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(diagnostics)");
  for (int it : rep.cg_iterations) rep.cg_max_iterations = std::max(rep.cg_max_iterations, it);
  double min_rel = 1.0;
  for (std::int64_t r = 0; r < n_rows; ++r) {
    if (opt.kind == Kind::lla_direct && status[r] == kRowBreakdown) {
      throw_numerical_error("LLA (direct, CUDA): Sigma is not positive definite in float32 at " +
                            where(r, s) + " (increase ridge, or use algorithm 'blockwise')");
    }
    const float dl = delta[r];
    if (!(dl > 0.0f) || !std::isfinite(dl)) {
      std::ostringstream msg;
      msg << "LLA (" << (opt.kind == Kind::lla_direct ? "direct" : "blockwise")
          << ", CUDA): the denominator omega - mu'rho is " << dl << " at " << where(r, s)
          << "; Sigma is numerically singular there (increase ridge, or use device='cpu' "
             "with float64)";
      throw_numerical_error(msg.str());
    }
    if (status[r] != kRowConverged && rel[r] > opt.cg_tol) ++rep.cg_rows_not_converged;
    rep.cg_max_relative_residual = std::max(rep.cg_max_relative_residual,
                                            static_cast<double>(rel[r]));
    min_rel = std::min(min_rel, static_cast<double>(dl) / omega[r]);
  }
  rep.min_relative_denominator = min_rel;
}

ForwardReport forward(DType dtype, const Shape& s, const TensorRef& q, const TensorRef& k,
                      const TensorRef& v, const MutTensorRef& o, const ForwardOptions& opt,
                      Memory memory, const AuxOutputs* aux, void* stream_ptr) {
  require(s.batch >= 1 && s.heads >= 1 && s.n_q >= 1 && s.n_k >= 1, "shape",
          "every extent must be >= 1");
  require(s.batch <= 65535 && s.heads <= 65535, "shape",
          "batch and heads must be <= 65535 (CUDA grid limits)");
  const ConfigInfo info = config_info(dtype, opt.kind, s.d, s.dv);
  const std::int64_t n_blocks = (s.n_q + info.block_q - 1) / info.block_q;
  require(n_blocks <= 2147483647LL, "shape", "n_q is too large for one launch");
  check_forward_args(s, q, k, v, o, opt, memory);
  check_device(info);
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  ForwardBuffers buf;
  FwdParams p = tensor_params(dtype, s, q, k, v, o, memory, buf, stream);
  option_params(opt, s, memory, aux, n_blocks, buf, p, stream);
  const float ms = launch_timed(dtype, opt.kind, s, info, p, stream);
  ForwardReport rep;
  rep.kernel = info.kernel;
  rep.block_q = info.block_q;
  rep.block_k = info.block_k;
  rep.head_dim_bucket = info.head_dim_bucket;
  rep.shared_bytes = info.shared_bytes;
  rep.n_query_blocks = static_cast<std::int64_t>(s.batch) * s.heads * n_blocks;
  rep.kernel_ms = ms;
  rep.cg_tol = opt.cg_tol;
  rep.cg_iteration_limit = opt.kind == Kind::lla_blockwise ? p.cg_max_iter : 0;
  const bool lla = opt.kind != Kind::softmax;
  if (memory == Memory::host) download_outputs(dtype, s, o, p, lla, aux, stream);
  if (lla)
    lla_row_diagnostics(opt, s, p, rep, stream);
  else
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return rep;
}

}  // namespace cuda
}  // namespace attnreg

// ------------------------------------------------------------------ C interface

namespace {
thread_local std::string g_last_error;
}

extern "C" {

__attribute__((visibility("default"))) const char* attnreg_cuda_last_error(void) {
  return g_last_error.c_str();
}

__attribute__((visibility("default"))) int attnreg_cuda_forward(
    int dtype, int kind, int batch, int heads, long long n_q, long long n_k, int d, int dv,
    const void* q, const void* k, const void* v, void* o, int causal, long long window, int rbf,
    double scale, double ridge, double cg_tol, int cg_max_iter, float* rho, float* delta,
    double* kernel_ms, int* cg_max_iterations) {
  using namespace attnreg::cuda;
  try {
    if (dtype < 0 || dtype > 2 || kind < 0 || kind > 2) {
      g_last_error = "dtype must be 0..2 and kind 0..2";
      return 2;
    }
    Shape s;
    s.batch = batch;
    s.heads = heads;
    s.n_q = n_q;
    s.n_k = n_k;
    s.d = d;
    s.dv = dv;
    ForwardOptions opt;
    opt.kind = static_cast<Kind>(kind);
    opt.rbf = rbf != 0;
    opt.scale = scale;
    opt.causal = causal != 0;
    opt.window = window;
    opt.ridge = ridge;
    opt.cg_tol = cg_tol;
    opt.cg_max_iter = cg_max_iter;
    AuxOutputs aux;
    aux.rho = rho;
    aux.delta = delta;
    const ForwardReport rep =
        forward(static_cast<DType>(dtype), s, contiguous(q, s, false, false),
                contiguous(k, s, true, false), contiguous(v, s, true, true),
                contiguous_out(o, s), opt, Memory::device, &aux, nullptr);
    if (kernel_ms) *kernel_ms = rep.kernel_ms;
    if (cg_max_iterations) *cg_max_iterations = rep.cg_max_iterations;
    g_last_error.clear();
    return 0;
  } catch (const std::exception& e) {
    g_last_error = e.what();
    return 1;
  } catch (...) {
    g_last_error = "unknown error";
    return 1;
  }
}

}  // extern "C"
