# SPDX-License-Identifier: Apache-2.0
"""Judging Placement's consumers and providers against what Nova knows.

Pure functions over what was read: Placement's answers (a consumer's
``GET /allocations/{consumer}``, provider lists) and Nova's (servers,
migrations, hypervisors, flavors at compute microversion 2.69). The
commands in ``resources/audit.py`` read, show and write; the verdicts
are made here, so that they can be tested without either service.
"""

import collections
import copy

from osc_placement import flavor_request

# The classes Nova allocates for a server whatever its flavor says: the
# ones ``nova-manage placement audit`` judges, and Nova's other standard
# ones (dedicated CPUs, vGPUs, port bandwidth and packet rate, memory
# encryption). The classes Nova's flavors ask for are added to them.
NOVA_CLASSES = frozenset((
    'VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB', 'VGPU', 'MEM_ENCRYPTION_CONTEXT',
    'FPGA', 'PGPU',
    'NET_BW_EGR_KILOBIT_PER_SEC', 'NET_BW_IGR_KILOBIT_PER_SEC',
    'NET_PACKET_RATE_KILOPACKET_PER_SEC',
    'NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC',
    'NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC'))
# PCI devices Nova reports in Placement get classes of this prefix.
NOVA_CLASS_PREFIX = 'CUSTOM_PCI_'
NOVA_CONSUMER_TYPES = ('INSTANCE', 'MIGRATION')

# Migration statuses of a migration that is over, whatever its outcome
# ('done' is an evacuation's); every other status is one under way.
FINISHED_MIGRATION_STATUSES = frozenset(
    ('completed', 'confirmed', 'reverted', 'failed', 'error', 'cancelled',
     'done'))

ORPHANED = 'orphaned'
MIGRATION_FINISHED = 'migration-finished'
DOUBLED = 'doubled'

# A server moves while it has a task or one of these statuses; a
# migration whose status says it is under way is stuck when its server
# does not.
MOVING_SERVER_STATUSES = frozenset(
    ('RESIZE', 'VERIFY_RESIZE', 'REVERT_RESIZE', 'MIGRATING', 'REBUILD'))

# ``keep``: the providers whose allocations a fix keeps (an empty set
# removes them all), or None when nobody can tell which to keep.
# ``to``: the server a finished migration's allocations go back to.
Finding = collections.namedtuple('Finding', 'consumer problem detail keep to',
                                 defaults=(None,))
# What a verdict needs of Placement's providers: each one's root, the
# sharing ones, and the roots that are Nova's compute nodes (by UUID, or
# by the name of one: a node re-created under a new UUID).
Trees = collections.namedtuple('Trees', 'root_of sharing nova_roots')


def flavor_classes(flavors):
    """The classes Nova asks for the servers of any of ``flavors``; a
    flavor Nova could not schedule (see flavor_request) asks for none."""
    classes = set()
    for flavor in flavors:
        try:
            request = flavor_request.translate(flavor)
        except flavor_request.FlavorRequestError:
            continue
        for suffix in request.groups:
            classes.update(request.resources(suffix))
    return classes


class NovaView:
    """Nova's servers, migrations and compute nodes, indexed for the
    verdicts."""

    def __init__(self, servers, migrations, hypervisors, flavors=()):
        self.hypervisors = {node['id']: node for node in hypervisors}
        self._named = collections.defaultdict(list)
        for uuid, node in self.hypervisors.items():
            self._named[node.get('hypervisor_hostname')].append(uuid)
        self.classes = NOVA_CLASSES | flavor_classes(flavors)
        self._index(servers, migrations)

    def narrowed(self, servers, migrations):
        """The same compute nodes and classes, with only these servers
        and migrations: what Nova says of one server now."""
        view = copy.copy(self)
        view._index(servers, migrations)
        return view

    def _index(self, servers, migrations):
        self.servers = {server['id']: server for server in servers}
        self.migrations = {migration['uuid']: migration
                           for migration in migrations}
        self._of_server = collections.defaultdict(list)
        for migration in migrations:
            self._of_server[migration['instance_uuid']].append(migration)
        self._moving = {server: [migration for migration in listed
                                 if not self.is_over(migration)]
                        for server, listed in self._of_server.items()}

    def is_moving(self, server_uuid):
        """True while a migration of the server is under way."""
        return bool(self._moving.get(server_uuid))

    def is_over(self, migration):
        """True for a migration whose status says so, and for one whose
        status says it is under way while its server is gone or idle (a
        move a dead compute never finished)."""
        if migration['status'] in FINISHED_MIGRATION_STATUSES:
            return True
        server = self.servers.get(migration['instance_uuid'])
        return server is None or not server_moves(server)

    def evacuation_done(self, server_uuid):
        """The server's evacuation whose source Nova has yet to free, or
        None."""
        for migration in self._of_server.get(server_uuid, ()):
            if (migration.get('migration_type') == 'evacuation'
                    and migration['status'] == 'done'):
                return migration
        return None

    def named(self, name):
        """The UUID of a compute node of this hypervisor name, or None."""
        found = self._named.get(name)
        return found[0] if found else None

    def node_of(self, server):
        """The UUID of the compute node the server is on, or None."""
        host = server.get('OS-EXT-SRV-ATTR:host')
        name = server.get('OS-EXT-SRV-ATTR:hypervisor_hostname')
        if not name:
            return None
        named = self._named.get(name, [])
        on_host = [uuid for uuid in named
                   if (self.hypervisors[uuid].get('service') or {})
                   .get('host') == host]
        found = on_host or named
        return found[0] if len(found) == 1 else None


def server_moves(server):
    return bool(server.get('OS-EXT-STS:task_state')
                or server.get('status') in MOVING_SERVER_STATUSES)


def nova_roots(every, nova):
    """The root providers that are Nova's compute nodes."""
    names = {node.get('hypervisor_hostname')
             for node in nova.hypervisors.values()}
    return frozenset(
        provider['uuid'] for provider in every
        if provider.get('root_provider_uuid', provider['uuid'])
        == provider['uuid']
        and (provider['uuid'] in nova.hypervisors
             or provider['name'] in names))


def is_novas(detail, nova, trees):
    """True for a consumer Nova wrote: of a Nova type, or holding one of
    the classes Nova allocates for servers in a tree of Nova's compute
    nodes (another service may allocate VCPU on providers of its own)."""
    if detail.get('consumer_type') in NOVA_CONSUMER_TYPES:
        return True
    held = detail['allocations']
    return (any(trees.root_of.get(provider, provider) in trees.nova_roots
                for provider in held)
            and any(is_nova_class(rc, nova) for allocation in held.values()
                    for rc in allocation['resources']))


def is_nova_class(rc, nova):
    return rc in nova.classes or rc.startswith(NOVA_CLASS_PREFIX)


def compute_trees(allocations, root_of, sharing):
    """``{root: [provider]}`` of the providers held; sharing providers
    (a disk shared by an aggregate) are not a compute tree."""
    trees = {}
    for provider in allocations:
        if provider not in sharing:
            trees.setdefault(root_of.get(provider, provider),
                             []).append(provider)
    return trees


def judge(consumer, detail, nova, trees):
    """The Finding for one consumer, or None when Nova accounts for it.

    ``detail`` is the consumer's ``GET /allocations/{consumer}`` (the
    allocations member at least), ``trees`` the providers' Trees.
    """
    if not detail.get('allocations') or not is_novas(detail, nova, trees):
        return None
    migration = nova.migrations.get(consumer)
    if migration is not None:
        return _judge_migration(consumer, migration, detail, nova,
                                trees.root_of)
    server = nova.servers.get(consumer)
    if server is None:
        return Finding(consumer, ORPHANED,
                       'no server or migration in Nova has this UUID',
                       frozenset())
    held = compute_trees(detail['allocations'], trees.root_of,
                         trees.sharing)
    if len(held) < 2 or nova.is_moving(consumer):
        return None
    return _doubled(consumer, server, held, nova, detail, trees.sharing)


def _judge_migration(consumer, migration, detail, nova, root_of):
    if not nova.is_over(migration):
        return None
    server_uuid = migration['instance_uuid']
    server = nova.servers.get(server_uuid)
    text = '%s of server %s is %s' % (
        migration.get('migration_type') or 'migration', server_uuid,
        migration['status'])
    if migration['status'] not in FINISHED_MIGRATION_STATUSES:
        text += (', but the server is gone' if server is None else
                 ', but the server is %s and not moving'
                 % server.get('status'))
    node = nova.node_of(server) if server else None
    holds_node = node is not None and any(
        root_of.get(provider, provider) == node
        for provider in detail['allocations'])
    return Finding(consumer, MIGRATION_FINISHED, text, frozenset(),
                   to=server_uuid if holds_node else None)


def hand_back(finding, server_detail, trees, nova):
    """A finished migration's Finding, once its server's allocations are
    read: the migration's allocations go back to the server only when
    the migration holds the server's node and the server does not (an
    interrupted move: the server runs where the migration holds, and
    holds only where it never ran); otherwise they are just removed."""
    if finding.to is None:
        return finding
    node = nova.node_of(nova.servers[finding.to])
    if any(trees.root_of.get(provider, provider) == node
           for provider in server_detail.get('allocations') or {}):
        return finding._replace(to=None)
    return finding._replace(detail=finding.detail + (
        '; the server runs where this holds, so its allocations go back '
        'to the server'))


def _doubled(consumer, server, trees, nova, detail, sharing):
    node = nova.node_of(server)
    where = 'server on %s holds %d compute trees, no migration under way' % (
        server.get('OS-EXT-SRV-ATTR:hypervisor_hostname') or 'no host',
        len(trees))
    evacuation = nova.evacuation_done(consumer)
    if evacuation:
        where += ('; evacuated from %s (done): Nova frees the source when '
                  'its compute starts again'
                  % (evacuation.get('source_compute') or 'its source'))
    if node not in trees:
        return Finding(consumer, DOUBLED,
                       where + "; its own tree is not among them",
                       None)
    keep = set(trees[node]) | {provider for provider in detail['allocations']
                               if provider in sharing}
    return Finding(consumer, DOUBLED, where, frozenset(keep))


def same_holdings(first, second):
    """True when two reads of a consumer hold the same resources on the
    same providers."""
    def holdings(detail):
        return {provider: allocation['resources'] for provider, allocation
                in (detail.get('allocations') or {}).items()}
    return holdings(first) == holdings(second)


def fixed_allocations(detail, finding):
    """The allocations a fix writes: only the kept providers'."""
    return {provider: {'resources': dict(allocation['resources'])}
            for provider, allocation in detail['allocations'].items()
            if provider in finding.keep}


# --- Consumer types from Nova.

def nova_type(consumer, nova):
    """INSTANCE for a live server, MIGRATION for a migration, else None."""
    if consumer in nova.servers:
        return 'INSTANCE'
    if consumer in nova.migrations:
        return 'MIGRATION'
    return None


# --- Providers of compute nodes Nova no longer knows.

COMPUTE_CLASSES = frozenset(('VCPU', 'PCPU', 'MEMORY_MB'))
COMPUTE_TRAIT_PREFIX = 'COMPUTE_'

# ``deletable``: the evidence that the provider is a compute node's is
# enough for --delete (a name or a trait only Nova's compute sets), not
# compute classes alone, which other services' providers may have.
StaleProvider = collections.namedtuple(
    'StaleProvider', 'provider problem detail deletable')
STALE = 'stale'
STALE_CHILD = 'child-of-stale'
DUPLICATE_NAME = 'duplicate-name'


def unknown_roots(every, nova, sharing):
    """Root providers whose UUID is no compute node of Nova's (sharing
    providers aside): the candidates for staleness, to be looked at."""
    return [provider for provider in every
            if provider.get('root_provider_uuid', provider['uuid'])
            == provider['uuid']
            and provider['uuid'] not in nova.hypervisors
            and provider['uuid'] not in sharing]


def compute_node_evidence(provider, inventories, traits, nova):
    """Why a root looks like a compute node's: the name of one of Nova's
    nodes, a COMPUTE_ trait, compute classes; None when nothing does."""
    holder = node_named(provider['name'], nova)
    if holder is not None:
        return ('Nova\'s compute node %s of this name has UUID %s; this '
                'provider takes the name its provider needs'
                % (provider['name'], holder))
    if any(trait.startswith(COMPUTE_TRAIT_PREFIX) for trait in traits):
        return 'no compute node of Nova has this UUID (it has COMPUTE_ traits)'
    if COMPUTE_CLASSES & set(inventories):
        return ('no compute node of Nova has this UUID; only its compute '
                'classes say it was one, so --delete leaves it alone')
    return None


def stale_verdict(provider, inventories, traits, nova):
    """The StaleProvider for an unknown root, or None if it does not look
    like a compute node's."""
    evidence = compute_node_evidence(provider, inventories, traits, nova)
    if evidence is None:
        return None
    deletable = (node_named(provider['name'], nova) is not None
                 or any(trait.startswith(COMPUTE_TRAIT_PREFIX)
                        for trait in traits))
    return StaleProvider(provider, STALE, evidence, deletable)


def node_named(name, nova):
    """The UUID of Nova's compute node of this hypervisor name, or None."""
    return nova.named(name)


def nodes_without_provider(every, nova):
    """Nova's compute nodes that share their name with another node and
    have no provider (Placement refuses the second of a name): rows of
    their own, which only Nova can fix (delete the old service)."""
    have = {provider['uuid'] for provider in every}
    by_name = collections.defaultdict(list)
    for uuid, node in nova.hypervisors.items():
        by_name[node.get('hypervisor_hostname')].append(uuid)
    rows = []
    for name, uuids in sorted(by_name.items(), key=lambda item: str(item[0])):
        if len(uuids) < 2:
            continue
        for uuid in sorted(set(uuids) - have):
            others = ', '.join(sorted(set(uuids) - {uuid}))
            rows.append(StaleProvider(
                {'uuid': uuid, 'name': name, 'root_provider_uuid': None},
                DUPLICATE_NAME,
                'Nova has compute nodes %s of this name too; this one has '
                'no provider (the name is taken)' % others, False))
    return rows


def stale_children(stale_roots, every):
    """The descendants of stale roots, deepest first (deletion order)."""
    roots = {provider['uuid'] for provider in stale_roots}
    children = [provider for provider in every
                if provider.get('root_provider_uuid') in roots
                and provider['uuid'] not in roots]
    by_uuid = {provider['uuid']: provider for provider in every}
    return sorted(children,
                  key=lambda child: -_depth(child, by_uuid))


def _depth(provider, by_uuid):
    depth = 0
    while provider.get('parent_provider_uuid'):
        provider = by_uuid.get(provider['parent_provider_uuid'], {})
        depth += 1
    return depth
