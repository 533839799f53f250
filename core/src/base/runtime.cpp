#include "attnreg/base/runtime.hpp"

#include <atomic>
#include <mutex>
#include <sstream>
#include <utility>

#include "attnreg/base/error.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace attnreg {

namespace {
std::mutex g_mutex;
std::function<bool()> g_checker;
std::function<void(std::size_t, std::size_t, const std::string&)> g_progress;
std::atomic<bool> g_cancel_all{false};
thread_local int t_progress_scopes = 0;  // live ProgressScope objects on this thread

bool on_master_thread() {
#ifdef _OPENMP
  return omp_get_thread_num() == 0;
#else
  return true;
#endif
}
}  // namespace

void set_interrupt_checker(std::function<bool()> checker) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_checker = std::move(checker);
}

void cancel_all(bool on) { g_cancel_all.store(on, std::memory_order_relaxed); }

void set_progress_reporter(std::function<void(std::size_t, std::size_t, const std::string&)> fn) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_progress = std::move(fn);
}

int resolve_threads(int requested) {
  if (requested < 0) {
    std::ostringstream msg;
    msg << "n_threads: must be >= 0 (0 = all available), got " << requested;
    throw InvalidArgument(msg.str());
  }
#ifdef _OPENMP
  return requested == 0 ? omp_get_max_threads() : requested;
#else
  return 1;
#endif
}

bool has_openmp() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

bool InterruptGuard::poll() {
  if (flag_.load(std::memory_order_relaxed)) return true;
  if (g_cancel_all.load(std::memory_order_relaxed)) {
    flag_.store(true, std::memory_order_relaxed);
    return true;
  }
  if (!on_master_thread()) return false;
  // Only the master thread, which is the face's own thread, may call into R or Python.
  if (g_checker && g_checker()) {
    flag_.store(true, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void InterruptGuard::progress(std::size_t done, std::size_t total, const std::string& label) {
  if (t_progress_scopes > 0 || !on_master_thread() || !g_progress) return;
  g_progress(done, total, label);
}

ProgressScope::ProgressScope(std::size_t total, std::string label)
    : total_(total), label_(std::move(label)), outermost_(t_progress_scopes == 0) {
  ++t_progress_scopes;
  step(0);
}

ProgressScope::~ProgressScope() { --t_progress_scopes; }

void ProgressScope::step(std::size_t done) {
  if (!outermost_ || !on_master_thread() || !g_progress) return;
  g_progress(done, total_, label_);
}

void InterruptGuard::rethrow_if_interrupted() const {
  if (flag_.load(std::memory_order_relaxed)) throw Interrupted();
}

}  // namespace attnreg
