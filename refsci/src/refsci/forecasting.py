"""The forecasting workflows over sktime: `forecast` (fit, predict a horizon with intervals)
and `forecast-evaluate` (temporal cross-validation with MAE, RMSE, MAPE, sMAPE and MASE)."""

import os
import pickle

import numpy as np
import pandas as pd

from refsci import __version__
from refsci.data import load_csv
from refsci.errors import ModelError, UsageError
from refsci.outputs import json_safe, write_csv, write_json
from refsci.forecasters import Warnings
from refsci.workflows import _prepare_out, say

METRICS = ("mae", "rmse", "mape", "smape", "mase")


def _build(opts, entry):
    params = dict(opts["params"])
    unknown = sorted(set(params) - set(entry["params"]))
    if unknown:
        allowed = ", ".join(entry["params"]) or "none"
        raise ModelError(f"unknown parameter(s) for {opts['estimator']}: {', '.join(unknown)}",
                         opts["params_source"], f"use only: {allowed}")
    if entry["seeded"]:
        params["random_state"] = opts["seed"]
    try:
        with Warnings(report=True):
            return entry["class"](**params)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{opts['estimator']} refused its parameters: {exc}",
                         opts["params_source"], "check the parameter values") from None


def _entry(opts):
    from refsci.forecasters import registry

    reg = registry()
    entry = reg.get(opts["estimator"])
    if entry is None:
        raise UsageError(f"unknown estimator {opts['estimator']!r}", "--estimator",
                         "use one of " + ", ".join(reg))
    if opts.get("exogenous") and not entry["tags"]["exogenous"]:
        with_x = [n for n, e in reg.items() if e["tags"]["exogenous"]]
        raise UsageError(f"{opts['estimator']} does not use exogenous columns", "--exogenous",
                         "leave --exogenous out or use one of " + ", ".join(with_x))
    return entry


def _load(opts, future_rows=0):
    from refsci.series import load_series

    df, sha256 = load_csv(opts["data"])
    y, X, X_future, info = load_series(df, opts, future_rows)
    say(f"loaded a series of {info['n_obs']} {info['freq']} periods "
        f"({info['start']} to {info['end']}) from {opts['data']}")
    return y, X, X_future, info, sha256


def _fit_error(exc, opts):
    return ModelError(f"{opts['estimator']} failed: {' '.join(str(exc).split())}", "fitting",
                      "try another estimator or other --params")


def _record(opts, forecaster, entry, info, sha256, workflow):
    import sktime

    return {
        "workflow": workflow,
        "estimator": opts["estimator"],
        "params": json_safe(forecaster.get_params(deep=False)),
        "tags": entry["tags"],
        "seed": opts["seed"],
        "series": info,
        "refsci_version": __version__,
        "sktime_version": sktime.__version__,
        "data_sha256": sha256,
    }


def _fitted(forecaster):
    """The fitted parameters that are plain values (a fitted model's numbers, not objects)."""
    try:
        fitted = forecaster.get_fitted_params(deep=False)
    except Exception:  # noqa: BLE001 - some forecasters have none to report
        return {}
    out = {}
    for key, value in sorted(fitted.items()):
        safe = json_safe(value)
        if not (isinstance(safe, str) and safe.startswith("<")):
            out[key] = safe
    return out


def _plot(out_dir, y, pred, lower, upper, title):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    def x(index):
        return index.to_timestamp() if isinstance(index, pd.PeriodIndex) else index

    fig, ax = plt.subplots(figsize=(8, 4), dpi=100)
    ax.plot(x(y.index), y.to_numpy(), label="history", color="#1f77b4")
    ax.plot(x(pred.index), pred.to_numpy(), label="forecast", color="#d62728")
    if lower is not None:
        ax.fill_between(x(pred.index), lower.to_numpy(), upper.to_numpy(), color="#d62728",
                        alpha=0.2, label="prediction interval")
    ax.set_title(title)
    ax.legend(loc="upper left")
    fig.tight_layout()
    # No software or date metadata: the same forecast gives the same bytes.
    fig.savefig(os.path.join(out_dir, "plot.png"), format="png", metadata={"Software": None})
    plt.close(fig)


def forecast(opts):
    entry = _entry(opts)
    _prepare_out(opts["out"])
    future_rows = opts["horizon"] if opts.get("exogenous") else 0
    y, X, X_future, info, sha256 = _load(opts, future_rows)
    forecaster = _build(opts, entry)
    fh = list(range(1, opts["horizon"] + 1))
    say(f"fitting {opts['estimator']}, horizon {opts['horizon']}")
    with Warnings(report=True):
        try:
            forecaster.fit(y, X=X, fh=fh)
            pred = forecaster.predict(X=X_future)
            lower = upper = None
            if entry["tags"]["probabilistic"]:
                intervals = forecaster.predict_interval(X=X_future, coverage=opts["coverage"])
                lower = intervals.iloc[:, 0]
                upper = intervals.iloc[:, 1]
        except (ValueError, TypeError, RuntimeError, np.linalg.LinAlgError) as exc:
            raise _fit_error(exc, opts) from None
    table = pd.DataFrame({"horizon": fh, "time": [str(t) for t in pred.index],
                          "forecast": pred.to_numpy()})
    if lower is not None:
        table["lower"] = lower.to_numpy()
        table["upper"] = upper.to_numpy()
    write_csv(opts["out"], "forecast.csv", table)
    metrics = {
        "estimator": opts["estimator"], "horizon": opts["horizon"], "n_obs": info["n_obs"],
        "freq": info["freq"], "gaps": info["gaps"],
        "coverage": opts["coverage"] if lower is not None else None,
        "intervals": lower is not None,
        "forecast_mean": float(pred.mean()),
        "first_forecast": float(pred.iloc[0]), "last_forecast": float(pred.iloc[-1]),
    }
    write_json(opts["out"], "metrics.json", metrics)
    model = _record(opts, forecaster, entry, info, sha256, "forecast")
    model["fitted_params"] = _fitted(forecaster)
    write_json(opts["out"], "model.json", model)
    # The fitted forecaster itself, for `pickle.load` with the same sktime (model.json says
    # which); protocol 4 so every supported Python reads it.
    with open(os.path.join(opts["out"], "model.pkl"), "wb") as fh:
        pickle.dump(forecaster, fh, protocol=4)
    _plot(opts["out"], y, pred, lower, upper,
          f"{opts['estimator']}: {opts['value_column']}, {opts['horizon']} periods ahead")
    say("wrote forecast.csv, metrics.json, model.json, model.pkl, plot.png")
    return 0


def _scores(y_true, y_pred, y_train, sp):
    from sktime.performance_metrics.forecasting import (
        mean_absolute_error, mean_absolute_percentage_error, mean_absolute_scaled_error,
        mean_squared_error)

    return {
        "mae": float(mean_absolute_error(y_true, y_pred)),
        "rmse": float(np.sqrt(mean_squared_error(y_true, y_pred))),
        "mape": float(mean_absolute_percentage_error(y_true, y_pred, symmetric=False)),
        "smape": float(mean_absolute_percentage_error(y_true, y_pred, symmetric=True)),
        "mase": float(mean_absolute_scaled_error(y_true, y_pred, y_train=y_train, sp=sp)),
    }


def _splits(n, horizon, folds, window, sp):
    """(train positions, test positions) per fold: the last `folds` windows of `horizon`."""
    first_test = n - horizon * folds
    if first_test < max(2, sp + 1):
        raise UsageError(f"{folds} folds of {horizon} periods leave {max(first_test, 0)} "
                         f"periods to train on in the first fold ({n} in the series)",
                         "--folds", "use fewer folds or a shorter --horizon")
    out = []
    for k in range(folds):
        start = first_test + k * horizon
        train_from = start - first_test if window == "sliding" else 0
        out.append((list(range(train_from, start)), list(range(start, start + horizon))))
    return out


def evaluate(opts):
    entry = _entry(opts)
    _prepare_out(opts["out"])
    y, X, _, info, sha256 = _load(opts)
    template = _build(opts, entry)
    rows, preds = [], []
    say(f"evaluating {opts['estimator']}: {opts['folds']} {opts['window']} folds of "
        f"{opts['horizon']} periods")
    for k, (train, test) in enumerate(
            _splits(len(y), opts["horizon"], opts["folds"], opts["window"], opts["sp"])):
        y_train, y_test = y.iloc[train], y.iloc[test]
        X_train = X.iloc[train] if X is not None else None
        X_test = X.iloc[test] if X is not None else None
        with Warnings(report=True):
            forecaster = template.clone()
        with Warnings(report=True):
            try:
                forecaster.fit(y_train, X=X_train, fh=list(range(1, len(test) + 1)))
                pred = forecaster.predict(X=X_test)
            except (ValueError, TypeError, RuntimeError, np.linalg.LinAlgError) as exc:
                raise _fit_error(exc, opts) from None
        scores = _scores(y_test, pred, y_train, opts["sp"])
        rows.append({"fold": k, "train_start": str(y_train.index[0]),
                     "train_end": str(y_train.index[-1]), "n_train": len(train),
                     "test_start": str(y_test.index[0]), "test_end": str(y_test.index[-1]),
                     **scores})
        for t, truth, p in zip(y_test.index, y_test.to_numpy(), pred.to_numpy()):
            preds.append({"fold": k, "time": str(t), "y_true": truth, "y_pred": p})
        say(f"fold {k}: MASE {scores['mase']:.4g}")
    folds = pd.DataFrame(rows)
    write_csv(opts["out"], "folds.csv", folds)
    write_csv(opts["out"], "predictions.csv", pd.DataFrame(preds))
    metrics = {name: float(folds[name].mean()) for name in METRICS}
    metrics.update({"estimator": opts["estimator"], "folds": opts["folds"],
                    "window": opts["window"], "horizon": opts["horizon"], "sp": opts["sp"],
                    "n_obs": info["n_obs"],
                    "per_fold": {name: folds[name].tolist() for name in METRICS}})
    write_json(opts["out"], "metrics.json", metrics)
    write_json(opts["out"], "model.json",
               _record(opts, template, entry, info, sha256, "forecast_evaluate"))
    say("wrote metrics.json, folds.csv, predictions.csv, model.json")
    return 0
