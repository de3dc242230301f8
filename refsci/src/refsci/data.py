"""CSV loading and validation of feature/target columns."""

import hashlib
import os

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from refsci.errors import DataError


def _preview(names, limit=12):
    names = [str(n) for n in names]
    shown = ", ".join(names[:limit])
    if len(names) > limit:
        shown += f", ... ({len(names)} columns)"
    return shown


def load_csv(path):
    """Read a CSV file; return (DataFrame, sha256 hex of the file bytes)."""
    where = f"--data {path}"
    if not os.path.exists(path):
        raise DataError("data file not found", where, "check the path to the CSV file")
    if os.path.isdir(path):
        raise DataError("data path is a directory", where, "give the path to a CSV file")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise DataError(f"cannot read data file: {exc.strerror or exc}", where,
                        "check the file permissions") from None
    digest = hashlib.sha256(raw).hexdigest()
    if not raw.strip():
        raise DataError("data file is empty", where, "give a CSV file with a header row and data rows")
    if b"\x00" in raw[:65536]:
        raise DataError("data file is not a CSV text file", where, "give a comma-separated text file")
    try:
        with open(path, "r", encoding="utf-8", newline="") as fh:
            df = pd.read_csv(fh)
    except UnicodeDecodeError:
        raise DataError("data file is not UTF-8 text", where, "save the CSV as UTF-8") from None
    except pd.errors.EmptyDataError:
        raise DataError("data file has no columns", where,
                        "give a CSV file with a header row and data rows") from None
    except (pd.errors.ParserError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"data file is not a valid CSV: {first}", where,
                        "give a comma-separated file with one header row") from None
    if len(df.columns) == 0:
        raise DataError("data file has no columns", where, "give a CSV file with a header row")
    if len(df) == 0:
        raise DataError("data file has a header but no data rows", where, "add data rows")
    dupes = sorted({str(c) for c in df.columns if list(df.columns).count(c) > 1})
    if dupes:
        raise DataError(f"duplicate column names: {', '.join(dupes)}", where, "make column names unique")
    df.columns = [str(c) for c in df.columns]
    df = df.reset_index(drop=True)
    return df, digest


def select_columns(df, target, exclude, data_path):
    """Validate target/exclude names and numeric, complete features.

    Returns (X as float ndarray, feature names, target Series or None).
    """
    columns = list(df.columns)
    where = f"--data {data_path}"
    if target is not None and target not in columns:
        raise DataError(f"unknown target column '{target}'", f"--target; columns: {_preview(columns)}",
                        "pass one of the column names in the CSV header")
    for name in exclude:
        if name not in columns:
            raise DataError(f"unknown exclude column '{name}'", f"--exclude; columns: {_preview(columns)}",
                            "pass column names from the CSV header, comma-separated")
        if target is not None and name == target:
            raise DataError(f"column '{name}' is both the target and excluded", "--exclude",
                            "do not exclude the target column")
    features = [c for c in columns if c != target and c not in exclude]
    if not features:
        raise DataError("no feature columns left", where,
                        "keep at least one numeric column besides the target and excluded columns")
    non_numeric = [c for c in features
                   if not (ptypes.is_numeric_dtype(df[c]) or ptypes.is_bool_dtype(df[c]))]
    if non_numeric:
        raise DataError(f"non-numeric feature column(s): {_preview(non_numeric, 5)}", where,
                        "exclude them with --exclude or encode them as numbers")
    X = df[features].astype(float).to_numpy()
    missing = [c for c, bad in zip(features, np.isnan(X).any(axis=0)) if bad]
    if missing:
        raise DataError(f"missing values in feature column(s): {_preview(missing, 5)}", where,
                        "fill or drop the rows with empty cells")
    infinite = [c for c, bad in zip(features, np.isinf(X).any(axis=0)) if bad]
    if infinite:
        raise DataError(f"infinite values in feature column(s): {_preview(infinite, 5)}", where,
                        "replace the infinite values")
    y = None
    if target is not None:
        y = df[target]
        if y.isna().any():
            raise DataError(f"missing values in target column '{target}'", where,
                            "fill or drop the rows with an empty target")
    return X, features, y


def require_numeric_target(y, target, data_path):
    if not ptypes.is_numeric_dtype(y) or ptypes.is_bool_dtype(y):
        raise DataError(f"target column '{target}' is not numeric", f"--data {data_path}",
                        "regression needs a numeric target; use classify for labels")
    values = y.astype(float).to_numpy()
    if not np.isfinite(values).all():
        raise DataError(f"target column '{target}' has infinite values", f"--data {data_path}",
                        "replace the infinite values")
    return values


def parse_exclude(value):
    """Accept a comma-separated string or a list of strings; return a list."""
    if value is None:
        return []
    if isinstance(value, str):
        items = value.split(",")
    else:
        items = list(value)
    out = []
    for item in items:
        item = str(item).strip()
        if item and item not in out:
            out.append(item)
    return out
