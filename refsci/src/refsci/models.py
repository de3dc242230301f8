"""Model registry: which scikit-learn estimator each workflow/model name builds."""

from sklearn.cluster import AgglomerativeClustering, KMeans
from sklearn.covariance import EllipticEnvelope
from sklearn.decomposition import PCA, FastICA, TruncatedSVD
from sklearn.ensemble import IsolationForest, RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.mixture import GaussianMixture
from sklearn.neighbors import KNeighborsClassifier, LocalOutlierFactor

from refsci.errors import ModelError
from refsci.params import check as check_params

try:  # scikit-learn >= 1.2
    from sklearn.utils._param_validation import InvalidParameterError
except ImportError:  # pragma: no cover
    InvalidParameterError = ValueError

# workflow -> model name -> (estimator class, function(opts) -> defaults, {reserved key: flag})
MODELS = {
    "regress": {
        "linear": (LinearRegression, lambda o: {}, {}),
        "ridge": (Ridge, lambda o: {}, {}),
        "random_forest": (RandomForestRegressor, lambda o: {"n_estimators": 100}, {}),
    },
    "classify": {
        "logistic": (LogisticRegression, lambda o: {"max_iter": 10000}, {}),
        "random_forest": (RandomForestClassifier, lambda o: {"n_estimators": 100}, {}),
        "knn": (KNeighborsClassifier, lambda o: {"n_neighbors": 5}, {}),
    },
    "cluster": {
        "kmeans": (KMeans, lambda o: {"n_clusters": o["n_clusters"], "n_init": 10},
                   {"n_clusters": "--n-clusters"}),
        "agglomerative": (AgglomerativeClustering, lambda o: {"n_clusters": o["n_clusters"]},
                          {"n_clusters": "--n-clusters"}),
        "gmm": (GaussianMixture, lambda o: {"n_components": o["n_clusters"], "n_init": 1},
                {"n_components": "--n-clusters"}),
    },
    "decompose": {
        "pca": (PCA, lambda o: {"n_components": o["n_components"]},
                {"n_components": "--n-components"}),
        "truncated_svd": (TruncatedSVD, lambda o: {"n_components": o["n_components"], "n_iter": 5},
                          {"n_components": "--n-components"}),
        "fastica": (FastICA, lambda o: {"n_components": o["n_components"], "max_iter": 400,
                                        "whiten": "unit-variance"},
                    {"n_components": "--n-components"}),
    },
    "anomaly": {
        "isolation_forest": (IsolationForest, lambda o: {"contamination": o["contamination"],
                                                         "n_estimators": 100},
                             {"contamination": "--contamination"}),
        "lof": (LocalOutlierFactor, lambda o: {"contamination": o["contamination"]},
                {"contamination": "--contamination"}),
        "elliptic_envelope": (EllipticEnvelope, lambda o: {"contamination": o["contamination"]},
                              {"contamination": "--contamination"}),
    },
}

DEFAULT_MODEL = {
    "regress": "linear",
    "classify": "logistic",
    "cluster": "kmeans",
    "decompose": "pca",
    "anomaly": "isolation_forest",
}


def model_names(workflow):
    return list(MODELS[workflow])


def build(workflow, model, opts):
    """Construct and validate the estimator; raise ModelError for refused parameters."""
    cls, defaults, reserved = MODELS[workflow][model]
    where = opts.get("params_source", "--params")
    for key in opts["params"]:
        if key == "random_state":
            raise ModelError("'random_state' cannot be set through parameters", where,
                             "use --seed instead")
        if key in reserved:
            raise ModelError(f"'{key}' cannot be set through parameters", where,
                             f"use {reserved[key]} instead")
    params = check_params(workflow, model, opts["params"], where)
    accepted = cls().get_params(deep=False)
    kwargs = dict(defaults(opts))
    kwargs.update(params)
    if "random_state" in accepted:
        kwargs["random_state"] = opts["seed"]
    try:
        estimator = cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{cls.__name__} refused the parameters: {exc}", where,
                         "check the parameter names and values") from None
    validate = getattr(estimator, "_validate_params", None)
    if validate is not None:
        try:
            validate()
        except (InvalidParameterError, TypeError, ValueError) as exc:
            raise ModelError(f"invalid parameter value: {exc}", where,
                             "fix the value as the message describes") from None
    return estimator
