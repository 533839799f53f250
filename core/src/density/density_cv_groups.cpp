// The x-group algebra shared by the conditional cv_ls objectives (density_cv_impl.hpp): the x
// kernel matrix between the distinct x values, group sums, leave-one-out denominators and the
// sum of the groups' parts.
#include "attnreg/detail/density_cv_impl.hpp"

namespace attnreg {
namespace density_cv {

void column_products(std::vector<arma::mat>& F, std::vector<arma::mat>& dF, arma::uword rows,
                     arma::uword cols, arma::mat& P, std::vector<arma::mat>& dP) {
  P.ones(rows, cols);
  for (const arma::mat& f : F) P %= f;
  dP.assign(dF.size(), arma::mat());
  for (std::size_t j = 0; j < dF.size(); ++j) {
    dP[j] = std::move(dF[j]);
    for (std::size_t k = 0; k < F.size(); ++k)
      if (k != j) dP[j] %= F[k];
  }
}

void mix_other_groups(const arma::mat& P, std::size_t g, const arma::mat& M, arma::vec& out) {
  out.zeros();
  for (std::size_t h = 0; h < P.n_rows; ++h)
    if (h != g) out += P(h, g) * M.col(h);
}

}  // namespace density_cv

void DensityObjective::Impl::x_matrix(const std::vector<ColumnState>& st, bool der, arma::mat& P,
                                      std::vector<arma::mat>& dP) const {
  const std::size_t Gx = Xg.n_rows;
  std::vector<arma::mat> F(dx), dF(der ? dx : 0);
  for (std::size_t j = 0; j < dx; ++j) {
    F[j].set_size(Gx, Gx);
    if (der) dF[j].set_size(Gx, Gx);
    for (std::size_t g = 0; g < Gx; ++g)
      density_detail::eval_column(cols[j], K, st[j], Xg(g, j), Xg.colptr(j), Gx, F[j].colptr(g),
                                  der ? dF[j].colptr(g) : nullptr);
  }
  density_cv::column_products(F, dF, Gx, Gx, P, dP);
  // Column g holds Px(g, .): P(g', g) = kernel of query g against training g' -- symmetric.
}

arma::mat DensityObjective::Impl::group_sum(const arma::mat& M) const {
  const std::size_t Gx = Xg.n_rows;
  arma::mat V(M.n_rows, Gx, arma::fill::zeros);
  for (std::size_t g = 0; g < Gx; ++g)
    for (std::size_t r : members[g]) V.col(g) += c(r) * M.col(r);
  return V;
}

void DensityObjective::Impl::group_sums(const arma::mat& M, const std::vector<arma::mat>& dM,
                                        arma::mat& V, std::vector<arma::mat>& dV) const {
  V = group_sum(M);
  dV.resize(dM.size());
  for (std::size_t k = 0; k < dM.size(); ++k) dV[k] = group_sum(dM[k]);
}

double DensityObjective::Impl::group_den(const arma::mat& P, std::size_t g) const {
  double B = 0.0;
  for (std::size_t h = 0; h < Xg.n_rows; ++h)
    if (h != g) B += P(h, g) * ng(h);
  return B + P(g, g) * (ng(g) - 1.0);
}

double DensityObjective::Impl::sum_group_parts(const arma::mat& part, const std::vector<char>& bad,
                                               double scale, arma::vec* grad) const {
  const std::size_t Gx = part.n_cols, np = part.n_rows - 1;
  for (std::size_t g = 0; g < Gx; ++g)
    if (bad[g]) return kInf;
  double obj = 0.0;
  arma::vec gr(np, arma::fill::zeros);
  for (std::size_t g = 0; g < Gx; ++g) {
    obj += part(0, g);
    for (std::size_t j = 0; grad && j < np; ++j) gr(j) += part(1 + j, g);
  }
  if (grad) *grad = gr / scale;
  return obj / scale;
}

}  // namespace attnreg
