# SPDX-License-Identifier: Apache-2.0
"""The ``GET /allocation_candidates`` body, shaped per microversion.

Plain dicts in upstream's key order, ready for a fast JSON encoder:

    {"allocation_requests": [AR, ...], "provider_summaries": {uuid: PS}}

    AR, a list before dict_allocations (1.12):
        {"allocations": [{"resource_provider": {"uuid": U},
                          "resources": {RC: n}}, ...]}
    AR from dict_allocations on:
        {"allocations": {U: {"resources": {RC: n}}},
         "mappings": {suffix: [U, ...]}}                  (mappings, 1.34)
    PS: {"resources": {RC: {"capacity": c, "used": u}},
         "traits": [...],                                 (summary_traits)
         "parent_provider_uuid": P, "root_provider_uuid": R}  (summary_tree)

Summaries list only the requested classes before summary_all_classes
(1.27), every class with inventory from then on. The names are rows of
microversion.RULES.
"""

import collections
import threading

import orjson

from osc_placement.server.objects import candidate_search


def allocation_candidates_body(result, request, snap):
    """``result`` from candidate_search.search, ``request`` the parsed
    CandidateRequest (its version picks the shape), ``snap`` the Snapshot.

    Answered from a structure a worker keeps, the body's allocation
    requests and summaries are JSON already written (orjson.Fragment),
    kept from earlier answers (see _request_fragments and
    _summaries_written), unless some value is beyond what orjson writes
    (see json_encoding.json_bytes): then, as for other answers, plain dicts."""
    try:
        return _body(result, request, snap, fragments=True)
    except TypeError:
        return _body(result, request, snap, fragments=False)


def _body(result, request, snap, fragments):
    version = request.version
    # Fragments for the summaries of a kept structure's snapshot only, and
    # then for the allocation requests too: every part written ahead is
    # written by orjson here, so that a value it cannot write raises
    # TypeError now, not when the body is encoded (json_encoding.json_bytes
    # then falls back to the standard library, which cannot write
    # fragments).
    fragments = (fragments
                 and candidate_search.KEPT_SUMMARIES in snap.derived
                 and len(result.candidates) <= FRAGMENTS_MAX
                 and sum(map(len, result.summary_trees.values()))
                 <= FRAGMENTS_MAX)
    return {
        'allocation_requests': _allocation_requests(result.candidates,
                                                    version, fragments),
        'provider_summaries': _provider_summaries(
            result, request, snap, fragments),
    }


# The two builders below run once per candidate and once per provider of
# a large answer (thousands each), so they decide the version's shape
# once per answer, not per item.

def _allocation_requests(candidates, version, fragments):
    if not version.supports('dict_allocations'):
        return [{'allocations': [
            {'resource_provider': {'uuid': uuid},
             'resources': dict(resources)}
            for uuid, resources in candidate.allocations]}
            for candidate in candidates]
    if not candidates:
        return []
    with_mappings = version.supports('candidate_mappings')
    if fragments:
        return _request_fragments(candidates, with_mappings)
    return _request_bodies(candidates, with_mappings)


def _request_bodies(candidates, with_mappings):
    # Each kind of candidate (candidate_search.Candidate, SpreadCandidate)
    # builds its bodies its own way, an answer at a time.
    return type(candidates[0]).request_bodies(candidates, with_mappings)


# (candidate, with mappings) -> its allocation request as JSON. A
# candidate's body depends on the candidate alone, and a scheduler's
# answers repeat most candidates from one request to the next; building
# and writing a thousand bodies was half of a limit=1000 answer's time.
# Emptied when full.
_REQUEST_FRAGMENTS = {}
# The most allocation requests kept, and the most candidates or
# providers summarised in an answer written ahead. Larger answers
# (every candidate of a large cloud: 260,000 at 100,000 compute nodes)
# are plain dicts, kept by nobody once sent.
FRAGMENTS_MAX = 50000


def _request_fragments(candidates, with_mappings):
    known = _REQUEST_FRAGMENTS
    found = [known.get((candidate, with_mappings))
             for candidate in candidates]
    missing = [candidate for candidate, fragment
               in zip(candidates, found) if fragment is None]
    if not missing:
        return found
    if len(known) + len(missing) > FRAGMENTS_MAX:
        known.clear()
    made = {candidate: orjson.Fragment(orjson.dumps(body))
            for candidate, body in zip(
                missing, _request_bodies(missing, with_mappings))}
    for candidate, fragment in made.items():
        known[(candidate, with_mappings)] = fragment
    return [fragment if fragment is not None else made[candidate]
            for candidate, fragment in zip(candidates, found)]


def _provider_summaries(result, request, snap, fragments):
    version = request.version
    shown = (None if version.supports('summary_all_classes')
             else request.resource_class_names())
    with_traits = version.supports('summary_traits')
    with_tree = version.supports('summary_tree')
    summarise = _summariser(snap, shown, with_traits, with_tree)
    if not fragments:
        # In the order _summaries_written writes them.
        trees = result.summary_trees
        return {uuid: summarise(uuid)
                for root in sorted(trees) for uuid in trees[root]}
    kept = snap.derived[candidate_search.KEPT_SUMMARIES]
    return orjson.Fragment(_summaries_written(
        result.summary_trees, snap, summarise,
        kept.setdefault((shown and frozenset(shown), with_traits,
                         with_tree), {})))


def _summaries_written(trees, snap, summarise, known):
    """The summaries of ``trees`` (SearchResult.summary_trees) of a kept
    structure's snapshot, as one JSON object written a tree at a time:
    ``known`` keeps each tree's part, written again only if the tree's
    providers to show or their inventories changed (a provider's
    inventories dict is replaced when its usage changes, never changed;
    its traits and tree are the structure's). A tree at a time rather
    than a provider at a time: an answer of 1,000 NUMA hosts shows 2,000
    providers of 500 trees."""
    inventories = snap.inventories
    parts = []
    for root in sorted(trees):
        providers = trees[root]
        entry = known.get(root)
        if entry is None or not _same_tree_part(entry, providers,
                                                inventories):
            entry = known[root] = (
                providers, [inventories.get(uuid) for uuid in providers],
                b','.join(orjson.dumps(uuid) + b':' + orjson.dumps(
                    summarise(uuid)) for uuid in providers))
        if entry[2]:
            parts.append(entry[2])
    return b'{' + b','.join(parts) + b'}'


def _same_tree_part(entry, providers, inventories):
    """``entry`` of _summaries_written was written for ``providers`` with
    their current inventories."""
    written_for, written_with, _ = entry
    if written_for is not providers and written_for != providers:
        return False
    for uuid, mine in zip(providers, written_with):
        if inventories.get(uuid) is not mine:
            return False
    return True


def _summariser(snap, shown, with_traits, with_tree):
    """A function of a provider's uuid to its summary (a dict)."""
    inventories, traits, none = snap.inventories, snap.traits, {}
    providers = snap.providers
    # Hosts alike have equal trait sets: each set is sorted once, by
    # trait id as upstream lists them.
    sorted_traits, trait_id = {}, snap.trait_ids.__getitem__

    def summarise(uuid):
        summary = {'resources': {
            rc: {'capacity': inv.summary_capacity, 'used': inv.used}
            for rc, inv in inventories.get(uuid, none).items()
            if shown is None or rc in shown}}
        if with_traits:
            names = traits.get(uuid, ())
            listed = sorted_traits.get(names)
            if listed is None:
                listed = sorted_traits[names] = sorted(names, key=trait_id)
            summary['traits'] = listed
        if with_tree:
            # The Provider read directly: Snapshot.parent and .root cost
            # two calls per provider of a large answer.
            provider = providers[uuid]
            summary['parent_provider_uuid'] = provider.parent_uuid
            summary['root_provider_uuid'] = provider.root_uuid or uuid
        return summary
    return summarise


# --------------------------------------------------------------------------
# Answers remembered as written

# The most answers a kept structure remembers, the most bytes they hold
# together, and the most candidates of one answer remembered (an
# unlimited answer at 1,000 compute nodes has 2,600, 1 MB; at 10,000
# it has 26,000, 10 MB, and is written again each time).
REMEMBERED_ANSWERS = 16
REMEMBERED_BYTES = 16 * 1024 * 1024
REMEMBERED_CANDIDATES = 5000


class RememberedAnswers:
    """The last answers of a kept structure's snapshots (Snapshot.derived,
    KEPT_ANSWERS) as JSON, each with the usage it was answered under: the
    snapshot's inventories dict, which candidate_fetch's _KeptStructure
    replaces whenever a usage total read for a request differs, and keeps
    otherwise. The same request answered under the same dict would find
    the same candidates and write the same body, so it is sent again
    without a search: a scheduler's request repeated with no claim
    between, and an unlimited answer of a thousand hosts, which costs
    more to assemble from the walks remembered than to read.

    An answer is remembered for the request object itself, which the
    handler's memo of parsed queries hands out again for the same query
    (the entry holds it, so that no other request reuses its id), and
    for the search options it was found with; never when they ask for a
    random order. Answers under other usage than the last remembered
    are dropped: they would hold an old inventories dict each (5 MB at
    100,000 compute nodes) for an answer no later request gets."""

    def __init__(self):
        # id(request) -> (request, options, inventories, written, count)
        self._answers = collections.OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @staticmethod
    def worth_keeping(options, candidates):
        """Whether an answer of ``candidates`` found with ``options``
        would be remembered (then it is written at once)."""
        return (not options.randomize
                and len(candidates) <= REMEMBERED_CANDIDATES)

    def recall(self, request, options, inventories):
        """(the body as JSON, how many candidates it holds) of
        ``request`` under ``inventories``, or None."""
        key = id(request)
        with self._lock:
            entry = self._answers.get(key)
            if entry is None or entry[0] is not request:
                return None
            _, held_options, held_inventories, written, count = entry
            if held_inventories is not inventories:
                self._forget(key)
                return None
            if held_options != options:
                return None
            self._answers.move_to_end(key)
            return written, count

    def remember(self, request, options, inventories, written, count):
        """Keep ``written`` (the body as JSON, of ``count`` candidates)
        as the answer of ``request`` under ``inventories`` (the caller
        asked worth_keeping)."""
        if len(written) > REMEMBERED_BYTES:
            return
        with self._lock:
            for key, entry in list(self._answers.items()):
                if entry[2] is not inventories:
                    self._forget(key)
            self._forget(id(request))
            self._answers[id(request)] = (request, options, inventories,
                                          written, count)
            self._bytes += len(written)
            while (len(self._answers) > REMEMBERED_ANSWERS
                   or self._bytes > REMEMBERED_BYTES):
                self._forget(next(iter(self._answers)))

    def _forget(self, key):
        entry = self._answers.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry[3])
