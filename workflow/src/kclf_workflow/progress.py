"""Progress of a long workflow job in its rule log: how many units of how many are done and
the seconds elapsed, so a job that runs for minutes (a shard of images or clips, a kernel
block, a fit over trials, realisations or folds) is not silent between its first and last
line.  The lines go through the callers' module loggers, which the rule scripts send to
the rule log."""

from __future__ import annotations

import time


class Progress:
    """``step(detail)`` after each of ``total`` units logs ``<what> k/total (detail);
    <t> s elapsed`` through ``logger`` at INFO: after the first and the last unit always,
    after another when ``every`` seconds have passed since the last line (a shard of
    thousands of images writes a line every ``every`` seconds, not thousands)."""

    def __init__(self, logger, what, total, every=10.0):
        self.logger, self.what, self.total, self.every = logger, what, int(total), every
        self.done = 0
        self.start = self.last = time.perf_counter()

    def step(self, detail=""):
        self.done += 1
        now = time.perf_counter()
        if self.done in (1, self.total) or now - self.last >= self.every:
            self.last = now
            self.logger.info(
                "%s %d/%d%s; %.1f s elapsed",
                self.what,
                self.done,
                self.total,
                f" ({detail})" if detail else "",
                now - self.start,
            )

    def elapsed(self):
        """Seconds since the start."""
        return time.perf_counter() - self.start
