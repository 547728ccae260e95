"""The one exception type the CLI turns into a single line on stderr instead of a traceback."""


class UserError(Exception):
    """A problem the user can fix (bad input, a locked or missing file); the message says how."""
