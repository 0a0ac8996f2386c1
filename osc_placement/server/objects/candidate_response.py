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


def allocation_candidates_body(result, request, snap):
    """``result`` from candidate_search.search, ``request`` the parsed
    CandidateRequest (its version picks the shape), ``snap`` the Snapshot."""
    version = request.version
    return {
        'allocation_requests': _allocation_requests(result.candidates,
                                                    version),
        'provider_summaries': _provider_summaries(
            result.summary_providers, request, snap),
    }


# The two builders below run once per candidate and once per provider of
# a large answer (thousands each), so they decide the version's shape
# once per answer, not per item.

def _allocation_requests(candidates, version):
    if not version.supports('dict_allocations'):
        return [{'allocations': [
            {'resource_provider': {'uuid': uuid},
             'resources': dict(resources)}
            for uuid, resources in candidate.allocations]}
            for candidate in candidates]
    if not candidates:
        return []
    # Each kind of candidate (candidate_search.Candidate, SpreadCandidate)
    # builds its bodies its own way, an answer at a time.
    return type(candidates[0]).request_bodies(candidates,
                                              version.supports('mappings'))


def _provider_summaries(uuids, request, snap):
    version = request.version
    shown = (None if version.supports('summary_all_classes')
             else request.resource_class_names())
    with_traits = version.supports('summary_traits')
    with_tree = version.supports('summary_tree')
    inventories, traits, none = snap.inventories, snap.traits, {}
    providers = snap.providers
    # Hosts alike have equal trait sets: each set is sorted once, by
    # trait id as upstream lists them.
    sorted_traits, trait_id = {}, snap.trait_ids.__getitem__
    summaries = {}
    for uuid in sorted(uuids):
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
        summaries[uuid] = summary
    return summaries
