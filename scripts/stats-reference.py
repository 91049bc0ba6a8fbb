#!/usr/bin/env python3
"""The reference values of ufo-batch's statistics (src/stats), computed by SciPy and
statsmodels, not by ufo-batch: tests/data/stats-reference.json holds the cases and these
values; the unit tests in src/stats compare ufo-batch's own with them, and
tests/integration/statistics.rs runs this script to prove the file is what the
libraries say.

    python stats-reference.py FILE           print FILE with its values recomputed
    python stats-reference.py FILE --write   and write them into FILE

Needs the venv of scripts/setup-stats.sh (scipy 1.14.1, statsmodels 0.14.4).
"""
import json
import sys

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint


def wilson(case):
    low, high = proportion_confint(case["passed"], case["n"], alpha=0.05, method="wilson")
    return {"low": float(low), "high": float(high)}


def mcnemar_exact(case):
    t = case["table"]  # [[both, only_a], [only_b, neither]]
    return {"p": float(mcnemar(np.array(t), exact=True).pvalue)}


def fisher(case):
    return {"p": float(stats.fisher_exact(case["table"], alternative="two-sided").pvalue)}


def kappa(case):
    return {"kappa": float(cohens_kappa(np.array(case["table"])).kappa)}


def sign_flip(case):
    d = np.array(case["changes"], dtype=float)
    zero = np.zeros_like(d)
    res = stats.permutation_test(
        (d, zero),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
        vectorized=True,
    )
    return {"p": float(res.pvalue)}


def t_interval(case):
    ci = stats.ttest_1samp(np.array(case["changes"], dtype=float), 0.0).confidence_interval(0.95)
    return {"low": float(ci.low), "high": float(ci.high)}


KINDS = {
    "wilson": wilson,
    "mcnemar": mcnemar_exact,
    "fisher": fisher,
    "kappa": kappa,
    "sign_flip": sign_flip,
    "t_interval": t_interval,
}


def main():
    path = sys.argv[1]
    with open(path) as f:
        data = json.load(f)
    for kind, cases in data.items():
        for case in cases:
            case["expected"] = KINDS[kind](case)
    text = json.dumps(data, indent=1) + "\n"
    if "--write" in sys.argv[2:]:
        with open(path, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
