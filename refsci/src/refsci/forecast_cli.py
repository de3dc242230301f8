"""Command-line parsing of the forecasting commands (`forecast`, `forecast-evaluate`,
`forecasters list|schema`); cli.py builds the parser and dispatches here."""

import json
import math

from refsci.errors import ModelError, UsageError

COMMANDS = ("forecast", "forecast-evaluate")
SEED_MAX = 4294967295


def add_parsers(sub):
    for name, help_text in (
            ("forecast", "fit a forecaster on a series and predict a horizon"),
            ("forecast-evaluate", "temporal cross-validation of a forecaster on a series")):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--data", metavar="CSV", required=True, help="input CSV with a header row")
        p.add_argument("--time-column", dest="time_column", metavar="COL", required=True,
                       help="column holding the time of each observation")
        p.add_argument("--value-column", dest="value_column", metavar="COL", required=True,
                       help="numeric column to forecast")
        p.add_argument("--exogenous", metavar="COLS",
                       help="numeric columns known in advance: a,b or a JSON list")
        p.add_argument("--freq", metavar="F", help="pandas frequency (default: inferred)")
        p.add_argument("--horizon", type=int, metavar="N", required=True,
                       help="periods to forecast (per test window for forecast-evaluate)")
        p.add_argument("--estimator", metavar="NAME", default="NaiveForecaster",
                       help="sktime forecaster (default NaiveForecaster; "
                            "'refsci forecasters list' shows them)")
        p.add_argument("--params", metavar="JSON", default="{}",
                       help="JSON object of forecaster options (default {})")
        p.add_argument("--seed", type=int, metavar="N", default=0,
                       help="random seed, the random_state of forecasters that take one")
        p.add_argument("--out", metavar="DIR", required=True,
                       help="output directory (created if missing)")
        if name == "forecast":
            p.add_argument("--coverage", type=float, metavar="F", default=0.9,
                           help="prediction interval coverage, in (0, 1) (default 0.9)")
        else:
            p.add_argument("--folds", type=int, metavar="K", default=3,
                           help="number of test windows at the end of the series (default 3)")
            p.add_argument("--window", choices=["expanding", "sliding"], default="expanding",
                           help="training window of each fold (default expanding)")
            p.add_argument("--sp", type=int, metavar="N", default=1,
                           help="seasonal period MASE scales by (default 1)")
    fc = sub.add_parser("forecasters", help="the sktime forecasters refsci offers",
                        description="the sktime forecasters refsci offers")
    fc_sub = fc.add_subparsers(dest="action", metavar="ACTION", required=True)
    fc_sub.add_parser("list", help="print name, tags and parameters of each forecaster")
    schema = fc_sub.add_parser("schema", help="write forecast.json and forecast_evaluate.json "
                                              "(the workflows' parameter schemas) into DIR")
    schema.add_argument("dir", metavar="DIR")


def _params(text):
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ModelError(f"parameters are not valid JSON: {exc}", "--params",
                         "pass a JSON object such as '{\"sp\": 12}'") from None
    if not isinstance(value, dict):
        raise ModelError("parameters are not a JSON object", "--params",
                         "pass a JSON object such as '{\"sp\": 12}'")
    return value


def _columns(text):
    """Column names, comma-separated or as a JSON list (what scimcp sends)."""
    if not text:
        return []
    if text.lstrip().startswith("["):
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"exogenous columns are not a valid JSON list: {exc}",
                             "--exogenous", "pass a,b or [\"a\", \"b\"]") from None
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise UsageError("exogenous columns are not a list of names", "--exogenous",
                             "pass a,b or [\"a\", \"b\"]")
        return value
    return [c.strip() for c in text.split(",") if c.strip()]


def resolve(command, args):
    opts = {name: getattr(args, name) for name in (
        "data", "time_column", "value_column", "freq", "horizon", "estimator", "seed", "out")}
    opts["exogenous"] = _columns(args.exogenous)
    opts["params"] = _params(args.params)
    opts["params_source"] = "--params"
    if opts["horizon"] < 1:
        raise UsageError(f"horizon {opts['horizon']} is too small", "--horizon", "use 1 or more")
    if not 0 <= opts["seed"] <= SEED_MAX:
        raise ModelError(f"seed {opts['seed']} is out of range", "--seed",
                         f"use a whole number between 0 and {SEED_MAX}")
    if command == "forecast":
        if not (math.isfinite(args.coverage) and 0.0 < args.coverage < 1.0):
            raise ModelError(f"coverage {args.coverage} is out of range", "--coverage",
                             "use a fraction strictly between 0 and 1")
        opts["coverage"] = args.coverage
    else:
        if args.folds < 1:
            raise UsageError(f"number of folds {args.folds} is too small", "--folds",
                             "use 1 or more")
        if args.sp < 1:
            raise UsageError(f"seasonal period {args.sp} is too small", "--sp", "use 1 or more")
        opts.update(folds=args.folds, window=args.window, sp=args.sp)
    return opts


def run(command, args):
    if command == "forecasters":
        from refsci import forecasters
        if args.action == "list":
            for line in forecasters.list_lines():
                print(line)
            return 0
        for path in forecasters.write_schemas(args.dir):
            print(f"refsci: wrote {path}")
        return 0
    from refsci import forecasting
    opts = resolve(command, args)
    return forecasting.forecast(opts) if command == "forecast" else forecasting.evaluate(opts)
