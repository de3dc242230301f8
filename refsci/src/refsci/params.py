"""The estimator options each model accepts through --params: named, typed and bounded.

scikit-learn estimators take options that are not numbers to tune: a cache directory
(AgglomerativeClustering(memory=...)) is written to and later unpickled, a callable runs code,
n_jobs=-1 takes every core of a shared machine. So --params is an allowlist, not a pass-through:
only the options below, with these types, ranges and choices, reach an estimator. The adapter's
JSON schemas (adapters/refsci/schemas/*.json) state the same lists; tests/test_params.py keeps
the two equal.
"""

from refsci.errors import ModelError


def number(minimum, maximum, exclusive_minimum=False):
    return {"type": "number", "minimum": minimum, "maximum": maximum,
            "exclusive_minimum": exclusive_minimum}


def integer(minimum, maximum):
    return {"type": "integer", "minimum": minimum, "maximum": maximum}


def boolean():
    return {"type": "boolean"}


def choice(*values):
    return {"type": "string", "enum": list(values)}


TOL = number(0.0, 1.0, exclusive_minimum=True)
MAX_ITER = integer(1, 100000)
N_ESTIMATORS = integer(1, 2000)
TREE = {
    "n_estimators": N_ESTIMATORS,
    "max_depth": integer(1, 1000),
    "min_samples_split": integer(2, 10000),
    "min_samples_leaf": integer(1, 10000),
    "max_features": choice("sqrt", "log2"),
    "bootstrap": boolean(),
}
NEIGHBOURS = {
    "n_neighbors": integer(1, 1000),
    "algorithm": choice("auto", "ball_tree", "kd_tree", "brute"),
    "leaf_size": integer(1, 1000),
    "metric": choice("minkowski", "euclidean", "manhattan", "chebyshev"),
    "p": number(1.0, 10.0),
}

# workflow -> model -> option -> spec
ALLOWED = {
    "regress": {
        "linear": {"fit_intercept": boolean(), "positive": boolean()},
        "ridge": {
            "alpha": number(0.0, 1e6),
            "fit_intercept": boolean(),
            "solver": choice("auto", "svd", "cholesky", "lsqr", "sparse_cg", "sag", "saga"),
            "max_iter": MAX_ITER,
            "tol": TOL,
        },
        "random_forest": dict(TREE, criterion=choice("squared_error", "absolute_error",
                                                      "friedman_mse", "poisson")),
    },
    "classify": {
        "logistic": {
            "C": number(0.0, 1e6, exclusive_minimum=True),
            "max_iter": MAX_ITER,
            "tol": TOL,
            "solver": choice("lbfgs", "liblinear", "newton-cg", "newton-cholesky", "sag", "saga"),
            "fit_intercept": boolean(),
            "class_weight": choice("balanced"),
        },
        "random_forest": dict(TREE, criterion=choice("gini", "entropy", "log_loss"),
                              class_weight=choice("balanced", "balanced_subsample")),
        "knn": dict(NEIGHBOURS, weights=choice("uniform", "distance")),
    },
    "cluster": {
        "kmeans": {
            "n_init": integer(1, 100),
            "max_iter": MAX_ITER,
            "tol": TOL,
            "algorithm": choice("lloyd", "elkan"),
            "init": choice("k-means++", "random"),
        },
        "agglomerative": {
            "linkage": choice("ward", "complete", "average", "single"),
            "metric": choice("euclidean", "manhattan", "cosine", "l1", "l2"),
        },
        "gmm": {
            "covariance_type": choice("full", "tied", "diag", "spherical"),
            "max_iter": MAX_ITER,
            "n_init": integer(1, 100),
            "tol": TOL,
            "reg_covar": number(0.0, 1.0),
            "init_params": choice("kmeans", "k-means++", "random", "random_from_data"),
        },
    },
    "decompose": {
        "pca": {"whiten": boolean(), "svd_solver": choice("auto", "full", "arpack", "randomized")},
        "truncated_svd": {"algorithm": choice("arpack", "randomized"), "n_iter": integer(1, 1000),
                          "tol": number(0.0, 1.0)},
        "fastica": {
            "algorithm": choice("parallel", "deflation"),
            "fun": choice("logcosh", "exp", "cube"),
            "max_iter": MAX_ITER,
            "tol": TOL,
            "whiten": choice("unit-variance", "arbitrary-variance"),
        },
    },
    "anomaly": {
        "isolation_forest": {"n_estimators": N_ESTIMATORS, "max_features": number(0.0, 1.0, True),
                             "bootstrap": boolean()},
        "lof": dict(NEIGHBOURS),
        "elliptic_envelope": {"support_fraction": number(0.0, 1.0, True),
                              "assume_centered": boolean()},
    },
}


def _problem(name, spec, value):
    """Why `value` is not acceptable for option `name`, or None."""
    kind = spec["type"]
    if kind == "boolean":
        return None if isinstance(value, bool) else "must be true or false"
    if kind == "string":
        if value in spec["enum"]:
            return None
        return "must be one of: " + ", ".join(spec["enum"])
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be {'an integer' if kind == 'integer' else 'a number'}"
    if kind == "integer" and not (isinstance(value, int) or float(value).is_integer()):
        return "must be an integer"
    low, high = spec["minimum"], spec["maximum"]
    too_low = value <= low if spec.get("exclusive_minimum") else value < low
    if too_low or value > high or value != value:
        bound = "greater than" if spec.get("exclusive_minimum") else "at least"
        return f"must be {bound} {low} and at most {high}"
    return None


def check(workflow, model, params, where):
    """Refuse any option the model does not allow here; return the options, integers as ints."""
    allowed = ALLOWED[workflow][model]
    checked = {}
    for name, value in params.items():
        if name not in allowed:
            hint = ("use one of: " + ", ".join(sorted(allowed))) if allowed else \
                "this model takes no options through parameters"
            raise ModelError(f"{model} does not accept option '{name}' here", where, hint)
        spec = allowed[name]
        problem = _problem(name, spec, value)
        if problem:
            raise ModelError(f"option '{name}' = {value!r} {problem}", where,
                             "fix the value in the parameters")
        checked[name] = int(value) if spec["type"] == "integer" else value
    return checked


def json_schema(spec):
    """One option's spec as JSON Schema."""
    out = {"type": spec["type"]}
    if "enum" in spec:
        out["enum"] = list(spec["enum"])
    if spec["type"] in ("number", "integer"):
        key = "exclusiveMinimum" if spec.get("exclusive_minimum") else "minimum"
        out[key] = spec["minimum"]
        out["maximum"] = spec["maximum"]
    return out


def schema_parts(workflow, default_model):
    """The `params` property and the per-model `allOf` rules of a workflow's JSON schema."""
    models = ALLOWED[workflow]
    union = {}
    for options in models.values():
        for name, spec in options.items():
            schema = json_schema(spec)
            if name in union and union[name] != schema:
                # Models disagree on this option: the loosest common shape here, each
                # model's exact one in its allOf rule.
                merged = dict(union[name])
                if "enum" in schema:
                    merged["enum"] = sorted(set(merged.get("enum", [])) | set(schema["enum"]))
                for bound in ("minimum", "exclusiveMinimum"):
                    merged.pop(bound, None)
                merged["maximum"] = max(merged.get("maximum", 0), schema.get("maximum", 0)) \
                    if "maximum" in merged else merged.get("maximum")
                union[name] = {k: v for k, v in merged.items() if v is not None}
            else:
                union.setdefault(name, schema)
    params = {
        "type": "object",
        "default": {},
        "additionalProperties": False,
        "properties": {name: union[name] for name in sorted(union)},
        "description": "Estimator options, each named, typed and bounded; which ones a model "
                       "takes: " + "; ".join(f"{m}: {', '.join(sorted(o)) or 'none'}"
                                             for m, o in models.items()) + ".",
    }
    rules = []
    for model, options in models.items():
        chosen = {"properties": {"model": {"const": model}}, "required": ["model"]}
        condition = {"anyOf": [{"not": {"required": ["model"]}}, chosen]} \
            if model == default_model else chosen
        rules.append({
            "if": condition,
            "then": {"properties": {"params": {
                "additionalProperties": False,
                "properties": {n: json_schema(s) for n, s in sorted(options.items())},
            }}},
        })
    return params, rules
