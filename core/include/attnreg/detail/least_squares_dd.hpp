// attnreg internal: double-double arithmetic (an unevaluated sum hi + lo of two doubles, about
// 32 significant digits) for the extended-precision least-squares path. Error-free
// transformations of Knuth (TwoSum) and Dekker (TwoProd, here through fma); the algorithms are
// the textbook ones (Hida, Li and Bailey's "QD" report describes them). Portable: plain IEEE
// double arithmetic plus std::fma, so it gives the same digits on every platform, unlike long
// double (80 bits on x86, 64 on ARM).
#pragma once

#include <cmath>

namespace attnreg {
namespace dd {

struct Real {
  double hi = 0.0, lo = 0.0;
  Real() = default;
  Real(double h) : hi(h), lo(0.0) {}  // NOLINT(google-explicit-constructor): a double is exact
  Real(double h, double l) : hi(h), lo(l) {}
  double to_double() const { return hi + lo; }
};

inline Real quick_two_sum(double a, double b) {  // requires |a| >= |b|
  const double s = a + b;
  return {s, b - (s - a)};
}
inline Real two_sum(double a, double b) {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
inline Real two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

inline Real operator+(const Real& a, const Real& b) {
  Real s = two_sum(a.hi, b.hi);
  const Real t = two_sum(a.lo, b.lo);
  s.lo += t.hi;
  s = quick_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return quick_two_sum(s.hi, s.lo);
}
inline Real operator-(const Real& a) { return {-a.hi, -a.lo}; }
inline Real operator-(const Real& a, const Real& b) { return a + (-b); }
inline Real operator*(const Real& a, const Real& b) {
  Real p = two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return quick_two_sum(p.hi, p.lo);
}
inline Real operator*(const Real& a, double b) {
  Real p = two_prod(a.hi, b);
  p.lo += a.lo * b;
  return quick_two_sum(p.hi, p.lo);
}
inline Real operator/(const Real& a, const Real& b) {
  const double q1 = a.hi / b.hi;
  Real r = a - b * q1;
  const double q2 = r.hi / b.hi;
  r = r - b * q2;
  const double q3 = r.hi / b.hi;
  return quick_two_sum(q1, q2) + Real(q3);
}
inline Real& operator+=(Real& a, const Real& b) { return a = a + b; }
inline Real& operator-=(Real& a, const Real& b) { return a = a - b; }

/// Square root by one Newton step from the double root (Karp's trick); sqrt(0) = 0.
inline Real sqrt(const Real& a) {
  if (!(a.hi > 0.0)) return Real(0.0);
  const double x = std::sqrt(a.hi);
  const Real r = a - two_prod(x, x);
  return quick_two_sum(x, r.hi / (2.0 * x));
}
inline double abs_hi(const Real& a) { return std::fabs(a.hi); }

}  // namespace dd
}  // namespace attnreg
