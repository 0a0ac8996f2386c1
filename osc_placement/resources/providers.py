"""What the public API tells about many providers, and its arithmetic.

Placement has no request that returns the inventories, usages, traits or
aggregates of many providers at once, so the commands that look at a tree
or a whole cloud (``tree show``, ``capacity list``, ``allocation candidate
explain``) read them provider by provider, concurrently, here.
"""

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
SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'
# A server error while reading a provider is retried this many times.
MAX_ATTEMPTS = 4


def capacity(inventory):
    """What can be allocated in all, truncated as Placement truncates it
    in usages and summed amounts."""
    return int(exact_capacity(inventory))


def exact_capacity(inventory):
    """(total - reserved) * ratio, unrounded, as Placement compares one
    request group's amount with it."""
    return ((inventory['total'] - inventory['reserved'])
            * inventory['allocation_ratio'])


# The unit limits of an inventory: each one's name and its test of one
# allocation's amount.
UNIT_LIMITS = (
    ('min_unit', lambda limit, amount: amount >= limit),
    ('max_unit', lambda limit, amount: amount <= limit),
    ('step_size', lambda limit, amount: amount % limit == 0),
)


def unit_checks(inventory, amount):
    """``(limit name, its value, passed)`` for each unit limit the
    inventory has."""
    return [(name, inventory[name], test(inventory[name], amount))
            for name, test in UNIT_LIMITS if name in inventory]


def accepts(inventory, amount):
    """True when one allocation of ``amount`` obeys the unit limits."""
    return all(passed for _, _, passed in unit_checks(inventory, amount))


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
    """A listed provider's root (itself before nested providers show
    roots)."""
    return provider.get('root_provider_uuid') or provider['uuid']
