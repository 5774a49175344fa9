"""Progress lines of the searches (private).

scikit-learn's ``verbose`` convention: 0 silent; 1 (or more) one line per step of a search
(a width and fold, a length-scale row, a fold of a penalty path), each with the seconds
elapsed since the fit began.  The lines go to stderr, as hmmlearn's convergence monitor
reports, so a workflow job's rule log (its stderr) holds them.
"""

from __future__ import annotations

import sys
import time


class SearchProgress:
    """``progress(message)`` writes ``[name] message; <elapsed> s`` to stderr when
    ``verbose > 0``; ``bool(progress)`` says whether it does."""

    def __init__(self, name, verbose):
        self.name = name
        self.verbose = int(verbose)
        self.start = time.perf_counter()

    def __bool__(self):
        return self.verbose > 0

    def __call__(self, message):
        if self.verbose > 0:
            elapsed = time.perf_counter() - self.start
            sys.stderr.write(f"[{self.name}] {message}; {elapsed:.2f} s\n")
            sys.stderr.flush()


#: A :class:`SearchProgress` that writes nothing (the searches' default).
SILENT = SearchProgress("", 0)
