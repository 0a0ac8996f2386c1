# SPDX-License-Identifier: Apache-2.0
"""The read policy: how much of the cloud a request reads -- the kept
structure, every tree, or windows of trees -- and how many trees each
window takes.
"""

import math

# The fewest trees a window reads, and how the window grows while no
# candidate has been found.
FIRST_WINDOW = 16
GROWTH = 4
# Head-room on the trees estimated to hold the missing candidates.
MARGIN = 1.25
# A first window of at least this share of the cloud's trees reads them
# all instead, in one read that costs less than the window's.
WHOLE_READ_SHARE = 1 / 3
# A cloud of at most this many trees is read whole by any request but an
# in_tree one, whatever its limit, and each worker keeps the trees'
# structure between such reads (kept.KeptStructure), so one costs a read
# of the usage totals: less than choosing and loading a scheduler's
# first window of trees.
WHOLE_READ_TREES = 2000
# Larger clouds are kept too where the usage totals changed since a read
# can be read alone (SliceReader.follows_usage_changes: PostgreSQL): a
# request then costs a read of the few totals that changed, whatever the
# cloud's size. Until their structure is kept (after a worker starts, or
# once it changed) they are read in windows while a thread of the worker
# reads every tree.
KEEP_LARGE_CLOUDS = True


def every_tree(reader, wanted):
    """(the snapshot of every tree to answer from when ``wanted``
    candidates are wanted (None: every one), its memo.KeptMemory or
    None), or None to read windows.

    A request naming in_tree trees reads only those. Otherwise a worker
    answers from the structure it keeps when it keeps one for this
    cloud; failing that, reads every tree when the cloud is small or the
    first window would be a large share of it (per tree, a window costs
    the database more than a whole read does). In larger clouds,
    requests that narrow their trees (member_of, required traits) read
    windows of the trees they may use."""
    if reader.in_tree:
        return None
    small = reader.tree_count() <= WHOLE_READ_TREES
    keeps = small or (KEEP_LARGE_CLOUDS and reader.follows_usage_changes)
    if keeps:
        kept = reader.kept_snapshot()
        if kept is not None:
            return kept
    if small or (not reader.narrowed and (
            wanted is None or first_window(wanted)
            >= WHOLE_READ_SHARE * reader.tree_count())):
        return reader.read_every_tree(keep=keeps)
    if keeps:
        reader.keep_in_background()
    return None


def first_window(wanted):
    # Trees often hold two candidates or more (a host's own disk or a
    # shared one): half of ``wanted`` trees is a fair first guess, and a
    # short window costs one more read of the next trees, not a re-read.
    return max(wanted // 2, FIRST_WINDOW)


def next_read(wanted, found, read, count):
    """How many trees to read next, after ``read`` trees held ``found``
    candidates (fewer than ``wanted``) and the last window was ``count``
    trees."""
    if not found:
        return count * GROWTH
    missing_trees = (wanted - found) * read / found
    return max(FIRST_WINDOW, math.ceil(missing_trees * MARGIN))
