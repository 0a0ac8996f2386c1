# SPDX-License-Identifier: Apache-2.0
"""The Nova world: each scenario leaves in Placement what it leaves in a
real deployment, Nova's own audit judges it as it does there, and our
commands reach the same Nova and Placement through the test catalog."""

from keystoneauth1 import session as ks_session
from osc_lib import exceptions as osc_exc

from osc_placement import compute
from osc_placement import shell
from tests.nova import base
from tests.nova import drivers
from tests.nova import scenarios

FLAVOR = {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1}


def deletable_lines(consumer, rp):
    return ('Allocations for consumer UUID %s on Resource Provider %s can '
            'be deleted' % (consumer, rp))


class LeaksTest(base.NovaWorldTestCase, scenarios.ScenarioMixin):
    """The leak scenarios, and nova-manage placement audit on them."""

    def assertHolds(self, rp_uuid, consumers):
        self.assertEqual(set(consumers), self.consumers_on(rp_uuid))

    def test_each_scenario_leaves_its_allocations(self):
        world = self.build_world()

        live = world['live']
        self.assertHolds(live.providers[0], live.servers)

        in_progress = world['in_progress']
        source, dest = in_progress.providers
        self.assertHolds(source, in_progress.migrations)
        self.assertHolds(dest, in_progress.servers)
        self.assertEqual('finished',
                         self.migration_of(in_progress.servers[0])['status'])

        interrupted = world['interrupted']
        source, dest = interrupted.providers
        server = self.api.get_server(interrupted.servers[0])
        self.assertEqual(('ACTIVE', 'int-src'),
                         (server['status'],
                          server['OS-EXT-SRV-ATTR:host']))
        self.assertHolds(source, interrupted.migrations)
        self.assertHolds(dest, interrupted.servers)
        self.assertEqual('pre-migrating', interrupted.extra[
            'migration_status'])

        deleted = world['deleted']
        source, dest = deleted.providers
        self.assertEqual({}, self.consumer_allocations(deleted.servers[0]))
        self.assertEqual({source: FLAVOR},
                         self.consumer_allocations(deleted.migrations[0]))
        self.assertHolds(dest, ())

        evacuated = world['evacuated']
        source, dest = evacuated.providers
        self.assertEqual({source: FLAVOR, dest: FLAVOR},
                         self.consumer_allocations(evacuated.servers[0]))
        self.assertEqual('done',
                         self.migration_of(evacuated.servers[0])['status'])
        # An evacuation's migration holds nothing: the server holds both.
        self.assertEqual({}, self.consumer_allocations(
            evacuated.migrations[0]))

        nested = world['nested']
        source, source_child, dest, dest_child = nested.providers
        self.assertEqual(
            {source: FLAVOR, dest: FLAVOR,
             source_child: {drivers.MAGIC: 1}, dest_child: {drivers.MAGIC: 1}},
            self.consumer_allocations(nested.servers[0]))

        external = world['external']
        self.assertEqual(
            {external.providers[0]: {scenarios.EXTERNAL_CLASS: 3}},
            self.consumer_allocations(external.consumers[0]))

        # Every allocation in the cloud is one of these.
        made = set()
        for name in ('live', 'in_progress', 'interrupted', 'deleted',
                     'evacuated', 'nested', 'external', 'reinstalled'):
            made |= set(world[name].servers + world[name].migrations
                        + world[name].consumers)
        made -= set(deleted.servers + evacuated.migrations
                    + nested.migrations)
        self.assertEqual(made, self.all_consumers())

    def test_reinstalled_compute_leaves_a_stale_provider(self):
        reinstalled = self.make_reinstalled_compute('reinst')
        old_root, child = reinstalled.providers
        new_node = reinstalled.extra['new_node']
        self.assertNotEqual(old_root, new_node)
        providers = self.placement_get('/resource_providers?name=reinst')[
            'resource_providers']
        self.assertEqual([old_root], [rp['uuid'] for rp in providers])
        response = self.placement.get('/resource_providers/%s' % new_node)
        self.assertEqual(404, response.status)
        self.assertIn('Conflicting resource provider name: reinst already '
                      'exists', self.stdlog.logger.output)
        hypervisors = self.admin_api.api_get(
            '/os-hypervisors?hypervisor_hostname_pattern=reinst').body[
                'hypervisors']
        self.assertEqual([new_node], [h['id'] for h in hypervisors])
        self.assertHolds(child, reinstalled.consumers)
        self.assertEqual(
            child, self.placement_get('/resource_providers?in_tree=%s'
                                      % old_root)['resource_providers'][1][
                                          'uuid'])

    def test_nova_manage_audit_judges_the_world(self):
        world = self.build_world()
        interrupted, deleted = world['interrupted'], world['deleted']
        evacuated, nested = world['evacuated'], world['nested']
        found = [
            # The interrupted migration's server, live on its dead
            # source: Nova's audit sees no instance on the destination.
            (interrupted.servers[0], interrupted.providers[1]),
            (deleted.migrations[0], deleted.providers[0]),
            (evacuated.servers[0], evacuated.providers[0]),
            # Only the root's share of the nested server's allocation.
            (nested.servers[0], nested.providers[0]),
        ]

        code, output = self.nova_manage_audit()
        self.assertEqual(3, code, output)
        for consumer, rp in found:
            self.assertIn(deletable_lines(consumer, rp), output)
        self.assertEqual(len(found), output.count('can be deleted'))
        self.assertIn('Processed %d allocations.' % len(found), output)
        # Nova's tool cannot judge what is not on a compute node: the
        # reinstalled host's old provider is only reported as unknown.
        self.assertIn('The compute node for UUID %s can not be found'
                      % world['reinstalled'].providers[0], output)

        code, output = self.nova_manage_audit(delete=True)
        self.assertEqual(4, code, output)
        for consumer, rp in found:
            self.assertNotIn(consumer, self.consumers_on(rp))
        # What Nova's audit leaves: live servers, the migration in
        # progress, the interrupted migration's consumer and the other
        # services' consumers.
        self.assertHolds(interrupted.providers[0], interrupted.migrations)
        self.assertHolds(evacuated.providers[1], evacuated.servers)
        self.assertHolds(world['live'].providers[0], world['live'].servers)
        self.assertHolds(world['external'].providers[0],
                         world['external'].consumers)
        # Nor can it see the rest: the nested server still holds its
        # source child's CUSTOM_MAGIC, and Nova's audit finds nothing more.
        source, source_child, dest, dest_child = nested.providers
        self.assertEqual(
            {source_child: {drivers.MAGIC: 1}, dest: FLAVOR,
             dest_child: {drivers.MAGIC: 1}},
            self.consumer_allocations(nested.servers[0]))
        self.assertEqual(0, self.nova_manage_audit()[0])


class FlavorsTest(base.NovaWorldTestCase, scenarios.ScenarioMixin):

    def test_flavor_extra_specs_and_disabled_host(self):
        made = self.make_flavor_capacity('gold', 'pinned')
        gold, pinned = made.providers
        disabled = self.make_disabled_host('disabled').providers[0]
        self.assertIn('COMPUTE_STATUS_DISABLED', self.placement_get(
            '/resource_providers/%s/traits' % disabled)['traits'])
        self.assertIn(scenarios.GOLD_TRAIT, self.placement_get(
            '/resource_providers/%s/traits' % gold)['traits'])
        self.assertEqual(drivers.PCPU_TOTAL, self.placement_get(
            '/resource_providers/%s/inventories' % pinned)['inventories'][
                'PCPU']['total'])
        flavor = self.api.get_flavor(made.extra['dedicated'])
        self.assertEqual({'hw:cpu_policy': 'dedicated'},
                         flavor['extra_specs'])

        # Nova fits as many world.magic servers as gold has CUSTOM_MAGIC,
        # then answers NoValidHost.
        for n in range(drivers.MAGIC_TOTAL):
            server = self._create_server(
                name='magic-%d' % n, flavor_id=made.extra['magic'],
                networks='none')
            self.assertEqual('gold', server['OS-EXT-SRV-ATTR:host'])
            self.assertEqual(
                {gold: {drivers.MAGIC: 1, 'DISK_GB': 1, 'MEMORY_MB': 256,
                        'VCPU': 1}},
                self.consumer_allocations(server['id']))
        server = self._create_server(
            name='magic-too-many', flavor_id=made.extra['magic'],
            networks='none', expected_state='ERROR')
        self.assertIn('No valid host', server['fault']['message'])


class HarnessTest(base.NovaWorldTestCase, scenarios.ScenarioMixin):
    """Our shell and Nova client run against this world's services."""

    def client_manager(self, admin=True, catalog=None):
        manager = shell.ClientManager({})
        manager.session = ks_session.Session(
            auth=self.auth_plugin(admin, catalog))
        return manager

    def test_commands_reach_placement_and_nova(self):
        live = self.make_live_servers('live1')
        rp = live.providers[0]

        code, providers, err = self.run_json('resource', 'provider',
                                             'list')
        self.assertEqual((0, ''), (code, err))
        self.assertEqual([(rp, 'live1')],
                         [(p['uuid'], p['name']) for p in providers])
        code, allocations, err = self.run_json(
            '--os-placement-api-version', '1.12', 'resource', 'provider',
            'allocation', 'show', live.servers[0])
        self.assertEqual(0, code, err)
        self.assertEqual([rp], [a['resource_provider']
                                for a in allocations])
        code, out, err = self.run_command('resource', 'provider', 'show',
                                          'not-a-provider')
        self.assertEqual(1, code)
        self.assertEqual('', out)
        self.assertIn('No resource provider', err)

        nova = compute.ComputeClient.from_client_manager(
            self.client_manager())
        self.assertEqual(self.compute_url, nova.endpoint)
        self.assertEqual(live.servers,
                         tuple(s['id'] for s in nova.servers()))
        self.assertEqual([rp], [h['id'] for h in nova.hypervisors()])

    def test_nova_refuses_a_member_and_a_catalog_may_lack_nova(self):
        self.make_live_servers('live1')
        member = compute.ComputeClient.from_client_manager(
            self.client_manager(admin=False))
        error = self.assertRaises(osc_exc.CommandError, member.hypervisors)
        self.assertIn('takes an admin of Nova', str(error))

        no_nova = self.client_manager(
            catalog={'placement': self.placement_url})
        error = self.assertRaises(osc_exc.CommandError,
                                  compute.compute_endpoint, no_nova)
        self.assertIn('No compute endpoint in the service catalog',
                      str(error))
