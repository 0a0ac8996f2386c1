# SPDX-License-Identifier: Apache-2.0
"""Builders of the problems the audit commands look for, each made the
way it happens in a Nova deployment, through Nova's API and services.

Each builder starts the computes it needs under the host names it is
given, so builders can share one world without touching each other's
hosts, and returns what it made as a ``Made`` record of uuids, so tests
can assert exact sets. Only Nova writes to Placement here, except for
``make_external_consumer``, which writes what a service other than
Nova would write.
"""

import collections
import uuid

from nova import context as nova_context
from nova import objects
from nova.objects import host_mapping

from tests.nova import drivers

DRIVERS = drivers.NAMESPACE + '.'
EXTERNAL_CLASS = 'CUSTOM_EXTERNAL_WIDGET'
PLACEMENT_WRITE_VERSION = '1.28'

# Flavors the builders boot and resize with (MiB, vCPUs, GiB).
SMALL = dict(name='world.small', memory_mb=512, vcpu=1, disk=1,
             ephemeral=0)
LARGE = dict(name='world.large', memory_mb=1024, vcpu=2, disk=2,
             ephemeral=0)
MAGIC = 'world.magic'
NESTED = 'world.nested'
NESTED_DRIVER = 'fake.MediumFakeDriverWithNestedCustomResources'
GOLD_TRAIT = 'CUSTOM_GOLD'
DEDICATED = 'world.dedicated'


class Made(collections.namedtuple('Made', 'servers migrations providers '
                                          'consumers extra')):
    """What a builder made: server, migration, provider and other
    consumer uuids (tuples, in the order the builder documents) and any
    builder-specific ``extra`` dict."""

    __slots__ = ()


def made(servers=(), migrations=(), providers=(), consumers=(), **extra):
    return Made(tuple(servers), tuple(migrations), tuple(providers),
                tuple(consumers), extra)


class ScenarioMixin:
    """Builders over ``NovaWorldTestCase`` (Nova's helpers and API)."""

    # --- small steps ------------------------------------------------------

    def world_flavors(self):
        """The flavors builders use, created once per test."""
        if not getattr(self, '_world_flavors', None):
            self._world_flavors = {
                'small': self._create_flavor(**SMALL),
                'large': self._create_flavor(**LARGE)}
        return self._world_flavors

    def start_host(self, host, driver=None):
        """A compute on ``host``; ``driver``: a class of drivers.py,
        or a ``compute_driver`` of Nova's (``fake.<Name>``)."""
        if driver:
            if '.' not in driver:
                driver = DRIVERS + driver
            self.flags(compute_driver=driver)
        try:
            return self._start_compute(host)
        finally:
            if driver:
                self.flags(compute_driver=self.compute_driver)

    def boot(self, host, flavor='small', name=None):
        flavor_id = self.world_flavors()[flavor]
        return self._create_server(
            name=name or 'on-%s' % host, flavor_id=flavor_id,
            networks='none', host=host)

    def provider_of(self, host):
        return self._get_provider_uuid_by_host(host)

    def service_of(self, host):
        return self.admin_api.get_services(binary='nova-compute',
                                           host=host)[0]

    def compute_dies(self, host):
        """The compute process on ``host`` stops; Nova's service group
        still counts it up until its heartbeat is old."""
        self.computes[host].stop()

    def mark_down(self, host):
        """What an operator does once a dead host is fenced."""
        self.admin_api.put_service_force_down(self.service_of(host)['id'],
                                              True)

    def migration_of(self, server_uuid):
        """The newest migration of a server, from Nova's API."""
        migrations = [m for m in self.admin_api.get_migrations()
                      if m['instance_uuid'] == server_uuid]
        return max(migrations, key=lambda m: m['id'])

    # --- problems ---------------------------------------------------------

    def make_live_servers(self, host, count=1):
        """Servers running where Placement says: never a problem.

        Made: servers (their uuids), providers (``host``'s).
        Placement: each server's allocation on ``host``.
        """
        self.start_host(host)
        servers = [self.boot(host, name='live-%s-%d' % (host, n))['id']
                   for n in range(count)]
        return made(servers=servers, providers=[self.provider_of(host)])

    def make_migration_in_progress(self, source, dest):
        """A cold migration waiting for its confirmation (VERIFY_RESIZE,
        migration status ``finished``): in progress, never a problem.

        Made: servers (the server), migrations (its migration),
        providers (source, dest).
        Placement: the migration consumer holds the flavor on source,
        the server holds it on dest.
        """
        self.start_host(source)
        self.start_host(dest)
        server = self.boot(source)
        self._migrate_server(server, host=dest)
        migration = self.migration_of(server['id'])
        return made(servers=[server['id']], migrations=[migration['uuid']],
                    providers=[self.provider_of(source),
                               self.provider_of(dest)])

    def _migrate_while_source_dies(self, source, dest):
        """Start a cold migration whose source compute has just died.

        The API still counts the source up (fresh heartbeat), so it takes
        the request; the conductor moves the server's allocation to the
        migration consumer and claims the destination for the server; the
        destination prepares and hands over to the source, which never
        answers. The migration stays ``pre-migrating``.
        """
        self.start_host(source)
        self.start_host(dest)
        server = self.boot(source)
        self.compute_dies(source)
        self.admin_api.post_server_action(
            server['id'], {'migrate': {'host': dest}})
        self._wait_for_instance_action_event(
            server, 'migrate', 'compute_prep_resize', 'success')
        self.mark_down(source)
        return server, self.migration_of(server['id'])

    def make_interrupted_resize(self, source, dest):
        """A cold migration interrupted by its source compute dying for
        good; the operator resets the stuck server to active.

        Made: servers (the server, live, on source), migrations (its
        migration, ``pre-migrating`` forever), providers (source, dest).
        Placement: the migration consumer holds the flavor on source;
        the server holds it on dest, where it never ran.
        """
        server, migration = self._migrate_while_source_dies(source, dest)
        self.admin_api.post_server_action(
            server['id'], {'os-resetState': {'state': 'active'}})
        self._wait_for_state_change(server, 'ACTIVE')
        return made(servers=[server['id']],
                    migrations=[migration['uuid']],
                    providers=[self.provider_of(source),
                               self.provider_of(dest)],
                    migration_status=migration['status'])

    def make_deleted_while_host_down(self, source, dest):
        """A server deleted by its owner while its compute was down,
        during a migration that compute's death interrupted.

        Nova's API deletes the server locally and removes the server's
        own allocations, not those its migration holds.
        Made: servers (the deleted server), migrations (its migration),
        providers (source, dest).
        Placement: the migration consumer holds the flavor on source;
        nothing on dest.
        """
        server, migration = self._migrate_while_source_dies(source, dest)
        self.api.delete_server(server['id'])
        self._wait_until_deleted(server)
        return made(servers=[server['id']],
                    migrations=[migration['uuid']],
                    providers=[self.provider_of(source),
                               self.provider_of(dest)])

    def make_evacuated_server(self, source, dest):
        """A server evacuated from a dead host that never comes back.

        Made: servers (the server, on dest, stopped), migrations (the
        evacuation, ``done``), providers (source, dest).
        Placement: the server holds the flavor on source and on dest;
        only the source compute's restart would free source. The
        evacuation's migration holds nothing.
        """
        self.start_host(source)
        self.start_host(dest)
        server = self.boot(source)
        self.compute_dies(source)
        self.mark_down(source)
        # Since microversion 2.95 an evacuated server arrives stopped.
        self._evacuate_server(server, {'host': dest}, expected_host=dest,
                              expected_state='SHUTOFF')
        migration = self.migration_of(server['id'])
        return made(servers=[server['id']], migrations=[migration['uuid']],
                    providers=[self.provider_of(source),
                               self.provider_of(dest)])

    def make_evacuated_nested_server(self, source, dest):
        """An evacuation, as ``make_evacuated_server``, of a server with
        a nested allocation: its flavor asks ``resources:CUSTOM_MAGIC=1``,
        which each host has on a child provider (``<host>-child``, Nova's
        own fake driver for nested resources).

        Made: servers (the server, on dest, stopped), migrations (the
        evacuation), providers (source, source's child, dest, dest's
        child).
        Placement: the server holds the flavor on both roots and one
        CUSTOM_MAGIC on both children.
        """
        self.start_host(source, driver=NESTED_DRIVER)
        self.start_host(dest, driver=NESTED_DRIVER)
        flavor = self._create_flavor(
            name=NESTED, memory_mb=512, vcpu=1, disk=1, ephemeral=0,
            extra_spec={'resources:%s' % drivers.MAGIC: '1'})
        server = self._create_server(name='nested-on-%s' % source,
                                     flavor_id=flavor, networks='none',
                                     host=source)
        self.compute_dies(source)
        self.mark_down(source)
        self._evacuate_server(server, {'host': dest}, expected_host=dest,
                              expected_state='SHUTOFF')
        migration = self.migration_of(server['id'])
        providers = []
        for host in (source, dest):
            providers += [self.provider_of(host),
                          self._get_provider_uuid_by_name(host + '-child')]
        return made(servers=[server['id']], migrations=[migration['uuid']],
                    providers=providers)

    def make_external_consumer(self, parent_rp, name):
        """What a service other than Nova does: a provider of its own
        under a compute node, and allocations of a custom class on it.

        Made: providers (the new child), consumers (the consumer).
        """
        self._placement_write('put', '/resource_classes/%s'
                              % EXTERNAL_CLASS, None, version='1.7')
        child = str(uuid.uuid4())
        self._placement_write('post', '/resource_providers', {
            'uuid': child, 'name': name,
            'parent_provider_uuid': parent_rp}, version='1.14')
        self._placement_write(
            'put', '/resource_providers/%s/inventories' % child, {
                'resource_provider_generation': 0,
                'inventories': {EXTERNAL_CLASS: {'total': 10,
                                                 'max_unit': 10}}})
        consumer = str(uuid.uuid4())
        self._placement_write('put', '/allocations/%s' % consumer, {
            'allocations': {child: {'resources': {EXTERNAL_CLASS: 3}}},
            'project_id': self.project_id,
            'user_id': 'external-service',
            'consumer_generation': None})
        return made(providers=[child], consumers=[consumer])

    def add_provider_trait(self, rp_uuid, trait):
        """What an operator does to mark a host for a flavor's
        ``trait:`` extra spec; Nova keeps traits it does not own."""
        self._placement_write('put', '/traits/%s' % trait, None,
                              version='1.6')
        provider = self.placement_get('/resource_providers/%s' % rp_uuid)
        traits = self.placement_get('/resource_providers/%s/traits'
                                    % rp_uuid)['traits']
        self._placement_write(
            'put', '/resource_providers/%s/traits' % rp_uuid,
            {'resource_provider_generation': provider['generation'],
             'traits': sorted(set(traits) | {trait})}, version='1.6')

    def add_provider_aggregate(self, rp_uuid):
        """A new Placement aggregate holding the provider (the way an
        operator groups hosts for a bulk command); its uuid."""
        aggregate = str(uuid.uuid4())
        provider = self.placement_get('/resource_providers/%s' % rp_uuid)
        found = self.placement_get(
            '/resource_providers/%s/aggregates' % rp_uuid,
            version='1.19')['aggregates']
        self._placement_write(
            'put', '/resource_providers/%s/aggregates' % rp_uuid,
            {'resource_provider_generation': provider['generation'],
             'aggregates': found + [aggregate]}, version='1.19')
        return aggregate

    def _placement_write(self, method, url, body,
                         version=PLACEMENT_WRITE_VERSION):
        if method == 'put':
            response = self.placement.put(url, body, version=version)
        else:
            response = self.placement.post(url, body, version=version)
        self.assertIn(response.status, (200, 201, 204), response.body)
        return response

    def make_reinstalled_compute(self, host):
        """A compute service deleted and its host reinstalled under the
        same name, while another service's provider is still under its
        compute node.

        Deleting the service makes Nova delete the node's provider tree;
        the child in use and therefore its parent stay (Nova ignores
        the failures). The reinstalled host reports a new node UUID and
        Nova's attempt to create its provider under the old name gets a
        409 from Placement; Nova's API lists the hypervisor under its
        new UUID.
        Made: providers (old root, its child), consumers (the external
        consumer), extra: ``new_node`` (the new hypervisor's UUID, with
        no provider), ``host``.
        """
        self.start_host(host)
        old_root = self.provider_of(host)
        external = self.make_external_consumer(old_root,
                                               '%s:widget-agent' % host)
        service = self.service_of(host)
        self.mark_down(host)
        self.compute_dies(host)
        self.admin_api.api_delete('/os-services/%s' % service['id'])
        self.start_host(host, driver='ReinstalledHostDriver')
        # What an operator runs after adding a compute to a cell
        # (nova-manage cell_v2 discover_hosts): the deleted service took
        # its host mapping with it.
        host_mapping.discover_hosts(nova_context.get_admin_context(),
                                    status_fn=lambda message: None)
        new_node = self._new_node_uuid(host)
        return made(providers=(old_root,) + external.providers,
                    consumers=external.consumers, new_node=new_node,
                    host=host)

    def _new_node_uuid(self, host):
        ctxt = nova_context.get_admin_context()
        nodes = objects.ComputeNodeList.get_all_by_host(ctxt, host)
        return nodes[0].uuid

    def make_flavor_capacity(self, magic_host, pinned_host):
        """Flavors asking for more than classes, and hosts that have it.

        ``world.magic`` asks ``resources:CUSTOM_MAGIC=1`` and
        ``trait:CUSTOM_GOLD=required``; ``magic_host`` has 2 CUSTOM_MAGIC
        and the trait; ``world.dedicated`` asks ``hw:cpu_policy=
        dedicated`` (PCPU); ``pinned_host`` has 4 PCPU.
        Made: providers (magic_host's, pinned_host's), extra: ``magic``
        and ``dedicated`` (flavor ids).
        """
        self.start_host(magic_host, driver='MagicResourceDriver')
        self.start_host(pinned_host, driver='DedicatedCPUDriver')
        magic_rp = self.provider_of(magic_host)
        self.add_provider_trait(magic_rp, GOLD_TRAIT)
        magic = self._create_flavor(
            name=MAGIC, memory_mb=256, vcpu=1, disk=1, ephemeral=0,
            extra_spec={'resources:%s' % drivers.MAGIC: '1',
                        'trait:%s' % GOLD_TRAIT: 'required'})
        dedicated = self._create_flavor(
            name=DEDICATED, memory_mb=256, vcpu=2, disk=1, ephemeral=0,
            extra_spec={'hw:cpu_policy': 'dedicated'})
        return made(providers=[magic_rp, self.provider_of(pinned_host)],
                    magic=magic, dedicated=dedicated)

    def make_disabled_host(self, host):
        """A compute an operator disabled: Nova puts the
        COMPUTE_STATUS_DISABLED trait on its provider, which every
        scheduling request excludes.

        Made: providers (the host's).
        """
        self.start_host(host)
        service = self.service_of(host)
        self.admin_api.put_service(service['id'], {'status': 'disabled'})
        return made(providers=[self.provider_of(host)])

    def build_world(self):
        """Every builder once, each on hosts of its own; returns
        {scenario name: Made}. The hosts, by scenario: live (live1),
        in_progress (mig-src, mig-dst), interrupted (int-src, int-dst),
        deleted (del-src, del-dst), evacuated (evac-src, evac-dst),
        nested (nest-src, nest-dst, and their -child providers),
        external (a child of live1), reinstalled (reinst), flavors
        (gold, pinned), disabled (disabled)."""
        world = {
            'live': self.make_live_servers('live1', count=2),
            'in_progress': self.make_migration_in_progress('mig-src',
                                                           'mig-dst'),
            'interrupted': self.make_interrupted_resize('int-src',
                                                        'int-dst'),
            'deleted': self.make_deleted_while_host_down('del-src',
                                                         'del-dst'),
            'evacuated': self.make_evacuated_server('evac-src', 'evac-dst'),
            'nested': self.make_evacuated_nested_server('nest-src',
                                                        'nest-dst'),
        }
        world['external'] = self.make_external_consumer(
            world['live'].providers[0], 'live1:widget-agent')
        world['reinstalled'] = self.make_reinstalled_compute('reinst')
        world['flavors'] = self.make_flavor_capacity('gold', 'pinned')
        world['disabled'] = self.make_disabled_host('disabled')
        return world
