# SPDX-License-Identifier: Apache-2.0
"""The one way in to the candidate engine: the worker's CandidateEngine,
a parsed ``GET /allocation_candidates`` request, a connection and the
search options in, the response body out.

``answer`` owns what lies between: the name checks (upstream's 400s for
unknown classes and traits), how much of the cloud to read (policy.py),
the kept structure or the windows of trees read through read.SliceReader
and searched by search.py, and the body body.py shapes. The handler
parses the query (schemas/allocation_candidate.py, then
request_groups.parse_candidate_request) and calls ``answer``; the tests
call it too.
"""

import dataclasses
import logging

import orjson

from osc_placement.server.candidates import body as body_mod
from osc_placement.server.candidates import policy
from osc_placement.server.candidates import read
from osc_placement.server.candidates import request as request_mod
from osc_placement.server.candidates import search as search_mod
from osc_placement.server.candidates import snapshot as snapshot_mod
from osc_placement.server.db import tables
from osc_placement.server import json_encoding
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


def answer(engine, request, conn, options=request_mod.SearchOptions()):
    """The Answer to ``request`` (a parsed request_groups.CandidateRequest)
    read through ``conn`` by the worker's ``engine`` (a CandidateEngine),
    or errors.BadRequest for an unknown class or trait (checked before
    any of the slice is read).

    The request is answered from every tree when the worker keeps their
    structure or should read it whole (policy.every_tree), else from
    windows of trees (search_windows). From a kept structure, the answer
    is written at once and remembered, and the same request under the
    same usage is answered with it (memo.RememberedAnswers)."""
    reader = open_reader(engine, conn, request)
    wanted = request_mod.stop_after(request, options)
    whole = policy.every_tree(reader, wanted)
    snap, memory = (None, None) if whole is None else whole
    key = None if memory is None else request.answer_key
    if memory is not None:
        found = memory.answers.recall(key, options, snap.usage_stamp)
        if found is not None:
            return _remembered(found, snap, request)
    if snap is not None:
        snaps = [snap]
        result = search_mod.search(snap, request, options, memory)
    else:
        snaps, result = search_windows(reader, request, options, wanted)
    if not result.candidates and LOG.isEnabledFor(logging.DEBUG):
        LOG.debug(why_empty(snaps[-1], request, memory))
    body = body_mod.allocation_candidates_body(result, request, snaps[-1],
                                               memory)
    count = len(result.candidates)
    if memory is not None and memory.answers.worth_keeping(
            options, result.candidates):
        # Written now, to be remembered, rather than when sent.
        written = json_encoding.json_bytes(body)
        memory.answers.remember(key, options, snap.usage_stamp, written,
                                count)
        body = orjson.Fragment(written)
    return Answer(body, [snaps, result], tables.utcnow(), count)


def _remembered(found, snap, request):
    """The Answer remembered as ``found`` (written, count)."""
    written, count = found
    if not count and LOG.isEnabledFor(logging.DEBUG):
        LOG.debug(why_empty(snap, request))
    return Answer(orjson.Fragment(written), [], tables.utcnow(), count)


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
    count = None if wanted is None else policy.first_window(wanted)
    found, snaps = {}, []
    while True:
        snaps.append(reader.next_window(count))
        result = search_mod.search(snaps[-1], request, options)
        found.update(dict.fromkeys(result.candidates))
        if reader.whole or len(found) >= wanted:
            break
        count = policy.next_read(wanted, len(found), reader.read, count)
    if len(snaps) > 1:
        # The windows' merged snapshot goes last: the body's, as the
        # only window's is.
        snaps.append(snapshot_mod.merge_snapshots(snaps))
        result = search_mod.result_of(snaps[-1], request,
                                      list(found)[:wanted], options)
    return snaps, result


def why_empty(snap, request, memory=None):
    """The DEBUG line of an empty answer: what the read kept (only trees
    with room for a requested class, narrowed by member_of and required
    traits where it can), then what each group's tests keep of it."""
    roots = {snap.root(uuid) for uuid in snap.providers}
    parts = ['No allocation candidates: the read kept %d providers in %d '
             'trees' % (len(snap.providers), len(roots))]
    kept = search_mod.what_each_group_keeps(snap, request, memory)
    for label, counts in kept:
        parts.append('%s: %s' % (label, ', '.join(
            '%d %s' % (count, name) for name, count in counts)))
    return '; '.join(parts)


def open_reader(engine, conn, request):
    """Check the request's names (upstream's 400s), then open its slice
    (a read.SliceReader)."""
    spec = request_mod.snapshot_needs(request)
    class_ids = resource_class.ids_for(conn,
                                       sorted(request.resource_class_names()))
    # The slice's traits include MISC_SHARES_VIA_AGGREGATE even when the
    # request does not name it: sharing providers are found by it.
    trait_ids = trait_obj.ids_for(conn, sorted(spec.traits))
    request.validate_names(class_ids, trait_ids)
    return read.SliceReader(engine, conn, spec, class_ids, trait_ids)
