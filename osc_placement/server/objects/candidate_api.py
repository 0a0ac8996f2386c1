"""``GET /allocation_candidates`` from query string to response body.

The handler calls ``list_allocation_candidates`` with the query multidict,
the request's microversion and two database hooks; everything between is
pure. The order of the checks is upstream's: query schema and parameter
parsing (400), group_policy (400), unknown classes/traits (400), search.
"""

import math

from osc_placement.server.objects import candidate_response
from osc_placement.server.objects import candidate_search
from osc_placement.server.objects import request_groups


def list_allocation_candidates(query, version, known_classes, known_traits,
                               load_snapshot,
                               options=candidate_search.SearchOptions()):
    """Return the response body (plain dicts) or raise errors.BadRequest.

    query:          list of (key, value) pairs, or dict key -> [values]
    version:        (major, minor), at least (1, 10)
    known_classes:  container of existing resource class names (``in``)
    known_traits:   container of existing trait names (``in``)
    load_snapshot:  callable(SliceSpec) -> candidate_search.Snapshot, the
                    SQL read of the slice the request can use
    options:        SearchOptions built from the [placement] options
    """
    request = request_groups.parse_candidate_request(query, version)
    request.validate_names(known_classes, known_traits)
    return answer(request, load_snapshot, options)


def answer(request, load_snapshot, options=candidate_search.SearchOptions()):
    """The body for a parsed, name-checked CandidateRequest; the server
    calls this directly, having checked the names in its transaction."""
    snap = load_snapshot(candidate_search.snapshot_needs(request))
    result = candidate_search.search(snap, request, options)
    return candidate_response.allocation_candidates_body(result, request,
                                                         snap)


# The fewest trees a window reads, and how the window grows while no
# candidate has been found.
FIRST_WINDOW = 16
GROWTH = 4
# Head-room on the trees estimated to hold the missing candidates.
MARGIN = 1.25
# A first window of at least this share of the cloud's trees reads them
# all instead, in one read that costs less than the window's.
WHOLE_READ_SHARE = 1 / 3
# A cloud of at most this many trees is read whole by any request that
# does not narrow its trees, whatever its limit. Each worker keeps the
# trees' structure between such reads (candidate_fetch._KeptStructure),
# so one costs a read of the usage totals: at 1,000 compute nodes less
# than choosing and loading a scheduler's first window of trees.
WHOLE_READ_TREES = 2000


def answer_in_windows(request, reader,
                      options=candidate_search.SearchOptions(), held=None):
    """Like ``answer``, reading the slice through ``reader`` (a
    candidate_fetch.SliceReader) a window of trees at a time. ``held``,
    a list if given, receives the snapshots and search results, for the
    caller to free once the response is sent.

    When only the first N candidates are wanted, the first trees that
    hold N candidates are as good an answer as any: every candidate lies
    in one anchor tree plus the sharing providers serving it, and a window
    loads those whole. Each further window reads the next trees, as many
    as the candidates per tree seen so far say are missing, and is
    searched on its own; the windows' candidates add up (duplicates, from
    sharing trees read twice, collapse)."""
    wanted = candidate_search.stop_after(request, options)
    count = None if wanted is None else first_window(wanted)
    if count is not None and reader.reads_all_sooner(
            count, WHOLE_READ_SHARE, WHOLE_READ_TREES):
        count = None
    found, snaps = {}, []
    while True:
        snaps.append(reader.next_window(count))
        result = candidate_search.search(snaps[-1], request, options)
        found.update(dict.fromkeys(result.candidates))
        if reader.whole or len(found) >= wanted:
            break
        count = next_window(wanted, len(found), reader.read, count)
    if len(snaps) > 1:
        # The windows' merged snapshot goes last: the body's, as the
        # only window's is.
        snaps.append(candidate_search.merge_snapshots(snaps))
        result = candidate_search.result_of(snaps[-1], request,
                                            list(found)[:wanted], options)
    if held is not None:
        held.extend((snaps, result))
    return candidate_response.allocation_candidates_body(result, request,
                                                         snaps[-1])


def first_window(wanted):
    # Trees often hold two candidates or more (a host's own disk or a
    # shared one): half of ``wanted`` trees is a fair first guess, and a
    # short window costs one more read of the next trees, not a re-read.
    return max(wanted // 2, FIRST_WINDOW)


def next_window(wanted, found, read, count):
    """How many trees to read next, after ``read`` trees held ``found``
    candidates (fewer than ``wanted``) and the last window was ``count``
    trees."""
    if not found:
        return count * GROWTH
    missing_trees = (wanted - found) * read / found
    return max(FIRST_WINDOW, math.ceil(missing_trees * MARGIN))
