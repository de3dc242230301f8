"""Error types carrying an exit code and a one-line message."""

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2
EXIT_DATA = 3
EXIT_MODEL = 4


def _one_line(text):
    return " ".join(str(text).split())


class RefsciError(Exception):
    """An expected failure: printed as one line, exits with `code`."""

    code = EXIT_UNEXPECTED

    def __init__(self, what, where, todo):
        super().__init__(what)
        self.what = _one_line(what)
        self.where = _one_line(where)
        self.todo = _one_line(todo)

    def line(self):
        return f"refsci: error: {self.what} ({self.where}); {self.todo}"


class UsageError(RefsciError):
    code = EXIT_USAGE


class DataError(RefsciError):
    code = EXIT_DATA


class ModelError(RefsciError):
    code = EXIT_MODEL
