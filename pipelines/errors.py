"""The one exception type for mistakes a user can fix (bad file, bad column, bad value)."""


class UserError(Exception):
    """An error caused by the user's input: printed as one line, exit code 2, no traceback.

    Args:
        message: str, what is wrong and what was expected.
        path: str or None, the file the problem is in. Default None.
        line: int or None, the 1-based line number in `path`. Default None.
    """

    def __init__(self, message, path=None, line=None):
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        super().__init__(str(self))

    def __str__(self):
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
            where += ": "
        return where + self.message
