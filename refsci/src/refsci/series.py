"""A time series from a table: the time column as a regular index, the value and exogenous
columns as numbers, the frequency inferred or given, and gaps refused by name."""

import pandas as pd
from pandas.api import types as ptypes

from refsci.errors import DataError, UsageError


def _column(df, name, flag, where):
    if name not in df.columns:
        shown = ", ".join(list(df.columns)[:12])
        raise DataError(f"column '{name}' not found", where, f"{flag} must be one of: {shown}")
    return df[name]


def _numeric(df, name, flag, where, allow_missing_tail=0):
    col = _column(df, name, flag, where)
    if not ptypes.is_numeric_dtype(col) or ptypes.is_bool_dtype(col):
        raise DataError(f"column '{name}' is not numeric", where,
                        f"give a numeric column as {flag}")
    head = col.iloc[: len(col) - allow_missing_tail]
    if head.isna().any():
        row = int(head[head.isna()].index[0])
        raise DataError(f"column '{name}' has a missing value at row {row + 1}", where,
                        "fill or remove the rows with missing values")
    return col.astype(float)


def _index(times, freq, where):
    """A PeriodIndex (dates) or an integer index (whole numbers) in row order, with its freq."""
    if ptypes.is_integer_dtype(times):
        return pd.Index(times.astype("int64")), "1"
    parsed = pd.to_datetime(times.astype(str), errors="coerce")
    if parsed.isna().any():
        bad = times[parsed.isna()].iloc[0]
        raise DataError(f"time value {bad!r} is not a date", where,
                        "give dates such as 1949-01 or 1949-01-31, or whole numbers")
    stamps = pd.DatetimeIndex(parsed)
    ordered = stamps.sort_values()
    if ordered.has_duplicates:
        raise DataError(f"time {ordered[ordered.duplicated()][0].date()} appears twice", where,
                        "give one row per period")
    if freq is None:
        freq = pd.infer_freq(ordered) if len(ordered) >= 3 else None
        if freq is None:
            freq = _freq_with_gaps(ordered)
        if freq is None:
            raise DataError("the frequency of the time column cannot be inferred", where,
                            "give it with --freq (M, Q, D, h, …)")
    try:
        periods = pd.PeriodIndex(stamps, freq=_period_alias(freq))
    except (ValueError, TypeError) as exc:
        raise UsageError(f"frequency {freq!r} is not a pandas frequency: {exc}", "--freq",
                         "use M, Q, D, h, W, …") from None
    return periods, periods.freqstr


def _period_alias(freq):
    # Month-start/end and similar offsets have one period alias each.
    for prefix in ("MS", "ME", "QS", "QE", "YS", "YE", "AS"):
        if freq.upper().startswith(prefix):
            return freq[0].upper() if prefix[0] in "MQ" else "Y"
    return freq


def _freq_with_gaps(ordered):
    """The most common spacing's frequency, so a series with a gap is named as such."""
    if len(ordered) < 3:
        return None
    for alias in ("D", "M", "Q", "Y", "h"):
        periods = pd.PeriodIndex(ordered, freq=alias)
        if periods.has_duplicates:
            continue
        steps = pd.Series((periods[1:] - periods[:-1]).map(lambda d: d.n))
        if (steps.mode().iloc[0] == 1) and len(periods) > 2:
            return alias
    return None


def _gaps(index):
    if isinstance(index, pd.PeriodIndex):
        full = pd.period_range(index[0], index[-1], freq=index.freq)
    else:
        full = pd.Index(range(int(index[0]), int(index[-1]) + 1))
    return [str(p) for p in full.difference(index)]


def load_series(df, opts, future_rows=0):
    """(y, X, X_future, info) from the table: y indexed by period, X its exogenous columns.

    `future_rows` (forecast with exogenous columns) is the number of last rows that carry
    only exogenous values for the horizon.
    """
    where = f"--data {opts['data']}"
    times = _column(df, opts["time_column"], "--time-column", where)
    if times.isna().any():
        raise DataError(f"column '{opts['time_column']}' has a missing time", where,
                        "give a time in every row")
    index, freq = _index(times, opts.get("freq"), where)
    if index.has_duplicates:
        raise DataError(f"time {index[index.duplicated()][0]} appears twice", where,
                        "give one row per period")
    order = index.argsort(kind="stable")
    df = df.iloc[order].reset_index(drop=True)
    index = index[order]
    y = _numeric(df, opts["value_column"], "--value-column", where, future_rows)
    gaps = _gaps(index)
    if gaps:
        shown = ", ".join(gaps[:5]) + (f", … ({len(gaps)} in all)" if len(gaps) > 5 else "")
        raise DataError(f"the series has {len(gaps)} missing period(s): {shown}", where,
                        "add the missing rows (or give --freq if the spacing was misread)")
    X = None
    X_future = None
    exog = opts.get("exogenous") or []
    if exog:
        X = pd.DataFrame({name: _numeric(df, name, "--exogenous", where) for name in exog})
        X.index = index
    y.index = index
    if future_rows:
        if y.iloc[-future_rows:].notna().any() or y.iloc[: len(y) - future_rows].isna().any():
            raise DataError(f"the last {future_rows} rows must leave the value column empty", where,
                            "put the future exogenous values in the last horizon rows, with "
                            "an empty value")
        X_future = X.iloc[-future_rows:]
        X = X.iloc[:-future_rows]
        y = y.iloc[:-future_rows]
    info = {"freq": str(freq), "n_obs": len(y), "start": str(y.index[0]),
            "end": str(y.index[-1]), "gaps": 0, "exogenous": list(exog)}
    return y, X, X_future, info
