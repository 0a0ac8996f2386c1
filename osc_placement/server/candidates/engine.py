# SPDX-License-Identifier: Apache-2.0
"""The one owner of what a worker's candidate engine keeps between
requests: the application builds one CandidateEngine per worker beside
its database (app.make_app) and hands it to the door (door.answer).
"""

import itertools
import logging
import threading
import time

from osc_placement.server.candidates import kept as kept_mod
from osc_placement.server.candidates import memo
from osc_placement.server.candidates import read
from osc_placement.server.candidates import statements

LOG = logging.getLogger(__name__)

# How long a worker trusts its count of the cloud's trees. The count only
# picks how a request is read (policy.every_tree), never what it finds,
# so a stale one costs time at worst.
TREE_COUNT_SECONDS = 10.0


class CandidateEngine:
    """Every cache and memo of one worker's candidate engine on one
    database, each valid by a key or stamp it holds: the statements built
    (by what their text depends on), the parsed requests (by query string
    and microversion), allocation requests written as JSON (by
    candidate), the kept structure of every tree (while the database's
    structure stamp is the one it was read under) with its memory of
    walks, summaries and answers, the tree count, and the thread reading
    every tree to keep it (keep_in_background)."""

    def __init__(self):
        self.statements = statements.Statements()
        self.parsed = memo.ParsedRequests()
        self.fragments = {}
        self.kept = None
        self._kept_numbers = itertools.count(1)
        self._tree_count = None  # (count, time.monotonic() when counted)
        self._background = None
        self._background_lock = threading.Lock()

    def tree_count(self, conn):
        """The cloud's trees, counted again once TREE_COUNT_SECONDS
        passed."""
        known = self._tree_count
        now = time.monotonic()
        if known is None or now - known[1] > TREE_COUNT_SECONDS:
            known = self._tree_count = (
                conn.execute(statements.COUNT_TREES).scalar(), now)
        return known[0]

    def forget(self):
        """Drop the kept structure and the tree count: the next request
        starts afresh (for tests and tools)."""
        self.kept = None
        self._tree_count = None

    def kept_snapshot(self, conn):
        """(the kept structure's snapshot with this moment's usage, its
        memo.KeptMemory), or None if the worker keeps none, or one under
        another stamp (then dropped: its memory is free before the
        structure is read again)."""
        kept = self.kept
        if kept is None:
            return None
        last = kept.last
        since = last[0]
        stamp, horizon, usage = read.read_usage(self.statements, conn, since)
        if stamp != kept.stamp or kept_mod.went_back(since, horizon):
            self._drop(kept)
            return None
        return kept.snapshot(last, horizon, usage), kept.memory

    def _drop(self, kept):
        # Unless another thread kept a new read meanwhile.
        current = self.kept
        if current is not None and current.number == kept.number:
            self.kept = None

    def read_every_tree(self, conn, keep=True):
        """(the snapshot of every tree, read now, its memo.KeptMemory if
        it is kept for the next requests, else None). Kept if ``keep``
        and the database has a structure stamp."""
        whole = read.read_every_tree(self.statements, conn)
        if not keep or whole.stamp is None:
            return whole.snap, None
        kept = self.kept = kept_mod.KeptStructure(
            next(self._kept_numbers), whole, self.fragments)
        return kept.snap, kept.memory

    def keep_in_background(self, db_engine):
        """Start reading every tree through ``db_engine`` on a thread of
        its own, to keep it, unless such a read is under way; returns the
        thread (None if one was running).

        For a large cloud whose structure changed: that read takes
        seconds, which the request that found the change does not wait
        for (it reads its windows of trees), nor do the requests after it
        until the structure is kept again."""
        with self._background_lock:
            running = self._background
            if running is not None and running.is_alive():
                return None
            thread = self._background = threading.Thread(
                target=self._read_and_keep, args=(db_engine,), daemon=True,
                name='candidate-structure-read')
        thread.start()
        return thread

    def _read_and_keep(self, db_engine):
        started = time.monotonic()
        try:
            with db_engine.connect() as conn:
                conn = conn.execution_options(isolation_level='AUTOCOMMIT')
                snap, _ = self.read_every_tree(conn)
            LOG.info('Kept the structure of %d resource providers for '
                     'allocation candidates (read in %.1f s)',
                     len(snap.providers), time.monotonic() - started)
        except Exception:
            # The requests go on reading windows; the next one that finds
            # no kept structure starts another read.
            LOG.exception('Reading every tree to keep it failed')

    def wait_for_background_read(self, timeout=None):
        """Join the read keep_in_background started, if any (for tests
        and tools)."""
        with self._background_lock:
            thread = self._background
        if thread is not None:
            thread.join(timeout)
