# SPDX-License-Identifier: Apache-2.0
"""Populate a realistic cloud in any Placement service, over HTTP only.

The layout matches the reference figures in the project's benchmark docs:
N compute nodes with VCPU 64 (allocation ratio 4), MEMORY_MB 262144 and
DISK_GB 2000; half of them with HW_CPU_X86_AVX2, 2% with
COMPUTE_STATUS_DISABLED; every 10th with two NUMA children (VCPU,
MEMORY_MB) and a PGPU child (VGPU); one sharing DISK_GB provider per
aggregate of 20 hosts; existing allocations filling about half of every
host. Allocations are written with ``POST /allocations``, one request per host,
as a bulk loader would.
"""

import random
import uuid

from benchmarks import client as http_client

HOSTS_PER_AGGREGATE = 20
FLAVORS = (  # VCPU, MEMORY_MB, DISK_GB
    (1, 2048, 20), (2, 4096, 40), (4, 8192, 80), (8, 16384, 160))
NUMA_EVERY = 10
HOST_MEMORY_MB = 262144


class Cloud:
    """What was created, so queries and claims can refer to it."""

    def __init__(self):
        self.hosts = []          # root provider uuids
        self.aggregates = []     # aggregate uuids
        self.sharing = []        # sharing provider uuids
        self.consumers = 0
        self.allocation_rows = 0
        self.providers = 0


def build(client, nodes, seed=1, pool=None, progress=None):
    """Create the cloud; return a Cloud and the timings of each phase."""
    rng = random.Random(seed)
    cloud = Cloud()
    timings = {}
    _ensure_traits(client)
    specs = _provider_specs(nodes, rng, cloud)
    with http_client.Timer() as t:
        # Parents first: a child's create names its parent.
        for wave in (_roots(specs), _children(specs)):
            http_client.run_all(pool, [lambda s=s: _create_provider(client, s)
                                       for s in wave], progress, 'providers')
    timings['providers'] = (len(specs), t.seconds)
    cloud.providers = len(specs)
    batches = _allocation_batches(specs, rng, cloud)
    with http_client.Timer() as t:
        http_client.run_all(pool, [lambda b=b: _post_allocations(client, b)
                                   for b in batches], progress,
                            'allocation writes')
    timings['allocation_writes'] = (len(batches), t.seconds)
    return cloud, timings


def _ensure_traits(client):
    client.put('/traits/CUSTOM_BENCH_MARKER', expect=(201, 204))


def _provider_specs(nodes, rng, cloud):
    """Every provider to create, parents before children."""
    specs = []
    for a in range(max(1, nodes // HOSTS_PER_AGGREGATE)):
        agg = str(uuid.UUID(int=rng.getrandbits(128)))
        cloud.aggregates.append(agg)
        sharing = _new_uuid(rng)
        cloud.sharing.append(sharing)
        specs.append({'uuid': sharing, 'name': 'shared-disk-%d' % a,
                      'inventories': {'DISK_GB': _inv(100000)},
                      'traits': ['MISC_SHARES_VIA_AGGREGATE'],
                      'aggregates': [agg]})
    for n in range(nodes):
        specs.extend(_host_specs(n, rng, cloud))
    return specs


def _host_specs(n, rng, cloud):
    host = _new_uuid(rng)
    cloud.hosts.append(host)
    traits = []
    if n % 2 == 0:
        traits.append('HW_CPU_X86_AVX2')
    if n % 50 == 7:
        traits.append('COMPUTE_STATUS_DISABLED')
    agg = cloud.aggregates[(n // HOSTS_PER_AGGREGATE) % len(cloud.aggregates)]
    root = {'uuid': host, 'name': 'compute-%05d' % n, 'traits': traits,
            'aggregates': [agg], 'inventories': {
                'VCPU': _inv(64, allocation_ratio=4.0),
                'MEMORY_MB': _inv(HOST_MEMORY_MB), 'DISK_GB': _inv(2000)}}
    specs = [root]
    if n % NUMA_EVERY == 0:
        root['inventories'] = {'DISK_GB': _inv(2000)}
        for cell in range(2):
            specs.append({'uuid': _new_uuid(rng), 'parent': host,
                          'name': 'compute-%05d-numa%d' % (n, cell),
                          'traits': ['HW_NUMA_ROOT'], 'inventories': {
                              'VCPU': _inv(32, allocation_ratio=4.0),
                              'MEMORY_MB': _inv(131072)}})
        specs.append({'uuid': _new_uuid(rng), 'parent': host,
                      'name': 'compute-%05d-pgpu' % n, 'traits': [],
                      'inventories': {'VGPU': _inv(8)}})
    return specs


def _roots(specs):
    return [s for s in specs if not s.get('parent')]


def _children(specs):
    return [s for s in specs if s.get('parent')]


def _inv(total, allocation_ratio=1.0):
    return {'total': total, 'allocation_ratio': allocation_ratio}


def _new_uuid(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _create_provider(client, spec):
    body = {'name': spec['name'], 'uuid': spec['uuid']}
    if spec.get('parent'):
        body['parent_provider_uuid'] = spec['parent']
    rp = client.post('/resource_providers', body).json()
    generation = rp['generation']
    url = '/resource_providers/%s' % spec['uuid']
    generation = client.put(url + '/inventories', {
        'inventories': spec['inventories'],
        'resource_provider_generation': generation,
    }).json()['resource_provider_generation']
    if spec.get('traits'):
        generation = client.put(url + '/traits', {
            'traits': spec['traits'],
            'resource_provider_generation': generation,
        }).json()['resource_provider_generation']
    if spec.get('aggregates'):
        client.put(url + '/aggregates', {
            'aggregates': spec['aggregates'],
            'resource_provider_generation': generation})


def _allocation_batches(specs, rng, cloud):
    """Consumers filling about half of every host, in POST batches."""
    # One batch per host, so concurrent batches never write the same
    # provider and the load measures throughput rather than retries.
    cells = _compute_cells(specs)
    batches = [
        dict(_fill_memory(spec, cells.get(spec['uuid'], []), rng, cloud))
        for spec in specs if _is_host(spec)]
    cloud.consumers = sum(len(batch) for batch in batches)
    return batches


def _is_host(spec):
    return not spec.get('parent') and (
        'MISC_SHARES_VIA_AGGREGATE' not in spec['traits'])


def _compute_cells(specs):
    """{host uuid: [its NUMA children's uuids]}, in creation order.

    Looked up once for all hosts: scanning every spec per host made
    building a 100,000-node cloud quadratic (hours of Python).
    """
    cells = {}
    for spec in specs:
        if spec.get('parent') and 'VCPU' in spec['inventories']:
            cells.setdefault(spec['parent'], []).append(spec['uuid'])
    return cells


def _fill_memory(root, cells, rng, cloud, memory_target=HOST_MEMORY_MB // 2):
    """Allocations for one host until about ``memory_target`` MB of its
    memory is used (by default half), the VCPU and MEMORY_MB on one of
    ``cells`` (its NUMA children) when it has some.

    Memory is the binding resource with these flavors (VCPU is
    over-committed 4:1), so "half full" is measured on MEMORY_MB.
    """
    used = 0
    project = str(uuid.UUID(int=rng.getrandbits(128)))
    user = str(uuid.UUID(int=rng.getrandbits(128)))
    out = []
    while used < memory_target:
        vcpu, mem, disk = rng.choice(FLAVORS)
        compute = rng.choice(cells) if cells else root['uuid']
        allocations = {compute: {'resources': {'VCPU': vcpu,
                                               'MEMORY_MB': mem}}}
        allocations.setdefault(root['uuid'], {'resources': {}})
        allocations[root['uuid']]['resources']['DISK_GB'] = disk
        cloud.allocation_rows += 3
        out.append((str(uuid.UUID(int=rng.getrandbits(128))), {
            'allocations': allocations, 'project_id': project,
            'user_id': user, 'consumer_generation': None,
            'consumer_type': 'INSTANCE'}))
        used += mem
    return out


def _post_allocations(client, batch):
    client.post('/allocations', batch, expect=(204,))
