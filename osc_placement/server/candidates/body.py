# SPDX-License-Identifier: Apache-2.0
"""The ``GET /allocation_candidates`` body, shaped per microversion:
plain dicts in upstream's key order, ready for a fast JSON encoder.

    {"allocation_requests": [AR, ...], "provider_summaries": {uuid: PS}}
    AR before dict_allocations: {"allocations": [{"resource_provider":
        {"uuid": U}, "resources": {RC: n}}, ...]}
    AR after: {"allocations": {U: {"resources": {RC: n}}},
               "mappings": {suffix: [U, ...]}}         (candidate_mappings)
    PS: {"resources": {RC: {"capacity": c, "used": u}}, "traits": [...],
         "parent_provider_uuid": P, "root_provider_uuid": R}

Summaries list only the requested classes before summary_all_classes.
Answered from a kept structure, parts are written ahead and remembered
(memo.KeptMemory)."""

import orjson

from osc_placement.server.candidates import snapshot as snapshot_mod


def allocation_candidates_body(result, request, snap, memory=None):
    """The body for ``result``; with ``memory`` (memo.KeptMemory) its parts
    are JSON kept from earlier answers, except where a value is beyond
    orjson (json_encoding.json_bytes): then plain dicts, as without one."""
    if memory is not None:
        try:
            return _body(result, request, snap, memory)
        except TypeError:
            pass
    return _body(result, request, snap, None)


def _body(result, request, snap, memory):
    version = request.version
    # Fragments for the summaries of a kept structure's snapshot only, and
    # then for the allocation requests too: every part written ahead is
    # written by orjson here, so that a value it cannot write raises
    # TypeError now, not when the body is encoded (json_encoding.json_bytes
    # then falls back to the standard library, which cannot write
    # fragments).
    fragments = (memory is not None
                 and len(result.candidates) <= FRAGMENTS_MAX
                 and sum(map(len, result.summary_trees.values()))
                 <= FRAGMENTS_MAX)
    return {
        'allocation_requests': _allocation_requests(
            result.candidates, version,
            memory.fragments if fragments else None),
        'provider_summaries': _provider_summaries(
            result, request, snap, memory.summaries if fragments else None),
    }


# The two builders below run once per candidate and once per provider of
# a large answer (thousands each), so they decide the version's shape
# once per answer, not per item.

def _allocation_requests(candidates, version, known):
    """``known``: the allocation requests written ahead, or None to build
    plain dicts."""
    if not version.supports('dict_allocations'):
        return [{'allocations': [
            {'resource_provider': {'uuid': uuid},
             'resources': dict(resources)}
            for uuid, resources in candidate.allocations]}
            for candidate in candidates]
    if not candidates:
        return []
    with_mappings = version.supports('candidate_mappings')
    if known is not None:
        return _request_fragments(candidates, with_mappings, known)
    return _request_bodies(candidates, with_mappings)


def _request_bodies(candidates, with_mappings):
    # Each kind of candidate (results.Candidate, SpreadCandidate)
    # builds its bodies its own way, an answer at a time.
    return type(candidates[0]).request_bodies(candidates, with_mappings)


# The most allocation requests kept, and the most candidates or
# providers summarised in an answer written ahead. Larger answers (every
# candidate of a large cloud) are plain dicts, kept by nobody once sent.
FRAGMENTS_MAX = 50000


def _request_fragments(candidates, with_mappings, known):
    """The allocation requests of ``candidates`` as JSON, from ``known``
    ({(candidate, with mappings): its request as JSON}, emptied when
    full) or written and added to it. A candidate's body depends on the
    candidate alone, and a scheduler's answers repeat most candidates
    from one request to the next."""
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


def _provider_summaries(result, request, snap, kept):
    """``kept``: the summaries written ahead (memo.KeptMemory.summaries),
    or None to build plain dicts."""
    version = request.version
    shown = (None if version.supports('summary_all_classes')
             else request.resource_class_names())
    with_traits = version.supports('summary_traits')
    with_tree = version.supports('summary_tree')
    summarise = _summariser(snap, shown, with_traits, with_tree)
    if kept is None:
        # In the order _summaries_written writes them.
        trees = result.summary_trees
        return {uuid: summarise(uuid)
                for root in sorted(trees) for uuid in trees[root]}
    return orjson.Fragment(_summaries_written(
        result.summary_trees, snap, summarise,
        kept.setdefault((shown and frozenset(shown), with_traits,
                         with_tree), {})))


def _summaries_written(trees, snap, summarise, known):
    """The summaries of ``trees`` (SearchResult.summary_trees) of a kept
    structure's snapshot, as one JSON object written a tree at a time:
    ``known`` keeps each tree's part, written again only if the tree's
    providers to show or their inventories changed (their traits and
    tree are the structure's). A tree at a time rather
    than a provider at a time: a tree's providers are shown together."""
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
    if written_for != providers:
        return False
    for uuid, mine in zip(providers, written_with):
        if not snapshot_mod.same_inventories(mine, inventories.get(uuid)):
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
