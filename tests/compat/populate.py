# SPDX-License-Identifier: Apache-2.0
"""A small cloud written through the Placement API with a row in every
table upstream 16.0.0 has, what the API says about it, and what the
database holds.

``populate(base)`` writes it through either server; ``write_more(base)``
is the second round of writes (through ours, in the takeover test);
``snapshot(base)`` is everything a takeover must keep, read through the
API; ``table_rows(db_url)`` is every upstream table, every column, sorted,
read with SQL. UUIDs are fixed, so two servers given the same writes give
equal snapshots.
"""

import uuid

import sqlalchemy as sa

from tests.compat import upstream

# Every table of upstream 16.0.0's schema except alembic_version, whose
# fate is checked through upstream's own ``db version``.
UPSTREAM_TABLES = (
    'resource_classes', 'resource_providers', 'inventories', 'allocations',
    'placement_aggregates', 'resource_provider_aggregates', 'traits',
    'resource_provider_traits', 'projects', 'users', 'consumer_types',
    'consumers')

CUSTOM_CLASS = 'CUSTOM_COMPAT_MAGIC'
CUSTOM_TRAITS = ('CUSTOM_COMPAT_FAST', 'CUSTOM_COMPAT_SSD')
# GET /usages grouped by consumer type (1.38+) answers 500 on upstream with
# PostgreSQL, so project usages are read at the version before.
USAGES_VERSION = '1.37'
# The reshaper is for services (nova-compute), not for admins alone.
RESHAPER_ROLES = ('admin', 'service')


def uid(name):
    """A fixed UUID per name, the same in every run and on both sides."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, 'osc-placement-compat/' + name))


COMPUTE1, NUMA0, PF0 = uid('compute1'), uid('compute1-numa0'), uid('pf0')
COMPUTE2, SHARED = uid('compute2'), uid('shared-disk')
COMPUTE3 = uid('compute3')
AGGREGATE = uid('aggregate1')
CONSUMERS = {name: uid(name) for name in
             ('instance1', 'instance2', 'migration1', 'instance3',
              'instance4')}


def _generation(client, rp):
    return client.get('/resource_providers/%s' % rp)['generation']


def create_provider(client, name, rp, parent=None):
    body = {'name': name, 'uuid': rp}
    if parent:
        body['parent_provider_uuid'] = parent
    client.call('POST', '/resource_providers', body)


def set_inventories(client, rp, inventories):
    client.call('PUT', '/resource_providers/%s/inventories' % rp, {
        'resource_provider_generation': _generation(client, rp),
        'inventories': inventories})


def set_traits(client, rp, traits):
    client.call('PUT', '/resource_providers/%s/traits' % rp, {
        'resource_provider_generation': _generation(client, rp),
        'traits': list(traits)})


def set_aggregates(client, rp, aggregates):
    client.call('PUT', '/resource_providers/%s/aggregates' % rp, {
        'resource_provider_generation': _generation(client, rp),
        'aggregates': list(aggregates)})


def allocation_body(allocations, project, user, consumer_type,
                    generation=None):
    return {'allocations': {rp: {'resources': resources}
                            for rp, resources in allocations.items()},
            'project_id': project, 'user_id': user,
            'consumer_generation': generation,
            'consumer_type': consumer_type}


def populate(base):
    """Classes, traits, a three-level tree, a second root and a sharing
    provider in one aggregate, and consumers of three types from two
    projects and users: a row in every upstream table."""
    client = upstream.Client(base)
    client.call('PUT', '/resource_classes/%s' % CUSTOM_CLASS)
    for trait in CUSTOM_TRAITS:
        client.call('PUT', '/traits/%s' % trait)
    create_provider(client, 'compute1', COMPUTE1)
    create_provider(client, 'compute1-numa0', NUMA0, parent=COMPUTE1)
    create_provider(client, 'compute1-numa0-pf0', PF0, parent=NUMA0)
    create_provider(client, 'compute2', COMPUTE2)
    create_provider(client, 'shared-disk', SHARED)
    set_inventories(client, COMPUTE1, {
        'VCPU': {'total': 16, 'allocation_ratio': 4.0},
        'MEMORY_MB': {'total': 32768, 'reserved': 512, 'step_size': 256}})
    set_inventories(client, PF0, {
        'SRIOV_NET_VF': {'total': 8, 'max_unit': 2},
        CUSTOM_CLASS: {'total': 4}})
    set_inventories(client, COMPUTE2, {
        'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 8192}})
    set_inventories(client, SHARED, {'DISK_GB': {'total': 1000,
                                                 'min_unit': 10}})
    set_traits(client, COMPUTE1, ['HW_CPU_X86_AVX2', CUSTOM_TRAITS[0]])
    set_traits(client, SHARED, ['MISC_SHARES_VIA_AGGREGATE',
                                CUSTOM_TRAITS[1]])
    for rp in (COMPUTE1, COMPUTE2, SHARED):
        set_aggregates(client, rp, [AGGREGATE])
    # Across the tree and the sharing provider; then a reshape gives the
    # NUMA node VCPU of its own and moves one of instance1's to it.
    client.call('PUT', '/allocations/%s' % CONSUMERS['instance1'],
                allocation_body({
                    COMPUTE1: {'VCPU': 3, 'MEMORY_MB': 1024},
                    PF0: {'SRIOV_NET_VF': 1, CUSTOM_CLASS: 1},
                    SHARED: {'DISK_GB': 50}},
                    'project-a', 'user-a', 'INSTANCE'))
    reshape_numa(client)
    # Two consumers in one request, another project, user and type.
    client.call('POST', '/allocations', {
        CONSUMERS['instance2']: allocation_body(
            {COMPUTE2: {'VCPU': 4, 'MEMORY_MB': 2048},
             SHARED: {'DISK_GB': 100}}, 'project-b', 'user-b', 'INSTANCE'),
        CONSUMERS['migration1']: allocation_body(
            {COMPUTE1: {'VCPU': 1}}, 'project-b', 'user-a', 'MIGRATION')})
    # A consumer written twice: its generation moves past 1.
    body = allocation_body({COMPUTE2: {'VCPU': 1}}, 'project-a', 'user-b',
                           'INSTANCE')
    client.call('PUT', '/allocations/%s' % CONSUMERS['instance3'], body)
    body['allocations'][COMPUTE2]['resources']['VCPU'] = 2
    body['consumer_generation'] = 1
    client.call('PUT', '/allocations/%s' % CONSUMERS['instance3'], body)


def reshape_numa(client):
    """POST /reshaper: NUMA0 gets VCPU 8 and instance1 takes one VCPU
    from it instead of from its root, in one request."""
    client.call('POST', '/reshaper', {
        'inventories': {NUMA0: {
            'resource_provider_generation': _generation(client, NUMA0),
            'inventories': {'VCPU': {'total': 8}}}},
        'allocations': {CONSUMERS['instance1']: allocation_body({
            COMPUTE1: {'VCPU': 2, 'MEMORY_MB': 1024},
            NUMA0: {'VCPU': 1},
            PF0: {'SRIOV_NET_VF': 1, CUSTOM_CLASS: 1},
            SHARED: {'DISK_GB': 50}},
            'project-a', 'user-a', 'INSTANCE', generation=1)}},
        roles=RESHAPER_ROLES)


def write_more(base):
    """A new provider with inventory, a new consumer on it and on the
    sharing provider, and a consumer deleted."""
    client = upstream.Client(base)
    create_provider(client, 'compute3', COMPUTE3)
    set_inventories(client, COMPUTE3, {'VCPU': {'total': 4},
                                       'MEMORY_MB': {'total': 4096}})
    set_aggregates(client, COMPUTE3, [AGGREGATE])
    client.call('PUT', '/allocations/%s' % CONSUMERS['instance4'],
                allocation_body({COMPUTE3: {'VCPU': 2, 'MEMORY_MB': 512},
                                 SHARED: {'DISK_GB': 20}},
                                'project-c', 'user-c', 'INSTANCE'))
    client.call('DELETE', '/allocations/%s' % CONSUMERS['instance2'])


def _without_generations(inventories):
    return {rc: dict(inv) for rc, inv in inventories.items()}


def _provider(client, rp):
    path = '/resource_providers/%s' % rp['uuid']
    allocations = client.get(path + '/allocations')['allocations']
    return {
        'name': rp['name'],
        'parent_provider_uuid': rp['parent_provider_uuid'],
        'root_provider_uuid': rp['root_provider_uuid'],
        'inventories': _without_generations(
            client.get(path + '/inventories')['inventories']),
        'traits': sorted(client.get(path + '/traits')['traits']),
        'aggregates': sorted(client.get(path + '/aggregates')['aggregates']),
        'usages': client.get(path + '/usages')['usages'],
        'allocations': {consumer: held['resources']
                        for consumer, held in allocations.items()},
    }


def _consumer(client, consumer):
    held = client.get('/allocations/%s' % consumer)
    held['allocations'] = {rp: alloc['resources']
                           for rp, alloc in held['allocations'].items()}
    return held


def snapshot(base):
    """What the API says about everything a takeover must keep.
    Provider generations are left out: they may move when a server
    rewrites a provider; consumer generations are kept."""
    client = upstream.Client(base)
    providers = {rp['uuid']: _provider(client, rp) for rp in
                 client.get('/resource_providers')['resource_providers']}
    consumers = sorted({consumer for rp in providers.values()
                        for consumer in rp['allocations']})
    projects = sorted({held['project_id'] for held in (
        _consumer(client, consumer) for consumer in consumers)})
    return {
        'providers': providers,
        'consumers': {consumer: _consumer(client, consumer)
                      for consumer in consumers},
        'project_usages': {project: client.get(
            '/usages?project_id=%s' % project,
            version=USAGES_VERSION)['usages'] for project in projects},
        'resource_classes': sorted(
            rc['name'] for rc in client.get('/resource_classes')
            ['resource_classes']),
        'traits': sorted(client.get('/traits')['traits']),
    }


def _sortable(row):
    # None sorts first; everything else by its own order within a column.
    return tuple((value is not None, value if value is not None else 0)
                 for value in row)


def table_rows(db_url, columns=None):
    """Every upstream table's rows, sorted: {table: (columns, rows)}.
    ``columns`` ({table: names}, as a previous call returned) reads only
    those, so columns another schema adds do not count as a change."""
    engine = sa.create_engine(upstream.our_url(db_url))
    dump = {}
    try:
        with engine.connect() as conn:
            for table in UPSTREAM_TABLES:
                names = columns[table] if columns else None
                select = 'SELECT %s FROM %s' % (
                    ', '.join(names) if names else '*', table)
                result = conn.exec_driver_sql(select)
                rows = sorted((tuple(row) for row in result), key=_sortable)
                dump[table] = (tuple(result.keys()), rows)
    finally:
        engine.dispose()
    return dump


def columns_of(dump):
    return {table: names for table, (names, _rows) in dump.items()}
