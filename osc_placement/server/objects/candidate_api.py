# SPDX-License-Identifier: Apache-2.0
"""The one way in to the candidate engine: a parsed ``GET
/allocation_candidates`` request, a connection and the search options
in, the response body out.

``answer`` owns what lies between: the name checks (upstream's 400s for
unknown classes and traits), how much of the cloud to read
(``every_tree``, ``first_window`` and ``next_read``: the read policy),
the kept structure or the windows of trees read through
candidate_fetch.SliceReader and searched by candidate_search, and the
body candidate_response shapes. The handler parses the query
(schemas/allocation_candidate.py, then
request_groups.parse_candidate_request) and calls ``answer``; the tests
call it too.
"""

import dataclasses
import logging
import math

import orjson

from osc_placement.server.db import tables
from osc_placement.server import json_encoding
from osc_placement.server.objects import candidate_fetch
from osc_placement.server.objects import candidate_response
from osc_placement.server.objects import candidate_search
from osc_placement.server.objects import resource_class
from osc_placement.server.objects import trait as trait_obj

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class Answer:
    """body:          the response body: plain dicts, or JSON written
                   already (orjson.Fragment) when answered from a kept
                   structure
    held:          the snapshots and search results the body was built
                   from, for the caller to free once the body is sent
                   (none for an answer remembered as written)
    last_modified: when the answer was read (naive UTC)
    count:         how many candidates (allocation requests) it holds"""

    body: object
    held: list
    last_modified: object
    count: int = 0


def answer(request, conn, options=candidate_search.SearchOptions()):
    """The Answer to ``request`` (a parsed request_groups.CandidateRequest)
    read through ``conn``, or errors.BadRequest for an unknown class or
    trait (checked before any of the slice is read).

    The request is answered from every tree when the worker keeps their
    structure or should read it whole (``every_tree``), else from windows
    of trees (``search_windows``). From a kept structure, the answer is
    written at once and remembered, and the same request under the same
    usage is answered with it (candidate_response.RememberedAnswers)."""
    reader = _reader(conn, request)
    wanted = candidate_search.stop_after(request, options)
    snap = every_tree(reader, wanted)
    remembered = (None if snap is None
                  else snap.derived.get(candidate_search.KEPT_ANSWERS))
    if remembered is not None:
        found = remembered.recall(request, options, snap.inventories)
        if found is not None:
            written, count = found
            if not count and LOG.isEnabledFor(logging.DEBUG):
                LOG.debug(why_empty(snap, request))
            return Answer(orjson.Fragment(written), [], tables.utcnow(),
                          count)
    if snap is not None:
        snaps = [snap]
        result = candidate_search.search(snap, request, options)
    else:
        snaps, result = search_windows(reader, request, options, wanted)
    if not result.candidates and LOG.isEnabledFor(logging.DEBUG):
        LOG.debug(why_empty(snaps[-1], request))
    body = candidate_response.allocation_candidates_body(result, request,
                                                         snaps[-1])
    if remembered is not None and remembered.worth_keeping(
            options, result.candidates):
        # Written now, to be remembered, rather than when sent.
        written = json_encoding.json_bytes(body)
        remembered.remember(request, options, snap.inventories, written,
                            len(result.candidates))
        body = orjson.Fragment(written)
    return Answer(body, [snaps, result], tables.utcnow(),
                  len(result.candidates))


# What stopped an answer short (the ``by`` label of
# placement_allocation_candidates_cut_total).
CUT_BY_LIMIT = 'limit'
CUT_BY_MAX = 'max_allocation_candidates'


def cut_by(request, options, count):
    """CUT_BY_LIMIT or CUT_BY_MAX when an answer of ``count`` candidates
    reached the request's ``limit`` or ``[placement]
    max_allocation_candidates``, else None. The search stops there, so
    whether more candidates existed is not known: an answer that holds
    exactly as many as the cap counts as cut."""
    if request.limit is not None and count >= request.limit:
        return CUT_BY_LIMIT
    if options.max_candidates >= 0 and count >= max(options.max_candidates,
                                                    1):
        return CUT_BY_MAX
    return None


def search_windows(reader, request, options, wanted):
    """(snapshots, SearchResult) of ``request`` read in windows of trees.

    When only the first N candidates are wanted, the first trees that
    hold N candidates are as good an answer as any: every candidate lies
    in one anchor tree plus the sharing providers serving it, and a window
    loads those whole. Each further window reads the next trees, as many
    as the candidates per tree seen so far say are missing, and is
    searched on its own; the windows' candidates add up (duplicates, from
    sharing trees read twice, collapse). The last snapshot is the one the
    body is built from."""
    count = None if wanted is None else first_window(wanted)
    found, snaps = {}, []
    while True:
        snaps.append(reader.next_window(count))
        result = candidate_search.search(snaps[-1], request, options)
        found.update(dict.fromkeys(result.candidates))
        if reader.whole or len(found) >= wanted:
            break
        count = next_read(wanted, len(found), reader.read, count)
    if len(snaps) > 1:
        # The windows' merged snapshot goes last: the body's, as the
        # only window's is.
        snaps.append(candidate_search.merge_snapshots(snaps))
        result = candidate_search.result_of(snaps[-1], request,
                                            list(found)[:wanted], options)
    return snaps, result


def why_empty(snap, request):
    """The DEBUG line of an empty answer: what the read kept (only trees
    with room for a requested class, narrowed by member_of and required
    traits where it can), then what each group's tests keep of it."""
    roots = {snap.root(uuid) for uuid in snap.providers}
    parts = ['No allocation candidates: the read kept %d providers in %d '
             'trees' % (len(snap.providers), len(roots))]
    kept = candidate_search.what_each_group_keeps(snap, request)
    for label, counts in kept:
        parts.append('%s: %s' % (label, ', '.join(
            '%d %s' % (count, name) for name, count in counts)))
    return '; '.join(parts)


def _reader(conn, request):
    """Check the request's names (upstream's 400s), then open its slice."""
    spec = candidate_search.snapshot_needs(request)
    class_ids = resource_class.ids_for(conn,
                                       sorted(request.resource_class_names()))
    # The slice's traits include MISC_SHARES_VIA_AGGREGATE even when the
    # request does not name it: sharing providers are found by it.
    trait_ids = trait_obj.ids_for(conn, sorted(spec.traits))
    request.validate_names(class_ids, trait_ids)
    return candidate_fetch.SliceReader(conn, spec, class_ids, trait_ids)


# --------------------------------------------------------------------------
# The read policy: how many trees each read takes


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
# structure between such reads (candidate_fetch._KeptStructure), so one
# costs a read of the usage totals: at 1,000 compute nodes less than
# choosing and loading a scheduler's first window of trees.
WHOLE_READ_TREES = 2000
# Larger clouds are kept too where the usage totals changed since a read
# can be read alone (SliceReader.follows_usage_changes: PostgreSQL): a
# request then costs a read of the few totals that changed, whatever the
# cloud's size. Until their structure is kept (after a worker starts, or
# once it changed) they are read in windows while a thread of the worker
# reads every tree.
KEEP_LARGE_CLOUDS = True


def every_tree(reader, wanted):
    """The snapshot of every tree to answer from when ``wanted``
    candidates are wanted (None: every one), or None to read windows.

    A request naming in_tree trees reads only those. Otherwise a worker
    answers from the structure it keeps when it keeps one for this
    cloud; failing that, reads every tree when the cloud is small or the
    first window would be a large share of it (per tree, a window costs
    the database about three times what a whole read does). In larger
    clouds, requests that narrow their trees (member_of, required
    traits) read windows of the trees they may use."""
    if reader.in_tree:
        return None
    small = reader.tree_count() <= WHOLE_READ_TREES
    keeps = small or (KEEP_LARGE_CLOUDS and reader.follows_usage_changes)
    if keeps:
        snap = reader.kept_snapshot()
        if snap is not None:
            return snap
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
