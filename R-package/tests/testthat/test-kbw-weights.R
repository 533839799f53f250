# Bandwidth selection with observation weights (weighted leave-one-out CV) against a direct
# oracle, and the search floor at the estimator's limit: R np's local-constant cv.ls optimum on
# statsmodels' two-regressor test case (statsmodels/nonparametric/tests/
# test_kernel_regression.py: n = 60, y = 0.3 + 1.2 c1 + 3.7 c2 + e, npregbw gives
# c(0.6163835, 0.1649656)) and the CPS1988 local-linear optimum below h = 1.

np_case <- data.frame(
 c1 = c(
  -2.1798606053853242, -1.3698493576538948, -0.95420784008145509, 1.4626960491628485,
  -1.7431609117097697, -0.82659091636453352, -0.3453521949414044, 1.3142323796132269,
  0.69057933521085468, 0.99576090366587233, 2.3967804246869364, 0.014870949406556717,
  3.3574270494529159, -0.31744078689893696, -1.2362689216667433, 0.89617064932527479,
  -0.48760158619708838, -0.082240326543876502, -2.1829367180383197, 0.38039557259854662,
  0.084844213242333058, 0.4323897700525704, 1.5199702909916382, -0.49366210738353455,
  0.6001775926648748, 0.27422987266637572, 0.13288520340202481, -0.023688474715834067,
  2.4101787122080385, 1.4505203010983598, 0.20605344405201736, -0.25190476540152806,
  -2.2135875343262992, 1.0633272802276417, 1.2661429472115593, 0.29936761269764872,
  -0.86383800468297345, 0.40820401236750015, -1.0480892657946406, -0.025747448032600921,
  -0.98838692002681883, 0.094055164754578022, 1.2627305125477688, 1.2899970438995281,
  0.082423183005365872, -0.055757810569908924, 0.53658004835804118, -0.48968216001682163,
  0.36937426885432317, -0.034570580588518897, -2.4844777973083159, -0.28146130971996647,
  0.030711148105528149, 0.10912067528341424, 1.1262026757080914, -0.97734922987995054,
  1.4740714665355565, -0.064034433943341212, -1.2827817374231487, 0.78183574696480418),
 c2 = c(
  8.9286433272593388, 10.441153270266421, 12.353924863946174, 10.58378654985029,
  10.221470629245786, 9.255528620126892, 10.758527108382456, 11.72968859030607,
  9.0350199951986774, 9.1543042997015913, 8.6591037549143355, 11.846883406622203,
  8.6711345910086184, 11.682705720070095, 8.2823068056651916, 10.888781790696354,
  10.228440457975815, 10.901805282746867, 11.171216429396422, 10.520260065529582,
  8.8029285531578054, 8.9330309792481017, 9.6965789439569452, 9.1415529901740733,
  10.306996307922985, 9.9713347957018232, 10.38431616741862, 11.574159335303856,
  11.588930921593604, 10.476720341834829, 10.473423870657911, 9.757139174628124,
  9.9851950872687549, 9.7156810917204677, 10.650775902004161, 8.538335400705531,
  8.8622927039271229, 9.108939624896081, 9.3060788707838711, 11.613616156202127,
  10.463999567224683, 10.227370794033874, 9.5030779431095009, 10.306389343411894,
  7.7093874452470974, 8.8653766872436695, 8.4381810172068139, 9.7391622294413942,
  10.281956505799142, 11.523961521593478, 9.0970633523417597, 10.068159086490718,
  9.9421266124614416, 9.6317959235471822, 8.8559268132664926, 10.861209454160408,
  10.800192840754978, 10.782098266438391, 8.9309055602380454, 8.9007517545397246),
 y = c(
  31.223850771739176, 37.701533787179201, 43.725422595969107, 41.875587519559971,
  36.492442262860173, 33.24420993748133, 39.042534594139802, 45.960684651999514,
  33.914434943329034, 35.787125910408413, 36.247634268490373, 42.860820289170647,
  37.199982199807494, 44.660789396806969, 29.18452532912768, 41.440135237659575,
  38.957538972084642, 42.041864658705293, 38.535071756592785, 39.545487334449106,
  32.242322083138404, 33.837805255787273, 38.282457271761167, 32.232436808438145,
  36.336612161046332, 36.67102917039427, 37.774480270059861, 42.158231890600774,
  44.533488501747165, 41.36024832581144, 37.021650476661222, 35.708928687819125,
  35.796039264820784, 37.702702861887929, 40.223074834431401, 30.873455566530762,
  32.553158165898338, 33.08766509305817, 33.637349590760458, 43.171697817006134,
  36.570727694688721, 37.121242569204, 34.970183848827482, 40.282653431300098,
  28.982758417646686, 34.173453549978447, 29.76453199859408, 35.466428296955755,
  38.812141373818719, 41.511101733489021, 31.841697837817364, 37.466896674334443,
  38.623292398789864, 37.12179198669228, 32.079777547658757, 38.939377389932297,
  39.669640946914399, 38.959036064451389, 31.253147514224622, 35.763657189184279))

oracle_cv <- function(X, y, h, w, degree) {
  X <- as.matrix(X)
  n <- nrow(X)
  num <- 0
  for (i in seq_len(n)) {
    D <- sweep(X[-i, , drop = FALSE], 2, X[i, ])
    k <- w[-i] * exp(-0.5 * rowSums(sweep(D, 2, h, "/")^2))
    B <- if (degree == 1) cbind(1, D) else matrix(1, n - 1, 1)
    beta <- solve(crossprod(B, B * k), crossprod(B, k * y[-i]))
    num <- num + w[i] * (y[i] - beta[1])^2
  }
  num / sum(w)
}

test_that("kbw reproduces np's local-constant optimum on statsmodels' test case", {
  b <- kbw(y ~ c1 + c2, data = np_case, method = "lc", bwmethod = "cv.ls")
  expect_equal(unname(b$bw), c(0.6163835, 0.1649656), tolerance = 1e-5)
  expect_equal(b$objective, 1.643536, tolerance = 1e-6)
  expect_equal(unname(b$at_bound), c(0L, 0L))
})

test_that("kbw finds CPS1988's local-linear experience optimum below h = 1", {
  cps <- read.csv(system.file("extdata", "cps1988.csv", package = "attnreg"))
  b <- expect_silent(kbw(log(wage) ~ experience, data = cps))
  expect_lt(b$bw[[1]], 1)
  expect_equal(unname(b$at_bound), 0L)
})

test_that("weighted cv.ls equals the direct weighted leave-one-out oracle", {
  set.seed(1)
  d <- data.frame(x1 = runif(50), x2 = runif(50))
  d$y <- sin(4 * d$x1) + rnorm(50, sd = 0.2)
  w <- runif(50, 0.1, 3)
  for (m in c("lc", "ll")) {
    b <- kbw(y ~ x1 + x2, data = d, weights = w, method = m)
    ref <- oracle_cv(d[, c("x1", "x2")], d$y, unname(b$bw), w, if (m == "ll") 1 else 0)
    expect_equal(b$objective, ref, tolerance = 1e-10)
  }
  # kreg(bw = "cv.ls") with weights selects with them.
  f <- kreg(y ~ x1 + x2, data = d, weights = w, method = "lc")
  expect_equal(unname(f$bw), unname(kbw(y ~ x1 + x2, data = d, weights = w, method = "lc")$bw))
  # Equal weights: the unweighted answer.
  # (x2 is irrelevant here: local constant smooths it out, at the box's upper end.)
  expect_warning(e <- kbw(y ~ x1 + x2, data = d, weights = rep(2.5, 50), method = "lc"),
                 "upper end")
  expect_warning(u <- kbw(y ~ x1 + x2, data = d, method = "lc"), "upper end")
  expect_equal(unname(e$bw), unname(u$bw), tolerance = 1e-9)
  expect_error(kbw(y ~ x1, data = d, weights = rep(-1, 50)), "weights")
  expect_error(kbw(y ~ x1, data = d, weights = rep(0, 50)), "weights")
})

test_that("kreg's cv is the weighted criterion that chose its bandwidth", {
  # With weights, cv is sum(w (y - loo)^2) / sum(w), the cv.ls objective kbw minimised (it was
  # the unweighted mean of the same leave-one-out residuals); rows of weight 0 do not count.
  set.seed(3)
  d <- data.frame(x1 = runif(60), x2 = runif(60))
  d$y <- sin(5 * d$x1) + rnorm(60, sd = 0.3)
  w <- runif(60, 0.1, 3)
  w[1:4] <- 0
  for (m in c("lc", "ll")) {
    f <- kreg(y ~ x1, data = d, weights = w, method = m)
    expect_equal(f$cv, f$kbw$objective, tolerance = 1e-12)
    ref <- oracle_cv(d[-(1:4), "x1", drop = FALSE], d$y[-(1:4)], unname(f$bw), w[-(1:4)],
                     if (m == "ll") 1 else 0)
    expect_equal(f$cv, ref, tolerance = 1e-11)
    u <- kreg(y ~ x1, data = d, method = m)
    expect_equal(u$cv, u$kbw$objective, tolerance = 1e-12)
    expect_equal(u$cv, mean((d$y - u$loo)^2), tolerance = 1e-12)
  }
})
