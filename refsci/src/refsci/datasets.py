"""Built-in datasets exported from the copies scikit-learn and sktime ship (no network)."""

import os
import re

import pandas as pd
from sklearn import datasets as skdatasets

from refsci.errors import UsageError
from refsci.outputs import write_csv

# id -> (loader, description)
BUILTIN = {
    "iris": (skdatasets.load_iris, "Iris flowers: 4 measurements, 3 species (classification)"),
    "wine": (skdatasets.load_wine, "Wine chemical analysis: 13 features, 3 cultivars (classification)"),
    "diabetes": (skdatasets.load_diabetes,
                 "Diabetes progression: 10 scaled features, numeric target (regression)"),
    "breast_cancer": (skdatasets.load_breast_cancer,
                      "Breast cancer diagnosis: 30 features, 2 classes (classification)"),
}


# id -> (loader of a table, description): time series sktime ships (no network either).
SERIES = {
    "airline": (lambda: _airline(),
                "Airline passengers: monthly totals in thousands, 1949-01 to 1960-12 "
                "(forecasting: time column period, value column passengers)"),
}


def _airline():
    from sktime.datasets import load_airline

    y = load_airline()
    return pd.DataFrame({"period": [str(p) for p in y.index],
                         "passengers": y.to_numpy().astype(int)})


def sanitize(name):
    """Lowercase a column name and keep only [a-z0-9_]."""
    clean = re.sub(r"[^a-z0-9]+", "_", str(name).lower()).strip("_")
    return clean or "column"


def frame(dataset_id):
    if dataset_id in SERIES:
        return SERIES[dataset_id][0]()
    loader, _ = BUILTIN[dataset_id]
    bunch = loader()
    names = []
    for raw in bunch.feature_names:
        name = sanitize(raw)
        base, n = name, 2
        while name in names or name == "target":
            name = f"{base}_{n}"
            n += 1
        names.append(name)
    df = pd.DataFrame(bunch.data, columns=names)
    df["target"] = bunch.target
    return df


def list_lines():
    lines = []
    for dataset_id, (_, description) in {**BUILTIN, **SERIES}.items():
        df = frame(dataset_id)
        lines.append(f"{dataset_id}\t{len(df)}\t{len(df.columns)}\t{description}")
    return lines


def export(out_dir):
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create output directory: {exc.strerror or exc}", out_dir,
                         "give a writable directory path") from None
    written = []
    for dataset_id in (*BUILTIN, *SERIES):
        df = frame(dataset_id)
        path = write_csv(out_dir, f"{dataset_id}.csv", df)
        written.append((path, len(df), len(df.columns)))
    return written
