"""Command-line interface: argument parsing, config merging and error reporting."""

import argparse
import json
import math
import os
import sys
import traceback

from refsci import __version__
from refsci.errors import EXIT_UNEXPECTED, ModelError, RefsciError, UsageError

WORKFLOW_MODELS = {
    "regress": ["linear", "ridge", "random_forest"],
    "classify": ["logistic", "random_forest", "knn"],
    "cluster": ["kmeans", "agglomerative", "gmm"],
    "decompose": ["pca", "truncated_svd", "fastica"],
    "anomaly": ["isolation_forest", "lof", "elliptic_envelope"],
}
SUPERVISED = ("regress", "classify")
SEED_MAX = 4294967295

DEFAULTS = {
    "seed": 0,
    "test_size": 0.25,
    "params": {},
    "n_clusters": 3,
    "n_components": 2,
    "contamination": 0.1,
    "exclude": None,
}
CONFIG_KEYS = ("model", "seed", "test_size", "params", "n_clusters", "n_components",
               "contamination", "exclude")

HELP = {
    "regress": "fit a regression model to predict a numeric target column",
    "classify": "fit a classifier to predict a label column",
    "cluster": "group rows into clusters",
    "decompose": "reduce the feature columns to a few components",
    "anomaly": "flag unusual rows",
}


# Subcommand parsers, kept so late usage errors (missing --data) use the subcommand's prog.
_SUBPARSERS = {}


class Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line in refsci's format (exit 2)."""

    def error(self, message):
        line = UsageError(message, "command line", f"run '{self.prog} --help' for usage").line()
        self.exit(2, line + "\n")


def build_parser():
    parser = Parser(prog="refsci", description="Reference scientific CLI over scikit-learn.")
    parser.add_argument("--version", action="version", version=f"refsci {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, models in WORKFLOW_MODELS.items():
        p = sub.add_parser(name, help=HELP[name], description=HELP[name])
        _SUBPARSERS[name] = p
        p.add_argument("--data", metavar="CSV", help="input CSV file with a header row")
        if name in SUPERVISED:
            p.add_argument("--target", metavar="COL", help="column to predict")
        p.add_argument("--out", metavar="DIR", required=True,
                       help="output directory (created if missing)")
        p.add_argument("--model", choices=models, help=f"estimator (default {models[0]})")
        if name == "cluster":
            p.add_argument("--n-clusters", dest="n_clusters", type=int, metavar="K",
                           help="number of clusters (default 3)")
        if name == "decompose":
            p.add_argument("--n-components", dest="n_components", type=int, metavar="K",
                           help="number of components (default 2)")
        if name == "anomaly":
            p.add_argument("--contamination", type=float, metavar="F",
                           help="expected fraction of anomalies, in (0, 0.5] (default 0.1)")
        p.add_argument("--exclude", metavar="COLS",
                       help="comma-separated columns not to use as features")
        p.add_argument("--seed", type=int, metavar="N", help="random seed (default 0)")
        if name in SUPERVISED:
            p.add_argument("--test-size", dest="test_size", type=float, metavar="F",
                           help="fraction of rows held out for testing (default 0.25)")
        p.add_argument("--params", metavar="JSON",
                       help="JSON object of extra estimator keyword arguments (default {})")
        p.add_argument("--config", metavar="FILE",
                       help="JSON object with defaults for the options; flags win")
        p.add_argument("--sleep-s", dest="sleep_s", type=float, metavar="S", default=0.0,
                       help="testing aid: start a worker process and wait S seconds before fitting")
        p.add_argument("--interactive", action="store_true",
                       help="ask for missing inputs on stdin")
    from refsci import forecast_cli
    forecast_cli.add_parsers(sub)
    ds = sub.add_parser("datasets", help="list or export the built-in datasets",
                        description="list or export the built-in datasets")
    ds_sub = ds.add_subparsers(dest="action", metavar="ACTION", required=True)
    ds_sub.add_parser("list", help="print id, rows, columns and description of each dataset")
    export = ds_sub.add_parser("export", help="write the built-in datasets as CSV files into DIR")
    export.add_argument("dir", metavar="DIR")
    return parser


def _load_config(path):
    where = f"--config {path}"
    try:
        with open(path, "r", encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise UsageError(f"cannot read config file: {exc.strerror or exc}", where,
                         "check the path to the JSON config file") from None
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"config file is not valid JSON: {exc}", where,
                         "write a JSON object such as {\"seed\": 1}") from None
    if not isinstance(config, dict):
        raise UsageError("config file is not a JSON object", where,
                         "write a JSON object such as {\"seed\": 1}")
    unknown = sorted(set(config) - set(CONFIG_KEYS))
    if unknown:
        raise UsageError(f"unknown config key(s): {', '.join(unknown)}", where,
                         "use only: " + ", ".join(CONFIG_KEYS))
    return config


def _check_type(key, value, kinds, source):
    ok = isinstance(value, kinds) and not isinstance(value, bool)
    if not ok:
        raise UsageError(f"config value for '{key}' has the wrong type", source,
                         f"give a {' or '.join(k.__name__ for k in kinds)}")
    return value


def _parse_params(value, source):
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ModelError(f"parameters are not valid JSON: {exc}", source,
                             "pass a JSON object such as '{\"alpha\": 0.5}'") from None
    if not isinstance(value, dict):
        raise ModelError("parameters are not a JSON object", source,
                         "pass a JSON object such as '{\"alpha\": 0.5}'")
    return value


def resolve(command, args):
    """Merge flags, config file, interactive answers and defaults into one dict."""
    from refsci import interactive

    config = _load_config(args.config) if args.config else {}
    cfg_src = f"--config {args.config}"
    supervised = command in SUPERVISED
    models = WORKFLOW_MODELS[command]
    opts = {"out": args.out, "sleep_s": args.sleep_s}

    def pick(key, flag_value):
        if flag_value is not None:
            return flag_value, f"--{key.replace('_', '-')}"
        if key in config:
            return config[key], cfg_src
        return DEFAULTS.get(key), "default"

    # Inputs that may be asked for, in the fixed prompt order.
    data = args.data
    if data is None:
        if not args.interactive:
            raise_usage("the following arguments are required: --data", command)
        data = interactive.ask_required("Data CSV path: ", "the data CSV path")
    opts["data"] = data
    if supervised:
        target = args.target
        if target is None:
            if not args.interactive:
                raise_usage("the following arguments are required: --target", command)
            target = interactive.ask_required("Target column: ", "the target column")
        opts["target"] = target
    else:
        opts["target"] = None

    model = args.model
    if model is None:
        model = config.get("model", models[0])
        if not isinstance(model, str) or model not in models:
            raise UsageError(f"unknown model {model!r} in config file", cfg_src,
                             "use one of " + ", ".join(models))
        if args.interactive:
            model = interactive.ask_model(models, model)
    opts["model"] = model

    seed, src = pick("seed", args.seed)
    if src == cfg_src:
        _check_type("seed", seed, (int,), src)
    if args.seed is None and args.interactive:
        seed = interactive.ask_seed(seed)
    if not 0 <= seed <= SEED_MAX:
        raise ModelError(f"seed {seed} is out of range", src if src != "default" else "--seed",
                         f"use a whole number between 0 and {SEED_MAX}")
    opts["seed"] = seed

    params, src = pick("params", args.params)
    opts["params"] = _parse_params(params, src)
    opts["params_source"] = "--params" if src == "default" else src

    exclude, src = pick("exclude", args.exclude)
    if src == cfg_src and not (isinstance(exclude, str) or (
            isinstance(exclude, list) and all(isinstance(x, str) for x in exclude))):
        raise UsageError("config value for 'exclude' has the wrong type", src,
                         "give a comma-separated string or a list of strings")
    from refsci.data import parse_exclude
    opts["exclude"] = parse_exclude(exclude)

    if supervised:
        test_size, src = pick("test_size", args.test_size)
        if src == cfg_src:
            _check_type("test_size", test_size, (int, float), src)
        if not (0.0 < float(test_size) < 1.0):
            raise ModelError(f"test size {test_size} is out of range", src,
                             "use a fraction strictly between 0 and 1")
        opts["test_size"] = float(test_size)
    if command == "cluster":
        k, src = pick("n_clusters", args.n_clusters)
        if src == cfg_src:
            _check_type("n_clusters", k, (int,), src)
        if k < 2:
            raise ModelError(f"number of clusters {k} is too small", src, "use 2 or more")
        opts["n_clusters"] = k
    if command == "decompose":
        k, src = pick("n_components", args.n_components)
        if src == cfg_src:
            _check_type("n_components", k, (int,), src)
        if k < 1:
            raise ModelError(f"number of components {k} is too small", src, "use 1 or more")
        opts["n_components"] = k
    if command == "anomaly":
        c, src = pick("contamination", args.contamination)
        if src == cfg_src:
            _check_type("contamination", c, (int, float), src)
        if not (0.0 < float(c) <= 0.5):
            raise ModelError(f"contamination {c} is out of range", src,
                             "use a fraction greater than 0 and at most 0.5")
        opts["contamination"] = float(c)

    sleep_s = args.sleep_s
    if not (math.isfinite(sleep_s) and sleep_s >= 0):
        raise ModelError(f"sleep {sleep_s} is not a non-negative number of seconds", "--sleep-s",
                         "use 0 or a positive number")
    return opts


def raise_usage(message, command):
    _SUBPARSERS[command].error(message)


def _run(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "datasets":
        from refsci import datasets
        if args.action == "list":
            for line in datasets.list_lines():
                print(line)
            return 0
        for path, rows, cols in datasets.export(args.dir):
            print(f"refsci: wrote {path} ({rows} rows, {cols} columns)")
        return 0
    if args.command in ("forecast", "forecast-evaluate", "forecasters"):
        from refsci import forecast_cli
        return forecast_cli.run(args.command, args)
    opts = resolve(args.command, args)
    from refsci import workflows
    return workflows.run(args.command, opts)


def main(argv=None):
    debug = os.environ.get("REFSCI_DEBUG") == "1"
    try:
        return _run(argv)
    except RefsciError as exc:
        if debug:
            traceback.print_exc()
        sys.stdout.flush()
        print(exc.line(), file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("refsci: error: interrupted (signal); run again", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - last resort, one line unless debugging
        if debug:
            traceback.print_exc()
        message = " ".join(str(exc).split()) or "no message"
        print(f"refsci: error: unexpected {type(exc).__name__}: {message} (internal); "
              "rerun with REFSCI_DEBUG=1 for a traceback and report it", file=sys.stderr)
        return EXIT_UNEXPECTED
