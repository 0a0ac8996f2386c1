# SPDX-License-Identifier: Apache-2.0
"""What the public API tells about many providers.

Placement has no request that returns the inventories, usages, traits or
aggregates of many providers at once, so the commands that look at a tree
or a whole cloud (``tree show``, ``capacity list``, ``allocation candidate
explain``) read them provider by provider, concurrently, here.
"""

import collections

from osc_lib import exceptions

from osc_placement.resources import common

PROVIDERS_URL = '/resource_providers'
PROVIDER_URL = PROVIDERS_URL + '/{uuid}'
# What can be read about one provider: the URL and the member of the
# answer that holds it. All older than nested providers (traits and
# aggregates both came before them).
PARTS = {
    'inventories': PROVIDER_URL + '/inventories',
    'usages': PROVIDER_URL + '/usages',
    'traits': PROVIDER_URL + '/traits',
    'aggregates': PROVIDER_URL + '/aggregates',
}
ALL_PARTS = tuple(PARTS)
# A provider's allocations by consumer (base API), read by ``consumer list``
# over a whole cloud; not one of the parts read by default.
ALLOCATIONS_PART = 'allocations'
PARTS[ALLOCATIONS_PART] = PROVIDER_URL + '/allocations'
# A server error while reading a provider is retried this many times.
MAX_ATTEMPTS = 4


def results_or_raise(results):
    """``common.run_concurrently`` hands failures back: raise the first."""
    for result in results:
        if isinstance(result, Exception):
            raise result
    return results


def read_parts(get_json, uuids, parts=ALL_PARTS, progress=None,
               skip_missing=False):
    """``{uuid: {part: value}}`` for every provider, read concurrently.

    ``get_json(url)`` sends one GET. A server error is retried; with
    ``skip_missing`` a provider deleted meanwhile is left out instead of
    failing the whole read.
    """
    def read_one(uuid):
        return {part: _get_retrying(get_json, PARTS[part].format(uuid=uuid),
                                    part)
                for part in parts}

    uuids = list(uuids)
    results = common.run_concurrently(read_one, uuids, progress=progress)
    read = {}
    for uuid, result in zip(uuids, results):
        if skip_missing and isinstance(result, exceptions.NotFound):
            continue
        read[uuid] = results_or_raise([result])[0]
    return read


# --- Usages from allocation candidates' provider summaries.

CANDIDATES_URL = '/allocation_candidates'
# Below this many providers the per-provider reads are cheaper than a
# whole-cloud candidates request.
SUMMARIES_FROM = 200


def usages_from_summaries(get_candidates, inventories):
    """``{uuid: usages}`` for the providers of ``inventories`` ({uuid:
    inventories}) that allocation candidates' provider summaries cover.

    Placement has no request for the usages of many providers; but from
    nested candidates on, the summaries of ``GET /allocation_candidates``
    carry the usage of every class of every provider in the trees it
    answers with. One request per class (``resources=CLASS:1``), most
    common first, covers every tree with room for one unit of it; a
    provider whose summary does not name exactly the classes its
    inventories have is left to be read on its own, as is any provider no
    answer covers (a full tree, a class whose min_unit is above one).
    ``get_candidates(resources)`` sends one request.
    """
    found = {}
    for rc in _classes_by_frequency(inventories):
        wanting = [uuid for uuid in inventories
                   if uuid not in found and rc in inventories[uuid]]
        if not wanting:
            continue
        summaries = get_candidates('%s:1' % rc)['provider_summaries']
        for uuid in wanting:
            summary = summaries.get(uuid)
            if summary and set(summary['resources']) == set(
                    inventories[uuid]):
                found[uuid] = {rc_: value['used'] for rc_, value
                               in summary['resources'].items()}
    return found


def _classes_by_frequency(inventories):
    counts = collections.Counter(
        rc for inventory in inventories.values() for rc in inventory)
    return [rc for rc, _ in counts.most_common()]


def _get_retrying(get_json, url, member):
    return get_retrying(get_json, url)[member]


def get_retrying(get_json, url):
    """``get_json(url)``, sent again after a server error."""
    return common.retry_server_errors(get_json, url, attempts=MAX_ATTEMPTS)


def aggregates_of(get_json, uuid):
    """The aggregates of one provider, as a set."""
    return set(get_json(PARTS['aggregates'].format(uuid=uuid))['aggregates'])


def in_aggregates(aggregates, **filters):
    """``member_of`` any of ``aggregates``, as a provider list filter."""
    return dict(filters, member_of='in:' + ','.join(sorted(aggregates)))


def root_of(provider):
    """A listed provider's root: itself before roots are listed."""
    return provider.get('root_provider_uuid') or provider['uuid']
