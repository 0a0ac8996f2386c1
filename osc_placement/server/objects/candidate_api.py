"""``GET /allocation_candidates`` from query string to response body.

The handler calls ``list_allocation_candidates`` with the query multidict,
the request's microversion and two database hooks; everything between is
pure. The order of the checks is upstream's: query schema and parameter
parsing (400), group_policy (400), unknown classes/traits (400), search.
"""

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


# Trees in the first window of a limited request, and how the window
# grows when it holds too few candidates.
FIRST_WINDOW = 16
GROWTH = 4


def answer_in_windows(request, reader,
                      options=candidate_search.SearchOptions()):
    """Like ``answer``, reading the slice through ``reader`` (a
    candidate_fetch.SliceReader) a window of trees at a time.

    When only the first N candidates are wanted, the first trees that
    hold N candidates are as good an answer as any: every candidate lies
    in one anchor tree plus the sharing providers serving it, and a window
    loads those whole. A short window is re-read four times larger, so
    the total read stays under 4/3 of the last window."""
    wanted = candidate_search.stop_after(request, options)
    count = None if wanted is None else first_window(wanted)
    while True:
        snap = reader.snapshot(count)
        result = candidate_search.search(snap, request, options)
        if reader.whole or len(result.candidates) >= wanted:
            return candidate_response.allocation_candidates_body(
                result, request, snap)
        count *= GROWTH


def first_window(wanted):
    # A tree usually holds a candidate or more: ``wanted`` trees tend to
    # be enough, and a small limit still reads a few trees at once.
    return max(wanted, FIRST_WINDOW)
