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
        'allocation_requests': [_allocation_request(cand, version)
                                for cand in result.candidates],
        'provider_summaries': _provider_summaries(
            result.summary_providers, request, snap),
    }


def _allocation_request(candidate, version):
    if version < DICT_ALLOCATIONS:
        return {'allocations': [
            {'resource_provider': {'uuid': uuid},
             'resources': dict(resources)}
            for uuid, resources in candidate.allocations]}
    body = {'allocations': candidate.allocations_body()}
    if version >= MAPPINGS:
        body['mappings'] = candidate.mapping_dict()
    return body


def _provider_summaries(uuids, request, snap):
    version = request.version
    if version >= SUMMARY_ALL_CLASSES:
        shown = None
    else:
        shown = request.resource_class_names()
    return {uuid: _provider_summary(uuid, snap, version, shown)
            for uuid in sorted(uuids)}


def _provider_summary(uuid, snap, version, shown_classes):
    resources = {}
    for rc, inv in snap.inventories.get(uuid, {}).items():
        if shown_classes is None or rc in shown_classes:
            resources[rc] = {'capacity': inv.summary_capacity,
                             'used': inv.used}
    summary = {'resources': resources}
    if version >= SUMMARY_TRAITS:
        summary['traits'] = sorted(snap.traits_of(uuid))
    if version >= SUMMARY_TREE:
        summary['parent_provider_uuid'] = snap.parent(uuid)
        summary['root_provider_uuid'] = snap.root(uuid)
    return summary
