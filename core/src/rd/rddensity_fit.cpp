// The manipulation test's restricted model and plug-in variances (attnreg/rd/rddensity.hpp): the
// local polynomial density estimator of Cattaneo, Jansson and Ma (2020, JASA 115(531), "Simple
// local polynomial density estimators", Theorem 1 for the plug-in variance) in the RD design of
// Cattaneo, Jansson and Ma (2018, Stata Journal 18(1), section 2: the restricted model) and
// lpdensity (Cattaneo, Jansson and Ma 2022, J. Stat. Softw. 101(2)).
//
// Notation: u = (x - c)/h; r(u) = (1, u, ..., u^p); on [0, 1] the kernel moments
// S = int K(u) r(u) r(u)' du and G = int int K(u) K(v) r(u) r(v)' min(u, v) du dv (closed forms
// below: K is a polynomial on [0, 1]). The restricted basis, in the order rddensity uses, is
// (1, u 1{u < 0}, u 1{u >= 0}, u^2, ..., u^p): a common level and higher derivatives, one slope
// per side.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/rddensity_internal.hpp"
#include "attnreg/rd/rddensity.hpp"

namespace attnreg {
namespace rd {
namespace dens {
namespace {

// Coefficients of K(u), u in [0, 1], as a polynomial in u.
std::vector<double> kernel_poly(RdKernel k) {
  switch (k) {
    case RdKernel::epanechnikov: return {0.75, 0.0, -0.75};
    case RdKernel::uniform: return {0.5};
    default: return {1.0, -1.0};
  }
}

// G[a][b] = int_0^1 int_0^1 K(x) K(y) x^a y^b min(x, y) dx dy, a, b < d. Splitting at x = y:
// int_0^1 K(y) y^b [int_0^y K(x) x^(a+1) dx + y int_y^1 K(x) x^a dx] dy, term by term exact.
std::vector<double> kernel_G(RdKernel k, int d) {
  const std::vector<double> kp = kernel_poly(k);
  const int nk = static_cast<int>(kp.size());
  std::vector<double> G(d * d, 0.0);
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b) {
      double g = 0.0;
      for (int m = 0; m < nk; ++m)
        for (int l = 0; l < nk; ++l) {
          const double e = a + m + b + l + 3.0;  // exponent + 1 of y^(b+l) y^(a+m+2)
          g += kp[m] * kp[l] *
               (1.0 / ((a + m + 2.0) * e) + (1.0 / (b + l + 2.0) - 1.0 / e) / (a + m + 1.0));
        }
      G[a * d + b] = g;
    }
  return G;
}

// Solve A z = r (row-major d x d, any nonsingular A) by Gaussian elimination with partial
// pivoting; false when A is singular.
bool lu_solve(std::vector<double> A, std::vector<double>& r, int d) {
  for (int j = 0; j < d; ++j) {
    int piv = j;
    for (int i = j + 1; i < d; ++i)
      if (std::fabs(A[i * d + j]) > std::fabs(A[piv * d + j])) piv = i;
    if (!(std::fabs(A[piv * d + j]) > 0.0)) return false;
    if (piv != j) {
      for (int c = 0; c < d; ++c) std::swap(A[j * d + c], A[piv * d + c]);
      std::swap(r[j], r[piv]);
    }
    for (int i = j + 1; i < d; ++i) {
      const double m = A[i * d + j] / A[j * d + j];
      for (int c = j; c < d; ++c) A[i * d + c] -= m * A[j * d + c];
      r[i] -= m * r[j];
    }
  }
  for (int i = d - 1; i >= 0; --i) {
    double t = r[i];
    for (int c = i + 1; c < d; ++c) t -= A[i * d + c] * r[c];
    r[i] = t / A[i * d + i];
  }
  return std::isfinite(r[0]);
}

// Power of u of the restricted basis' k-th element on the right of c (-1: the left slope).
int rpow(int k) { return k == 0 ? 0 : k == 1 ? -1 : k == 2 ? 1 : k - 1; }

// A right-side kernel matrix M (powers 0..p) in the restricted basis of order p (d = p + 2).
std::vector<double> embed(const std::vector<double>& M, int p) {
  const int d = p + 2, m = p + 1;
  std::vector<double> E(d * d, 0.0);
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b)
      if (rpow(a) >= 0 && rpow(b) >= 0) E[a * d + b] = M[rpow(a) * m + rpow(b)];
  return E;
}

// Psi M Psi: the left-side matrix from the right-side one (u -> -u maps the right slope to minus
// the left slope and u^j to (-1)^j u^j).
std::vector<double> reflect(const std::vector<double>& E, int d) {
  std::vector<double> sg(d), R(d * d);
  std::vector<int> to(d);
  for (int k = 0; k < d; ++k) {
    to[k] = k == 1 ? 2 : k == 2 ? 1 : k;
    sg[k] = (k == 1 || k == 2) ? -1.0 : ((k >= 3 && (k - 1) % 2) ? -1.0 : 1.0);
  }
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b) R[a * d + b] = sg[a] * sg[b] * E[to[a] * d + to[b]];
  return R;
}

std::vector<double> kernel_S(RdKernel k, int m) {  // powers 0..m-1 on [0, 1]
  std::vector<double> S(m * m);
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b) S[a * m + b] = kmoment(k, a + b);
  return S;
}

void nan_negative(Fit& f) {
  for (double& v : f.pl)
    if (v < 0) v = std::nan("");
}

// A = fl Psi S Psi + fr S in the restricted basis (the limit of the normal matrix / n).
std::vector<double> restricted_A(RdKernel k, int p, double fl, double fr) {
  const int d = p + 2;
  const std::vector<double> S = embed(kernel_S(k, p + 1), p), Sm = reflect(S, d);
  std::vector<double> A(d * d);
  for (int i = 0; i < d * d; ++i) A[i] = fl * Sm[i] + fr * S[i];
  return A;
}

// Plug-in variances of the restricted fit: A^-1 (fl^3 Psi G Psi + fr^3 G) A^-1 / (n h) at the
// two slopes. The cross terms of min(u, v) between the sides and the linear part of min on the
// left are of the form A e_0 w' and vanish at the slopes, since A^-1 A e_0 = e_0.
void plugin_restricted(Fit& f, RdKernel k, int p, std::size_t n, double h) {
  const int d = p + 2;
  const double fl = f.hat[0], fr = f.hat[1];
  const std::vector<double> A = restricted_A(k, p, fl, fr);
  const std::vector<double> G = embed(kernel_G(k, p + 1), p), Gm = reflect(G, d);
  std::vector<double> z1(d, 0.0), z2(d, 0.0);
  z1[1] = 1.0;
  z2[2] = 1.0;
  if (!lu_solve(A, z1, d) || !lu_solve(A, z2, d)) {
    for (double& v : f.pl) v = std::nan("");
    return;
  }
  double v11 = 0, v22 = 0, v12 = 0;
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b) {
      const double om = fl * fl * fl * Gm[a * d + b] + fr * fr * fr * G[a * d + b];
      v11 += z1[a] * om * z1[b];
      v22 += z2[a] * om * z2[b];
      v12 += z1[a] * om * z2[b];
    }
  const double nh = static_cast<double>(n) * h;
  f.pl[0] = v11 / nh;
  f.pl[1] = v22 / nh;
  f.pl[2] = (v11 + v22 - 2.0 * v12) / nh;
  f.pl[3] = (v11 + v22 + 2.0 * v12) / nh;
  nan_negative(f);
}

}  // namespace

void plugin_unrestricted(Fit& f, RdKernel k, int p, std::size_t n, double hl, double hr) {
  const int m = p + 1;
  const std::vector<double> S = kernel_S(k, m), G = kernel_G(k, m);
  std::vector<double> a(m, 0.0);  // S^-1 e_1
  a[1] = 1.0;
  chol_solve(S, a, m);
  double v = 0.0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) v += a[i] * G[i * m + j] * a[j];
  f.pl[0] = f.hat[0] * v / (static_cast<double>(n) * hl);
  f.pl[1] = f.hat[1] * v / (static_cast<double>(n) * hr);
  f.pl[2] = f.pl[0] + f.pl[1];  // the two sides' estimates are asymptotically independent
  f.pl[3] = f.pl[2];
  nan_negative(f);
}

void restricted_bias(RdKernel k, int p, double fl, double fr, double fs, double& bl,
                     double& br) {
  const int d = p + 2;
  const std::vector<double> A = restricted_A(k, p, fl, fr);
  // C = fs (fr C+ + fl C-), C+ = int_0^1 K r u^(p+1), C- = int_-1^0 K r u^(p+1) = (-1)^(p+1) Psi C+.
  std::vector<double> Cp(d, 0.0), C(d);
  for (int a = 0; a < d; ++a)
    if (rpow(a) >= 0) Cp[a] = kmoment(k, rpow(a) + p + 1);
  std::vector<double> Cm(d);
  for (int a = 0; a < d; ++a) {
    const int to = a == 1 ? 2 : a == 2 ? 1 : a;
    const double sg = (a == 1 || a == 2) ? -1.0 : ((a >= 3 && (a - 1) % 2) ? -1.0 : 1.0);
    Cm[a] = ((p + 1) % 2 ? -1.0 : 1.0) * sg * Cp[to];
  }
  for (int a = 0; a < d; ++a) C[a] = fs * (fr * Cp[a] + fl * Cm[a]);
  if (!lu_solve(A, C, d))
    throw InvalidArgument("rddensity: the restricted bandwidth rule's kernel matrix is singular "
                          "(the pilot density estimates vanish); give h or use "
                          "fitselect='unrestricted'");
  bl = C[1];
  br = C[2];
}

// The restricted fit: weighted least squares of Y on the restricted basis; the jackknife of
// rddensity (row i's influence: the tail sum of the weighted basis over the rows after it, or
// after its tie group's first row, now across both sides since the level and the higher
// derivatives are common).
Fit restricted_fit(const double* X, const double* Y, std::size_t nh, std::size_t nlh,
                   std::size_t n, double h, int p, int s, RdKernel k, bool mass, bool plugin) {
  const int d = p + 2;
  std::vector<double> S(d * d, 0.0), r(d, 0.0), xr(d), z(d);
  auto basis = [&](std::size_t i) {  // xr: the design row; z = K_h(x_i) xr
    const double u = X[i] / h, w = kern(k, u) / h;
    const bool left = i < nlh;
    xr[0] = 1.0;
    xr[1] = left ? u : 0.0;
    xr[2] = left ? 0.0 : u;
    double pk = u;
    for (int j = 3; j < d; ++j) xr[j] = (pk *= u);
    for (int j = 0; j < d; ++j) z[j] = w * xr[j];
  };
  for (std::size_t i = 0; i < nh; ++i) {
    basis(i);
    for (int a = 0; a < d; ++a) {
      r[a] += z[a] * Y[i];
      for (int b = 0; b <= a; ++b) S[a * d + b] += z[a] * xr[b];
    }
  }
  for (int a = 0; a < d; ++a)
    for (int b = a + 1; b < d; ++b) S[a * d + b] = S[b * d + a];
  std::vector<double> beta = r, a1(d, 0.0), a2(d, 0.0);
  a1[1] = 1.0;
  a2[2] = 1.0;
  if (!chol_solve(S, beta, d) || !chol_solve(S, a1, d) || !chol_solve(S, a2, d)) {
    std::ostringstream m;
    m << "rddensity: the restricted local polynomial fit of order " << p << " is singular ("
      << nlh << " rows left and " << (nh - nlh)
      << " right of the cutoff in the window): use a larger bandwidth h or a smaller p";
    throw InvalidArgument(m.str());
  }
  Fit f;
  f.hat[0] = beta[1] / h;
  f.hat[1] = beta[2] / h;
  f.hat[2] = f.hat[1] - f.hat[0];
  f.hat[3] = f.hat[1] + f.hat[0];
  f.s[0] = f.s[1] = beta[s + 1] / std::pow(h, s);  // the common s-th coefficient (s >= 2)
  f.s[2] = 0.0;
  f.s[3] = 2.0 * f.s[0];
  // Exclusive tail sums of g1 = z'a1 and g2 = z'a2 over the whole window.
  std::vector<double> T1(nh), T2(nh);
  double acc1 = 0.0, acc2 = 0.0;
  for (std::size_t i = nh; i-- > 0;) {
    T1[i] = acc1;
    T2[i] = acc2;
    basis(i);
    for (int a = 0; a < d; ++a) {
      acc1 += z[a] * a1[a];
      acc2 += z[a] * a2[a];
    }
  }
  if (mass)
    for (std::size_t i = 1; i < nh; ++i)
      if (X[i] == X[i - 1]) {
        T1[i] = T1[i - 1];
        T2[i] = T2[i - 1];
      }
  double s11 = 0, s22 = 0, s12 = 0;
  for (std::size_t i = 0; i < nh; ++i) {
    s11 += T1[i] * T1[i];
    s22 += T2[i] * T2[i];
    s12 += T1[i] * T2[i];
  }
  const double sc = static_cast<double>(n - 1) * static_cast<double>(n - 1) * h * h;
  f.jk[0] = s11 / sc;
  f.jk[1] = s22 / sc;
  f.jk[2] = (s11 + s22 - 2.0 * s12) / sc;
  f.jk[3] = (s11 + s22 + 2.0 * s12) / sc;
  for (double& v : f.pl) v = std::nan("");
  if (plugin) plugin_restricted(f, k, p, n, h);
  return f;
}

}  // namespace dens
}  // namespace rd
}  // namespace attnreg
