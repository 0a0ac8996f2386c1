"""The one way in to the candidate engine: a parsed ``GET
/allocation_candidates`` request, a connection and the search options
in, the response body out.

``answer`` owns what lies between: the name checks (upstream's 400s for
unknown classes and traits), how much of the cloud to read
(``first_read`` and ``next_read``, the read policy), the windows of trees
read through candidate_fetch.SliceReader and searched by
candidate_search, and the body candidate_response shapes. The handler
parses the query (schemas/allocation_candidate.py, then
request_groups.parse_candidate_request) and calls ``answer``; the tests
call it too.
"""

import dataclasses
import logging
import math

from osc_placement.server.db import tables
from osc_placement.server.objects import candidate_fetch
from osc_placement.server.objects import candidate_response
from osc_placement.server.objects import candidate_search
from osc_placement.server.objects import resource_class
from osc_placement.server.objects import trait as trait_obj

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class Answer:
    """body:          the response body (plain dicts)
    held:          the snapshots and search results the body was built
                   from, for the caller to free once the body is sent
    last_modified: when the answer was read (naive UTC)"""

    body: dict
    held: list
    last_modified: object


def answer(request, conn, options=candidate_search.SearchOptions()):
    """The Answer to ``request`` (a parsed request_groups.CandidateRequest)
    read through ``conn``, or errors.BadRequest for an unknown class or
    trait (checked before any of the slice is read).

    When only the first N candidates are wanted, the first trees that
    hold N candidates are as good an answer as any: every candidate lies
    in one anchor tree plus the sharing providers serving it, and a window
    loads those whole. Each further window reads the next trees, as many
    as the candidates per tree seen so far say are missing, and is
    searched on its own; the windows' candidates add up (duplicates, from
    sharing trees read twice, collapse)."""
    reader = _reader(conn, request)
    wanted = candidate_search.stop_after(request, options)
    count = first_read(reader, wanted)
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
    if not result.candidates and LOG.isEnabledFor(logging.DEBUG):
        LOG.debug(why_empty(snaps[-1], request))
    body = candidate_response.allocation_candidates_body(result, request,
                                                         snaps[-1])
    return Answer(body, [snaps, result], tables.utcnow())


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
# A cloud of at most this many trees is read whole by any request that
# does not narrow its trees, whatever its limit. Each worker keeps the
# trees' structure between such reads (candidate_fetch._KeptStructure),
# so one costs a read of the usage totals: at 1,000 compute nodes less
# than choosing and loading a scheduler's first window of trees.
WHOLE_READ_TREES = 2000


def first_read(reader, wanted):
    """How many trees the first read takes, None for all of them, when
    ``wanted`` candidates are wanted (None: every one).

    Reading every tree costs less than a window of a large share of them:
    per tree, a window costs the database about three times what a whole
    read does, and a worker answers a whole read of a structure it kept
    from the usage totals alone. A request that narrows its trees
    (in_tree, member_of, required traits) reads only those, so it is
    read in windows whatever the cloud's size."""
    if wanted is None:
        return None
    count = first_window(wanted)
    if reader.narrowed:
        return count
    trees = reader.tree_count()
    if trees <= WHOLE_READ_TREES or count >= WHOLE_READ_SHARE * trees:
        return None
    return count


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
