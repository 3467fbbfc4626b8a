"""The entry point of the ``contextwise`` command, which takes Ctrl-C before the package loads.

The console script calls :func:`main` here rather than :func:`contextwise.cli.main`: importing
``contextwise`` takes a moment, and a Ctrl-C during that moment must end the command as it does
at any other moment, with one line on standard error and the exit status 130, never a traceback.
This module lives outside the package, since importing anything inside it runs the package's
``__init__`` first; it imports only the standard library before it takes Ctrl-C, then the
command.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

EXIT_INTERRUPTED = 130
"""The exit status after a Ctrl-C (128 + SIGINT, as a shell reports it)."""

_LINE = "contextwise: interrupted: The command was stopped (Ctrl-C).\n"


def _interrupt_once(signum: int, frame: FrameType | None) -> None:
    """Stop the command at the first Ctrl-C, and ignore the next ones: one interruption, so one
    line, however many times the key is pressed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def main() -> int:
    """Run the ``contextwise`` command, with Ctrl-C taken from the start.

    Returns:
        The command's exit status (see :func:`contextwise.cli.main`), or 130 after a Ctrl-C.
    """
    try:
        signal.signal(signal.SIGINT, _interrupt_once)
        from contextwise.cli import main as run

        status = run()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command is over: nothing to stop
        return status
    except KeyboardInterrupt:  # before the command could say so itself (while importing)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            sys.stderr.write(_LINE)
            sys.stderr.flush()
        except (AttributeError, OSError, ValueError):  # no standard error: the status says it
            pass
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover - the console script calls main()
    sys.exit(main())
