# SPDX-License-Identifier: Apache-2.0
from tests.unit import commands
from tests.unit.commands import url
from tests.unit.commands import UUID1
from tests.unit.commands import UUID2
from tests.unit.commands import UUID3

USAGES_URL = url('/usages')
PROVIDER_USAGES_URL = url('/resource_providers/%s/usages' % UUID1)

BY_TYPE = {'usages': {
    'INSTANCE': {'consumer_count': 2, 'VCPU': 4, 'MEMORY_MB': 2048},
    'MIGRATION': {'consumer_count': 1, 'VCPU': 2},
}}


class TestProviderUsage(commands.CommandTestCase):

    def test_show(self):
        self.transport.get(PROVIDER_USAGES_URL, json={
            'usages': {'VCPU': 2, 'DISK_GB': 0},
            'resource_provider_generation': 3})
        result = self.run_cmd('resource', 'provider', 'usage', 'show',
                              UUID1, '-f', 'json', version='1.0')
        self.assert_ok(result)
        self.assertEqual([{'resource_class': 'VCPU', 'usage': 2},
                          {'resource_class': 'DISK_GB', 'usage': 0}],
                         self.json_out(result))

    def test_same_columns_at_1_38(self):
        self.transport.get(PROVIDER_USAGES_URL,
                           json={'usages': {'VCPU': 2}})
        result = self.run_cmd('resource', 'provider', 'usage', 'show',
                              UUID1, '-f', 'csv', version='1.38')
        self.assert_ok(result)
        self.assertEqual(['"resource_class","usage"', '"VCPU",2'],
                         result.stdout.splitlines())

    def test_unknown_provider(self):
        self.transport.get(PROVIDER_USAGES_URL, **commands.error(
            404, 'No resource provider with uuid %s found' % UUID1))
        result = self.run_cmd('resource', 'provider', 'usage', 'show', UUID1)
        self.assertEqual(1, result.code)
        self.assertEqual('No resource provider with uuid %s found (HTTP 404)'
                         % UUID1, result.stderr.strip())


class TestProjectUsage(commands.CommandTestCase):

    def test_per_class_below_1_38(self):
        self.transport.get(USAGES_URL, json={'usages': {'VCPU': 4,
                                                        'MEMORY_MB': 512}})
        result = self.run_cmd('resource', 'usage', 'show', UUID2,
                              '--user-id', UUID3, '-f', 'json',
                              version='1.37')
        self.assert_ok(result)
        self.assertEqual([('GET', '/usages',
                           {'project_id': [UUID2], 'user_id': [UUID3]},
                           None)], self.sent())
        self.assertEqual([{'resource_class': 'VCPU', 'usage': 4},
                          {'resource_class': 'MEMORY_MB', 'usage': 512}],
                         self.json_out(result))

    def test_needs_1_9(self):
        result = self.run_cmd('resource', 'usage', 'show', UUID2,
                              version='1.8')
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.8; requires at least version 1.9',
                         result.stderr.strip())
        self.assertEqual([], self.sent())

    def test_consumer_types_from_1_38(self):
        self.transport.get(USAGES_URL, json=BY_TYPE)
        result = self.run_cmd('resource', 'usage', 'show', UUID2,
                              '-f', 'json', version='1.38')
        self.assert_ok(result)
        self.assertEqual(
            [{'consumer_type': 'INSTANCE', 'resource_class': 'VCPU',
              'usage': 4, 'consumer_count': 2},
             {'consumer_type': 'INSTANCE', 'resource_class': 'MEMORY_MB',
              'usage': 2048, 'consumer_count': 2},
             {'consumer_type': 'MIGRATION', 'resource_class': 'VCPU',
              'usage': 2, 'consumer_count': 1}],
            self.json_out(result))

    def test_consumer_types_table(self):
        self.transport.get(USAGES_URL, json=BY_TYPE)
        result = self.run_cmd('resource', 'usage', 'show', UUID2)
        self.assert_ok(result)
        self.assertEqual(
            ['+---------------+----------------+-------+----------------+',
             '| consumer_type | resource_class | usage | consumer_count |',
             '+---------------+----------------+-------+----------------+',
             '| INSTANCE      | VCPU           |     4 |              2 |',
             '| INSTANCE      | MEMORY_MB      |  2048 |              2 |',
             '| MIGRATION     | VCPU           |     2 |              1 |',
             '+---------------+----------------+-------+----------------+'],
            result.stdout.splitlines())

    def test_consumer_type_filter(self):
        self.transport.get(USAGES_URL, json={'usages': {
            'all': {'consumer_count': 3, 'VCPU': 6}}})
        result = self.run_cmd('resource', 'usage', 'show', UUID2,
                              '--consumer-type', 'all', '-f', 'value')
        self.assert_ok(result)
        self.assertEqual({'project_id': [UUID2], 'consumer_type': ['all']},
                         self.sent()[0][2])
        self.assertEqual('all VCPU 6 3\n', result.stdout)

    def test_consumer_type_needs_1_38(self):
        result = self.run_cmd('resource', 'usage', 'show', UUID2,
                              '--consumer-type', 'INSTANCE', version='1.37')
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.37; requires at least version 1.38',
                         result.stderr.strip())

    def test_negotiated_version_keeps_upstream_columns(self):
        # Scripts written for upstream (which negotiates at most 1.29)
        # parse two columns; a negotiated 1.39 must not change that.
        self.transport.get(commands.fakes.ROOT,
                           json=commands.fakes.root_document())
        self.transport.get(USAGES_URL, json={'usages': {'VCPU': 2}})
        result = self.run_cmd('resource', 'usage', 'show', UUID1,
                              '-f', 'json', version=None)
        self.assert_ok(result)
        self.assertEqual([{'resource_class': 'VCPU', 'usage': 2}],
                         self.json_out(result))
        self.assertEqual(['placement 1.39', 'placement 1.37'],
                         self.versions())

    def test_negotiated_with_consumer_type_shows_consumer_types(self):
        self.transport.get(commands.fakes.ROOT, status_code=406,
                           json=commands.fakes.not_acceptable('1.38'))
        self.transport.get(USAGES_URL, json=BY_TYPE)
        result = self.run_cmd('resource', 'usage', 'show', UUID1,
                              '--consumer-type', 'INSTANCE',
                              '-f', 'json', version=None)
        self.assert_ok(result)
        self.assertEqual('consumer_type', list(self.json_out(result)[0])[0])
        self.assertEqual(['placement 1.39', 'placement 1.38'],
                         self.versions())
