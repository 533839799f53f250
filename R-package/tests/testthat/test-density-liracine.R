# The Li-Racine kernels on the conditioning (x) variables of kcdens / kcdist / kqreg (np's
# npcdensbw / npcdistbw default), against direct R oracles of the ratio estimators; refused on
# y's kernel and in kdens.

test_that("okertype = 'liracine' on ordered(x) equals the ratio oracle and inverts", {
  set.seed(3)
  it <- data.frame(year = rep(2001:2006, each = 12))
  it$gdp <- 8 + 0.3 * (it$year - 2000) + rnorm(nrow(it))
  bw <- c(0.35, 0.9)
  cf <- kcdist(gdp ~ ordered(year), data = it, bw = bw, okertype = "liracine")
  Kx <- function(x) bw[1]^abs(x - it$year)
  cdf <- sapply(seq_len(nrow(it)), function(i)
    sum(Kx(it$year[i]) * pnorm((it$gdp[i] - it$gdp) / bw[2])) / sum(Kx(it$year[i])))
  expect_equal(unname(cf$condist), cdf, tolerance = 1e-13)
  cd <- kcdens(gdp ~ ordered(year), data = it, bw = bw, okertype = "liracine")
  dens <- sapply(seq_len(nrow(it)), function(i)
    sum(Kx(it$year[i]) * dnorm((it$gdp[i] - it$gdp) / bw[2]) / bw[2]) / sum(Kx(it$year[i])))
  expect_equal(unname(cd$condens), dens, tolerance = 1e-13)
  q <- kqreg(gdp ~ ordered(year), data = it, tau = 0.5, bw = bw, okertype = "liracine")
  nd <- it[c(1, 40, 70), ]
  nd$gdp <- as.matrix(q$quantile)[c(1, 40, 70), 1]
  Fq <- sapply(seq_len(3), function(i)
    sum(Kx(nd$year[i]) * pnorm((nd$gdp[i] - it$gdp) / bw[2])) / sum(Kx(nd$year[i])))
  expect_true(all(abs(Fq - 0.5) < 1e-9))
})

test_that("liracine is refused where a kernel must sum to one", {
  d <- data.frame(x = rnorm(30), g = factor(sample(1:3, 30, TRUE), ordered = TRUE))
  expect_error(kcdens(g ~ x, data = d, bw = c(1, 0.3), oykertype = "liracine"),
               "^y_ordered_kernel: the response y's kernel must sum to one")
  expect_error(kdens(~ x + g, data = d, bw = c(1, 0.3), okertype = "liracine"),
               "^ordered_kernel: an unconditional density needs.*use li_racine_normalized")
})

test_that("okertype (x's ordered factors) and oykertype (y's) are separate options", {
  set.seed(4)
  d <- data.frame(x = ordered(sample(1:4, 40, TRUE)))
  d$g <- ordered(pmin(as.integer(d$x) + sample(0:1, 40, TRUE), 5))
  f <- kcdens(g ~ x, data = d, bw = c(0.35, 0.2), oykertype = "wangvanryzin")
  xi <- as.integer(d$x) - 1
  gi <- as.integer(d$g) - 1
  wv <- function(a, b, l) ifelse(a == b, 1 - l, 0.5 * (1 - l) * l^abs(a - b))
  dens <- sapply(seq_len(40), function(i)
    sum(0.35^abs(xi[i] - xi) * wv(gi[i], gi, 0.2)) / sum(0.35^abs(xi[i] - xi)))
  expect_equal(unname(f$condens), dens, tolerance = 1e-13)
  expect_equal(f$oykertype, "wangvanryzin")
  # the defaults, np's: liracine on x, the normalised Li-Racine kernel on g
  f <- kcdens(g ~ x, data = d, bw = c(0.35, 0.2))
  nl <- function(a, b, l) l^abs(a - b) * (1 - l) / (1 + l)
  dens <- sapply(seq_len(40), function(i)
    sum(0.35^abs(xi[i] - xi) * nl(gi[i], gi, 0.2)) / sum(0.35^abs(xi[i] - xi)))
  expect_equal(unname(f$condens), dens, tolerance = 1e-13)
  expect_equal(f$oykertype, "nliracine")
})
