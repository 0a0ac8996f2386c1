"""The ``GET /allocation_candidates`` body, shaped per microversion.

Plain dicts in upstream's key order, ready for a fast JSON encoder:

    {"allocation_requests": [AR, ...], "provider_summaries": {uuid: PS}}

    AR  < 1.12: {"allocations": [{"resource_provider": {"uuid": U},
                                  "resources": {RC: n}}, ...]}
    AR >= 1.12: {"allocations": {U: {"resources": {RC: n}}},
                 "mappings": {suffix: [U, ...]}}          (mappings >= 1.34)
    PS: {"resources": {RC: {"capacity": c, "used": u}},
         "traits": [...],                                 (>= 1.17)
         "parent_provider_uuid": P, "root_provider_uuid": R}  (>= 1.29)

Summaries list only the requested classes before 1.27, every class with
inventory from 1.27 on.
"""

DICT_ALLOCATIONS = (1, 12)
SUMMARY_TRAITS = (1, 17)
SUMMARY_ALL_CLASSES = (1, 27)
SUMMARY_TREE = (1, 29)
MAPPINGS = (1, 34)


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
    if version < DICT_ALLOCATIONS:
        return [{'allocations': [
            {'resource_provider': {'uuid': uuid},
             'resources': dict(resources)}
            for uuid, resources in candidate.allocations]}
            for candidate in candidates]
    if version < MAPPINGS:
        return [{'allocations': candidate.allocations_body()}
                for candidate in candidates]
    return [{'allocations': candidate.allocations_body(),
             'mappings': candidate.mapping_dict()}
            for candidate in candidates]


def _provider_summaries(uuids, request, snap):
    version = request.version
    shown = (None if version >= SUMMARY_ALL_CLASSES
             else request.resource_class_names())
    with_traits = version >= SUMMARY_TRAITS
    with_tree = version >= SUMMARY_TREE
    inventories, traits, none = snap.inventories, snap.traits, {}
    summaries = {}
    for uuid in sorted(uuids):
        summary = {'resources': {
            rc: {'capacity': inv.summary_capacity, 'used': inv.used}
            for rc, inv in inventories.get(uuid, none).items()
            if shown is None or rc in shown}}
        if with_traits:
            summary['traits'] = sorted(traits.get(uuid, ()))
        if with_tree:
            summary['parent_provider_uuid'] = snap.parent(uuid)
            summary['root_provider_uuid'] = snap.root(uuid)
        summaries[uuid] = summary
    return summaries
