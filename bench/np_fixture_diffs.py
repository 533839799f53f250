"""Largest differences of attnreg from R np 0.70-4 outputs (tests/fixtures/np), the table in
bench/results/npconv.md. Run from the repository root: python3 bench/np_fixture_diffs.py"""
import numpy as np, pandas as pd, attnreg
from attnreg import *
from attnreg.bandwidth import bandwidth_objective, select_bandwidth
F='tests/fixtures/np/'; bws=pd.read_csv(F+'bandwidths.csv')
def bw(c): r=bws[bws.case==c]; return r.bandwidth.to_numpy(), r.fval.to_numpy()
rel=lambda a,b: float(np.max(np.abs(np.asarray(a)-np.asarray(b))/np.abs(np.asarray(b))))
d=pd.read_csv('data/cps71.csv'); X=d[['age']].to_numpy(float); y=d.logwage.to_numpy()
print('| case | fit rel | gradient rel (of max) | np gerr rel | objective at np bw rel | selected bw rel |')
print('|---|---|---|---|---|---|')
for reg in ['lc','ll']:
  for m in ['ls','aic']:
    c=f'cps71_{reg}_{m}'; h,fv=bw(c); f=pd.read_csv(F+c+'.csv'); Q=f[['age']].to_numpy(float)
    M=(NadarayaWatson if reg=='lc' else LocalLinear)(bandwidth=h).fit(X,y)
    g=M.gradient(Q)[:,0]; ge='-'
    if reg=='lc': ge='%.1e'%rel(M.gradient(Q,return_se=True,se='np')[1][:,0],f.gerr)
    meth={'ls':'cv_ls','aic':'aic'}[m]
    v,_=bandwidth_objective(X,y,h,estimator=reg,method=meth); s=select_bandwidth(X,y,estimator=reg,method=meth)
    print(f'| {c} | {rel(M.predict(Q),f["mean"]):.1e} | {np.max(np.abs(g-f.grad))/np.max(np.abs(f.grad)):.1e} | {ge} | {abs(v-fv[0])/abs(fv[0]):.1e} | {rel(s.bandwidth,h):.1e} |')
w=pd.read_csv('data/wage1.csv')
enc=lambda df: np.column_stack([(df.female=='Male').astype(float),df.numdep,df.educ,df.exper])
X=enc(w); y=w.lwage.to_numpy()
for reg in ['lc','ll']:
    c=f'wage1_{reg}_ls'; h,fv=bw(c); f=pd.read_csv(F+c+'.csv'); Q=enc(f)
    M=(NadarayaWatson if reg=='lc' else LocalLinear)(bandwidth=h,var_types='uocc').fit(X,y)
    g=M.gradient(Q); cols=[2,3] if reg=='ll' else [0,1,2,3]
    gr=max(np.max(np.abs(g[:,j]-f['grad_'+n]))/np.max(np.abs(f['grad_'+n])) for j,n in enumerate(['female','numdep','educ','exper']) if j in cols)
    ge='-'
    if reg=='lc':
        se=M.gradient(Q,return_se=True,se='np')[1]; ge='%.1e'%max(rel(se[:,j],f['gerr_'+n]) for j,n in [(2,'educ'),(3,'exper')])
    v,_=bandwidth_objective(X,y,h,estimator=reg,method='cv_ls',var_types='uocc'); s=select_bandwidth(X,y,estimator=reg,method='cv_ls',var_types='uocc')
    print(f'| {c} | {rel(M.predict(Q),f["mean"]):.1e} | {gr:.1e} | {ge} | {abs(v-fv[0])/abs(fv[0]):.1e} | {rel(s.bandwidth,h):.1e} (objective {s.objective:.10g} vs np {fv[0]:.10g}) |')
x=d.logwage.to_numpy()
for m in ['ml','ls']:
    c=f'cps71_udens_{m}'; h,fv=bw(c); f=pd.read_csv(F+c+'.csv')
    k=KernelDensity(bandwidth=h).fit(x); s=KernelDensity(bandwidth='cv_'+m).fit(x)
    print(f'| {c} | {rel(k.density(f.logwage.to_numpy()),f.dens):.1e} | - | - | {abs(s.objective_+fv[0])/abs(fv[0]):.1e} (at attnreg optimum) | {rel(s.bandwidth_,h):.1e} |')
it=pd.read_csv('data/Italy.csv'); yr=it.year.to_numpy(float); gdp=it.gdp.to_numpy()
h,fv=bw('italy_cdens_ml'); f=pd.read_csv(F+'italy_cdens_ml.csv')
m=ConditionalDensity(bandwidth=h,var_types='o').fit(yr,gdp); s=ConditionalDensity(var_types='o').fit(yr,gdp)
print(f'| italy_cdens_ml (default li_racine on year) | {rel(m.density(f.year.to_numpy(float),f.gdp.to_numpy(float)),f.condens):.1e} | - | - | - | {rel(s.bandwidth_,h):.1e} |')
h,fv=bw('italy_cdist_ls'); f=pd.read_csv(F+'italy_cdist_ls.csv')
m=ConditionalDistribution(bandwidth=h,var_types='o').fit(yr,gdp); s=ConditionalDistribution(var_types='o').fit(yr,gdp)
old=ConditionalDistribution(bandwidth=h,var_types='o',ordered_kernel='wang_van_ryzin').fit(yr,gdp)
fx=lambda mm: mm.cdf(f.year.to_numpy(float),f.gdp.to_numpy(float))
print(f'| italy_cdist_ls | abs {np.max(np.abs(fx(m)-f.condist)):.1e} (old default wang_van_ryzin: {np.max(np.abs(fx(old)-f.condist)):.2f}) | - | - | - | {rel(s.bandwidth_,h):.1e} (np cross-validates on 100 y quantiles) |')
q=pd.read_csv(F+'italy_qreg.csv')
for name,kw in [('default',{}),('old wang_van_ryzin',{'ordered_kernel':'wang_van_ryzin'})]:
    Qm=ConditionalQuantile(bandwidth=h,var_types='o',**kw).fit(yr,gdp)
    out=np.array([Qm.quantile(np.array([a]),t)[0] for a,t in zip(q.year,q.tau)])
    print(f'| italy_qreg {name} | quantile rel {rel(out,q["quantile"]):.1e} | | | | |')
pl=pd.read_csv(F+'wage1_plreg_coef.csv'); h,_=bw('wage1_plreg')
P=PartiallyLinear(bandwidth=h.reshape(3,1),cov_type='nonrobust').fit(w[['educ','tenure']].to_numpy(float),y,Z=w[['exper']].to_numpy(float))
print(f'| wage1_plreg | coef rel {rel(P.coef_,pl.coef):.1e}, se rel {rel(P.coef_se_,pl.se):.1e}, R2 {abs(P.r_squared_-pl.r_squared[0]):.1e} | | | | |')
