"""refsci: reference scientific CLI over scikit-learn."""

__version__ = "0.1.0"
