"""The five workflows: load data, fit, compute metrics, write outputs."""

import math
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
import sklearn
from sklearn import metrics as skm
from sklearn.model_selection import train_test_split

from refsci import __version__
from refsci.data import load_csv, require_numeric_target, select_columns
from refsci.errors import DataError, ModelError, UsageError
from refsci.models import build
from refsci.outputs import json_safe, write_csv, write_json


def say(message):
    print(f"refsci: {message}", flush=True)


def _prepare_out(out_dir):
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create output directory: {exc.strerror or exc}",
                         f"--out {out_dir}", "give a writable directory path") from None
    if not os.path.isdir(out_dir):
        raise UsageError("output path is not a directory", f"--out {out_dir}",
                         "give a directory path")


def _simulate_worker(out_dir, seconds):
    """Testing aid: start one child 'worker', record its pid, wait `seconds`."""
    if seconds <= 0:
        return
    child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds!r})"])
    with open(os.path.join(out_dir, "worker.pid"), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(f"{child.pid}\n")
    say(f"worker {child.pid} started; sleeping {seconds:g} s before fitting")
    time.sleep(seconds)
    child.wait()


class _Warnings:
    """Collect warnings raised while fitting and report them on stdout."""

    def __enter__(self):
        self._ctx = warnings.catch_warnings(record=True)
        self._records = self._ctx.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)
        seen = set()
        for record in self._records:
            text = str(record.message).strip().splitlines()
            line = f"{record.category.__name__}: {text[0] if text else ''}"
            if line not in seen:
                seen.add(line)
                say(f"warning: {line}")
        return False


def _fit_error(exc, estimator):
    name = type(estimator).__name__
    return ModelError(f"{name} failed: {exc}", "fitting", "check --params and the model options")


def _model_record(ctx, estimator, features, target):
    return {
        "workflow": ctx["workflow"],
        "model": ctx["model"],
        "estimator": type(estimator).__name__,
        "params": json_safe(estimator.get_params(deep=False)),
        "features": features,
        "target": target,
        "seed": ctx["seed"],
        "refsci_version": __version__,
        "sklearn_version": sklearn.__version__,
        "data_sha256": ctx["sha256"],
        "rows": ctx["rows"],
    }


def _finish(out_dir, metrics, model, extra):
    """Write the extra files, then metrics.json and model.json."""
    names = []
    for name, frame in extra:
        write_csv(out_dir, name, frame)
        names.append(name)
    write_json(out_dir, "metrics.json", metrics)
    write_json(out_dir, "model.json", model)
    say("wrote " + ", ".join(["metrics.json", "model.json"] + names))


def _finite(value):
    value = float(value)
    return value if math.isfinite(value) else None


def run(workflow, opts):
    """Run one workflow with fully resolved options (see cli.resolve)."""
    estimator = build(workflow, opts["model"], opts)
    df, sha256 = load_csv(opts["data"])
    target = opts.get("target")
    X, features, y = select_columns(df, target, opts["exclude"], opts["data"])
    say(f"loaded {len(df)} rows, {len(features)} feature columns from {opts['data']}")
    ctx = {"workflow": workflow, "model": opts["model"], "seed": opts["seed"],
           "sha256": sha256, "rows": len(df)}
    handler = {
        "regress": _regress,
        "classify": _classify,
        "cluster": _cluster,
        "decompose": _decompose,
        "anomaly": _anomaly,
    }[workflow]
    return handler(ctx, opts, estimator, X, features, y)


def _split(X, y, opts, stratify):
    rows = np.arange(len(X))
    try:
        return train_test_split(X, y, rows, test_size=opts["test_size"], random_state=opts["seed"],
                                shuffle=True, stratify=y if stratify else None)
    except ValueError as exc:
        raise DataError(f"cannot split {len(X)} rows into train and test sets: {exc}",
                        f"--data {opts['data']}",
                        "use more rows or change --test-size") from None


def _start(opts, estimator, n):
    _prepare_out(opts["out"])
    _simulate_worker(opts["out"], opts["sleep_s"])
    say(f"fitting {opts['model']} ({type(estimator).__name__}) on {n} rows")


def _regress(ctx, opts, estimator, X, features, y):
    y = require_numeric_target(y, opts["target"], opts["data"])
    X_train, X_test, y_train, y_test, _, rows_test = _split(X, y, opts, stratify=False)
    _start(opts, estimator, len(X_train))
    with _Warnings():
        try:
            estimator.fit(X_train, y_train)
            pred = np.asarray(estimator.predict(X_test), dtype=float)
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise _fit_error(exc, estimator) from None
        mse = skm.mean_squared_error(y_test, pred)
        r2 = skm.r2_score(y_test, pred) if len(y_test) >= 2 else float("nan")
    metrics = {
        "r2": _finite(r2),
        "rmse": _finite(math.sqrt(mse)),
        "mae": _finite(skm.mean_absolute_error(y_test, pred)),
        "mse": _finite(mse),
        "n_train": len(X_train),
        "n_test": len(X_test),
        "test_size": opts["test_size"],
    }
    predictions = pd.DataFrame({"row": rows_test, "y_true": y_test, "y_pred": pred})
    _finish(opts["out"], metrics, _model_record(ctx, estimator, features, opts["target"]),
            [("predictions.csv", predictions)])
    return 0


def _classify(ctx, opts, estimator, X, features, y):
    labels = y.to_numpy()
    classes = np.unique(labels)
    if len(classes) < 2:
        raise DataError(f"target column '{opts['target']}' has only one class",
                        f"--data {opts['data']}", "classification needs at least two classes")
    X_train, X_test, y_train, y_test, _, rows_test = _split(X, labels, opts, stratify=True)
    _start(opts, estimator, len(X_train))
    with _Warnings():
        try:
            estimator.fit(X_train, y_train)
            pred = estimator.predict(X_test)
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise _fit_error(exc, estimator) from None
        kw = {"average": "macro", "zero_division": 0}
        metrics = {
            "accuracy": _finite(skm.accuracy_score(y_test, pred)),
            "f1_macro": _finite(skm.f1_score(y_test, pred, **kw)),
            "precision_macro": _finite(skm.precision_score(y_test, pred, **kw)),
            "recall_macro": _finite(skm.recall_score(y_test, pred, **kw)),
            "n_train": len(X_train),
            "n_test": len(X_test),
            "test_size": opts["test_size"],
            "classes": json_safe(classes.tolist()),
            "confusion_matrix": json_safe(skm.confusion_matrix(y_test, pred, labels=classes)),
        }
    predictions = pd.DataFrame({"row": rows_test, "y_true": y_test, "y_pred": pred})
    _finish(opts["out"], metrics, _model_record(ctx, estimator, features, opts["target"]),
            [("predictions.csv", predictions)])
    return 0


def _need_rows(n, needed, why, opts):
    if n < needed:
        raise DataError(f"only {n} rows, {why} needs at least {needed}", f"--data {opts['data']}",
                        "use a dataset with more rows")


def _cluster(ctx, opts, estimator, X, features, _y):
    k = opts["n_clusters"]
    _need_rows(len(X), max(2, k), f"{k} clusters", opts)
    _start(opts, estimator, len(X))
    with _Warnings():
        try:
            labels = np.asarray(estimator.fit_predict(X), dtype=int)
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise _fit_error(exc, estimator) from None
        found = len(np.unique(labels))
        scored = 2 <= found <= len(X) - 1
        metrics = {
            "n_clusters": k,
            "n_clusters_found": found,
            "cluster_sizes": [int(np.sum(labels == i)) for i in range(max(k, labels.max() + 1))],
            "silhouette": _finite(skm.silhouette_score(X, labels)) if scored else None,
            "calinski_harabasz": _finite(skm.calinski_harabasz_score(X, labels)) if scored else None,
            "davies_bouldin": _finite(skm.davies_bouldin_score(X, labels)) if scored else None,
            "rows": len(X),
        }
    if hasattr(estimator, "inertia_"):
        metrics["inertia"] = _finite(estimator.inertia_)
    frame = pd.DataFrame({"row": np.arange(len(X)), "label": labels})
    _finish(opts["out"], metrics, _model_record(ctx, estimator, features, None),
            [("labels.csv", frame)])
    return 0


def _decompose(ctx, opts, estimator, X, features, _y):
    k = opts["n_components"]
    if k > len(features):
        raise ModelError(f"--n-components {k} exceeds the {len(features)} feature columns",
                         "--n-components", f"use at most {len(features)}")
    _need_rows(len(X), max(2, k), f"{k} components", opts)
    _start(opts, estimator, len(X))
    with _Warnings():
        try:
            Z = np.asarray(estimator.fit_transform(X), dtype=float)
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise _fit_error(exc, estimator) from None
    ratio = getattr(estimator, "explained_variance_ratio_", None)
    metrics = {
        "n_components": k,
        "n_features": len(features),
        "rows": len(X),
        "explained_variance_ratio": None if ratio is None else [_finite(v) for v in ratio],
        "explained_variance_ratio_total": None if ratio is None else _finite(np.sum(ratio)),
    }
    if hasattr(estimator, "n_iter_"):
        metrics["n_iter"] = int(estimator.n_iter_)
    frame = pd.DataFrame(Z, columns=[f"c{i + 1}" for i in range(Z.shape[1])])
    frame.insert(0, "row", np.arange(len(X)))
    _finish(opts["out"], metrics, _model_record(ctx, estimator, features, None),
            [("components.csv", frame)])
    return 0


def _anomaly(ctx, opts, estimator, X, features, _y):
    _need_rows(len(X), 3, "anomaly detection", opts)
    _start(opts, estimator, len(X))
    with _Warnings():
        try:
            if opts["model"] == "lof":
                labels = np.asarray(estimator.fit_predict(X), dtype=int)
                scores = estimator.negative_outlier_factor_ - estimator.offset_
            else:
                estimator.fit(X)
                labels = np.asarray(estimator.predict(X), dtype=int)
                scores = estimator.decision_function(X)
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise _fit_error(exc, estimator) from None
    n_anomalies = int(np.sum(labels == -1))
    metrics = {
        "n_anomalies": n_anomalies,
        "anomaly_fraction": n_anomalies / len(X),
        "contamination": opts["contamination"],
        "rows": len(X),
        "threshold": _finite(estimator.offset_),
    }
    frame = pd.DataFrame({"row": np.arange(len(X)), "label": labels,
                          "score": np.asarray(scores, dtype=float)})
    _finish(opts["out"], metrics, _model_record(ctx, estimator, features, None),
            [("labels.csv", frame)])
    return 0
